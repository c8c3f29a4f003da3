import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import TetherProtocol

/// The web console at `/console` on the admin listener (docs/server.md, "Web console"):
/// sign-in with the admin token (``ConsoleSignIn``: throttled per peer), then pages for partitions, devices and one device
/// (with its enrollment), enrollment keys and enrolled devices, and the
/// admin actions behind a confirmation. A request without a live session is sent to the
/// sign-in page (GET) or refused (POST, 403); every POST must carry the session's CSRF token
/// and must not come from another site (its `Origin`, or `Sec-Fetch-Site: cross-site`).
struct ConsoleRoutes {
    let control: ServerControl
    let sessions: ConsoleSessions
    /// Cookies get `Secure` when the listener speaks TLS.
    let secure: Bool
    /// The admin listener's admission: the client a trusted proxy named for a connection.
    let admission: ConnectionAdmission

    init(control: ServerControl, sessions: ConsoleSessions, secure: Bool, admission: ConnectionAdmission) {
        self.control = control
        self.sessions = sessions
        self.secure = secure
        self.admission = admission
        signIn = ConsoleSignIn(control: control, sessions: sessions, secure: secure)
    }

    private let signIn: ConsoleSignIn

    func register(on router: Router<AdminRequestContext>) {
        router.get("console") { request, _ in
            ConsoleHTTP.redirect(sessions.session(ConsoleHTTP.sessionID(request)) == nil ? "/console/sign-in" : "/console/partitions")
        }
        router.get("console/style.css") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: ConsoleHTML.stylesheet)))
        }
        router.get("console/sign-in") { _, _ in ConsoleHTTP.html(ConsolePages.signIn()) }
        router.post("console/sign-in") { request, context in try await signIn.handle(request, peer: context.client(admission)) }
        router.post("console/sign-out") { request, _ in
            let form = try await ConsoleHTTP.form(request)
            guard ConsoleHTTP.sameSite(request), let session = sessions.session(ConsoleHTTP.sessionID(request)),
                ConsoleSessions.csrfMatches(session, form["csrf"])
            else { return ConsoleHTTP.refused() }
            sessions.close(ConsoleHTTP.sessionID(request))
            var response = ConsoleHTTP.redirect("/console/sign-in")
            response.headers[values: .setCookie] = ["\(ConsoleSessions.cookieName)=; Path=/console; Max-Age=0; HttpOnly; SameSite=Strict\(secure ? "; Secure" : "")"]
            return response
        }
        router.get("console/partitions") { request, _ in
            try await page(request) { session in
                async let status = control.status()
                async let devices = control.devices(partition: nil, state: nil, staleSeconds: nil)
                return ConsolePages.partitions(try await status, devices: try await devices, csrf: session.csrf)
            }
        }
        router.get("console/partitions/:partition") { request, context in
            let name = try context.parameters.require("partition")
            return try await page(request) { session in
                guard let partition = try await control.status().partitions.first(where: { $0.name == name }), let parsed = PartitionName(name) else {
                    return ConsolePages.outcome(title: "Partition", message: "No partition is named \(name).", error: true, back: "/console/partitions")
                }
                return ConsolePages.partition(
                    partition, snapshots: try await control.storage.admin.snapshots(of: parsed),
                    devices: try await control.devices(partition: name, state: nil, staleSeconds: nil), csrf: session.csrf)
            }
        }
        router.get("console/devices") { request, _ in
            try await page(request) { _ in
                let query = request.uri.queryParameters
                let filter = DeviceFilter(
                    partition: query["partition"].map(String.init).flatMap { $0.isEmpty ? nil : $0 },
                    state: query["state"].map(String.init).flatMap { $0.isEmpty ? nil : $0 },
                    stale: query["stale"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }, sort: query["sort"].map(String.init) ?? "seen")
                let staleSeconds = filter.stale.flatMap(DurationText.seconds)
                if filter.stale != nil, staleSeconds == nil {
                    return ConsolePages.outcome(title: "Devices", message: "“Not seen for” takes a duration such as 90s, 30m, 24h or 7d.", error: true, back: "/console/devices")
                }
                let list = try await control.devices(partition: filter.partition, state: filter.state, staleSeconds: staleSeconds)
                return ConsolePages.devices(list, filter: filter)
            }
        }
        router.get("console/devices/:device") { request, context in
            let id = try context.parameters.require("device")
            return try await page(request) { session in
                let all = try await control.devices(partition: nil, state: nil, staleSeconds: nil)
                let identity = try await control.enrolledDevice(id: id).map { AdminAPI.Identity($0, now: control.now()) }
                return ConsolePages.device(
                    all.devices.filter { $0.deviceID == id }.sorted { $0.partition < $1.partition }, id: id, identity: identity, csrf: session.csrf)
            }
        }
        router.get("console/enrollment") { request, _ in
            try await page(request) { session in
                let after = request.uri.queryParameters["after"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
                async let keys = control.enrollmentKeys()
                async let identities = control.identities(after: after, limit: 200)
                return ConsolePages.enrollment(try await keys, identities: try await identities, after: after, csrf: session.csrf)
            }
        }
        router.post("console/actions/:action") { request, context in
            let action = try context.parameters.require("action")
            let form = try await ConsoleHTTP.form(request)
            guard ConsoleHTTP.sameSite(request), let session = sessions.session(ConsoleHTTP.sessionID(request)),
                ConsoleSessions.csrfMatches(session, form["csrf"])
            else { return ConsoleHTTP.refused() }
            return ConsoleHTTP.html(await ConsoleActions(control: control).run(action, form: form, csrf: session.csrf))
        }
    }

    /// A page for a signed-in request; the sign-in page otherwise.
    private func page(_ request: Request, _ body: (ConsoleSessions.Session) async throws -> String) async throws -> Response {
        guard let session = sessions.session(ConsoleHTTP.sessionID(request)) else { return ConsoleHTTP.redirect("/console/sign-in") }
        do {
            return ConsoleHTTP.html(try await body(session))
        } catch let error as AdminError {
            return ConsoleHTTP.html(ConsolePages.outcome(title: "Error", message: error.message, error: true, back: "/console/partitions"), status: error.status)
        }
    }
}
