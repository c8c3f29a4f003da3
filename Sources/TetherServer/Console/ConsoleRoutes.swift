import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import TetherProtocol

/// The web console at `/console` on the admin listener (docs/server.md, "Web console"): a
/// route group of its own context (``ConsoleRequestContext``) whose middleware adds the
/// security headers (``ConsoleHeadersMiddleware``) and resolves the session cookie
/// (``ConsoleSessionMiddleware``); sign-in with the admin token (``ConsoleSignIn``: throttled
/// per peer); then, in a group behind ``ConsoleAccessMiddleware`` (no session: GET to the
/// sign-in page, POST 403; every POST same-site with the session's CSRF token), pages for
/// partitions, devices and one device (with its enrollment), enrollment keys and enrolled
/// devices, and the admin actions behind a confirmation.
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
        let console = router.group("console", context: ConsoleRequestContext.self)
            .add(middleware: ConsoleHeadersMiddleware())
            .add(middleware: ConsoleSessionMiddleware(sessions: sessions))
        console.get { _, context in
            ConsoleHTTP.redirect(context.session == nil ? "/console/sign-in" : "/console/partitions")
        }
        console.get("style.css") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: ConsoleHTML.stylesheet)))
        }
        console.get("sign-in") { _, _ in ConsoleHTTP.html(ConsolePages.signIn()) }
        console.post("sign-in") { request, context in try await signIn.handle(request, peer: context.client(admission)) }

        let signedIn = console.group().add(middleware: ConsoleAccessMiddleware())
        signedIn.post("sign-out") { _, context in
            sessions.close(context.sessionID)
            var response = ConsoleHTTP.redirect("/console/sign-in")
            response.setCookie(ConsoleHTTP.sessionCookie(nil, secure: secure))
            return response
        }
        registerPages(on: signedIn)
        signedIn.post("actions/:action") { request, context in
            let action = try context.parameters.require("action")
            let form = try await request.decode(as: ConsoleActionForm.self, context: context)
            return ConsoleHTTP.html(await ConsoleActions(control: control).run(action, form: form, csrf: context.session?.csrf ?? ""))
        }
    }

    private func registerPages(on group: RouterGroup<ConsoleRequestContext>) {
        group.get("partitions") { _, context in
            try await page(context) { session in
                let status = try await control.status()
                var counts: [String: Int] = [:]
                for partition in status.partitions {
                    counts[partition.name] = try await control.countDevices(matching: DeviceLedgerFilter(partition: partition.name))
                }
                return ConsolePages.partitions(status, counts: counts, csrf: session.csrf)
            }
        }
        group.get("partitions/:partition") { request, context in
            let name = try context.parameters.require("partition")
            return try await page(context) { session in
                guard let partition = try await control.status().partitions.first(where: { $0.name == name }), let parsed = PartitionName(name) else {
                    return ConsolePages.outcome(title: "Partition", message: "No partition is named \(name).", error: true, back: "/console/partitions")
                }
                var query = try request.uri.decodeQuery(as: ConsoleDeviceQuery.self, context: context)
                if let problem = query.problem {
                    return ConsolePages.outcome(title: "Partition", message: problem, error: true, back: "/console/partitions/\(ConsoleHTML.segment(name))")
                }
                query.partition = name
                return ConsolePages.partition(
                    partition, snapshots: try await control.storage.admin.snapshots(of: parsed),
                    devices: try await control.devicePage(query.page(now: control.now())), query: query, csrf: session.csrf)
            }
        }
        group.get("devices") { request, context in
            try await page(context) { session in
                let query = try request.uri.decodeQuery(as: ConsoleDeviceQuery.self, context: context)
                if let problem = query.problem {
                    return ConsolePages.outcome(title: "Devices", message: problem, error: true, back: "/console/devices")
                }
                return ConsolePages.devices(try await control.devicePage(query.page(now: control.now())), query: query, csrf: session.csrf)
            }
        }
        group.get("devices/:device") { request, context in
            let id = try context.parameters.require("device")
            return try await page(context) { session in
                let refresh = try request.uri.decodeQuery(as: ConsoleDeviceQuery.self, context: context).refresh
                // Only this device's entries: by its id, every user and partition.
                let entries = try await control.devicePage(
                    DeviceLedgerPageQuery(filter: DeviceLedgerFilter(deviceID: id), sort: .partition, limit: DeviceLedgerPageQuery.maxLimit),
                    counts: false)
                let identity = try await control.enrolledDevice(id: id).map { AdminAPI.Identity($0, now: control.now()) }
                let history = entries.devices.isEmpty ? nil : try await control.deviceHistory(id: id)
                let actions = entries.devices.isEmpty && identity == nil ? nil : try await control.deviceActions(deviceID: id)
                let remote = actions.map {
                    ConsolePages.remoteActions($0, deviceID: id, partitions: Array(Set(entries.devices.map(\.partition))).sorted(), csrf: session.csrf)
                }
                return ConsolePages.device(
                    entries.devices, id: id, identity: identity, history: history, csrf: session.csrf, refresh: refresh, extra: remote ?? "",
                    moreEntries: entries.truncated)
            }
        }
        group.get("remote-actions/:id") { _, context in
            let text = try context.parameters.require("id")
            return try await page(context) { _ in
                guard let id = Int64(text) else {
                    return ConsolePages.outcome(title: "Remote action", message: "No remote action has the id \(text).", error: true, back: "/console/devices")
                }
                return ConsolePages.diagnostics(try await control.deviceAction(id: id))
            }
        }
        group.get("enrollment") { request, context in
            try await page(context) { session in
                let after = request.uri.queryParameters["after"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
                async let keys = control.enrollmentKeys()
                async let identities = control.identities(after: after, limit: 200)
                return ConsolePages.enrollment(try await keys, identities: try await identities, after: after, csrf: session.csrf)
            }
        }
    }

    /// A page for a signed-in request (``ConsoleAccessMiddleware`` let only those through); an
    /// admin error as a page with its status.
    private func page(_ context: ConsoleRequestContext, _ body: (ConsoleSessions.Session) async throws -> HTML) async throws -> Response {
        guard let session = context.session else { return ConsoleHTTP.redirect("/console/sign-in") }
        do {
            return ConsoleHTTP.html(try await body(session))
        } catch let error as AdminError {
            return ConsoleHTTP.html(ConsolePages.outcome(title: "Error", message: error.message, error: true, back: "/console/partitions"), status: error.status)
        }
    }
}
