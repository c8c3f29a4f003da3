import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// The console's routes in process (HummingbirdTesting's router, no socket): the session
/// middleware and what it lets through, the CSRF and same-site refusals, the session cookie's
/// attributes, and a page with hostile device names. The browser tests (`Tests/Browser`) run
/// the same routes in Chromium.
@Suite struct ConsoleRoutesTests {
    struct Console: Sendable {
        let fixture: IdentityFixture
        let client: any TestClientProtocol
        let sessions: ConsoleSessions

        /// A session opened as the sign-in form would: its cookie header and CSRF token.
        func signedIn() -> (cookie: HTTPFields, csrf: String) {
            let (id, csrf) = sessions.open()
            return ([.cookie: "\(ConsoleSessions.cookieName)=\(id)"], csrf)
        }

        func get(_ uri: String, headers: HTTPFields = [:]) async throws -> (HTTPResponse.Status, HTTPFields, String) {
            try await client.execute(uri: uri, method: .get, headers: headers) { r in
                (r.status, r.headers, String(buffer: r.body))
            }
        }

        func post(_ uri: String, form: String, headers: HTTPFields = [:]) async throws -> (HTTPResponse.Status, HTTPFields, String) {
            var headers = headers
            headers[.contentType] = "application/x-www-form-urlencoded"
            return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: form)) { r in
                (r.status, r.headers, String(buffer: r.body))
            }
        }
    }

    static func withConsole(secure: Bool = false, _ body: @escaping @Sendable (Console) async throws -> Void) async throws {
        try await IdentityFixture.with { f in
            let sessions = ConsoleSessions()
            let router = Router(context: AdminRequestContext.self)
            let admission = ConnectionAdmission(limits: ConnectionLimits(), metrics: ServerMetrics(), logger: Logger(label: "test"))
            ConsoleRoutes(control: f.control, sessions: sessions, secure: secure, admission: admission).register(on: router)
            try await Application(router: router).test(.router) { client in
                try await body(Console(fixture: f, client: client, sessions: sessions))
            }
        }
    }

    @Test func withoutASessionAGetGoesToSignInAndAPostIsRefused() async throws {
        try await Self.withConsole { c in
            for path in ["/console", "/console/partitions", "/console/devices", "/console/devices/x", "/console/enrollment"] {
                let (status, headers, _) = try await c.get(path)
                #expect(status == .seeOther && headers[.location] == "/console/sign-in", "\(path)")
                #expect(headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true, "\(path): the security headers")
            }
            let (status, headers, body) = try await c.post("/console/actions/terminate-sync", form: "csrf=x&confirmed=yes")
            #expect(status == .forbidden && body.contains("Refused") && headers[.cacheControl] == "no-store")
            let (signIn, _, page) = try await c.get("/console/sign-in")
            #expect(signIn == .ok && page.contains("Admin token"))
            let (css, cssHeaders, _) = try await c.get("/console/style.css")
            #expect(css == .ok && cssHeaders[.cacheControl] == "max-age=300")
            #expect(!(try await c.fixture.control.status().server.syncTerminated))
        }
    }

    @Test func aSignedInGetShowsThePage() async throws {
        try await Self.withConsole { c in
            let (cookie, csrf) = c.signedIn()
            let (status, _, page) = try await c.get("/console/partitions", headers: cookie)
            #expect(status == .ok && page.contains("<h1>Partitions</h1>") && page.contains("value=\"\(csrf)\""))
            let (root, headers, _) = try await c.get("/console", headers: cookie)
            #expect(root == .seeOther && headers[.location] == "/console/partitions")
        }
    }

    @Test func aPostWithoutTheSessionsCSRFTokenIsRefused() async throws {
        try await Self.withConsole { c in
            let (cookie, csrf) = c.signedIn()
            for form in ["confirmed=yes", "confirmed=yes&csrf=" + String(repeating: "0", count: 64), "csrf=%ZZ&confirmed=yes"] {
                let (status, _, _) = try await c.post("/console/actions/terminate-sync", form: form, headers: cookie)
                #expect(status == .forbidden, "\(form)")
            }
            #expect(!(try await c.fixture.control.status().server.syncTerminated), "nothing done")
            let (status, _, page) = try await c.post("/console/actions/terminate-sync", form: "csrf=\(csrf)&confirmed=yes", headers: cookie)
            #expect(status == .ok && page.contains("Sync terminated"))
            #expect(try await c.fixture.control.status().server.syncTerminated)
        }
    }

    @Test func aCrossSitePostIsRefusedEvenWithItsToken() async throws {
        try await Self.withConsole { c in
            let (cookie, csrf) = c.signedIn()
            var crossSite = cookie
            crossSite[HTTPField.Name("Sec-Fetch-Site")!] = "cross-site"
            var otherOrigin = cookie
            otherOrigin[HTTPField.Name("Origin")!] = "https://evil.example"
            for headers in [crossSite, otherOrigin] {
                let (status, _, _) = try await c.post("/console/actions/terminate-sync", form: "csrf=\(csrf)&confirmed=yes", headers: headers)
                #expect(status == .forbidden)
            }
            #expect(!(try await c.fixture.control.status().server.syncTerminated))
        }
    }

    @Test func theSessionCookieIsHttpOnlyStrictAndScopedToTheConsole() async throws {
        for secure in [false, true] {
            try await Self.withConsole(secure: secure) { c in
                let (status, headers, _) = try await c.post("/console/sign-in", form: "token=admin")
                #expect(status == .seeOther && headers[.location] == "/console/partitions")
                let cookie = try #require(headers[.setCookie])
                let attributes = Set(cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) })
                #expect(cookie.hasPrefix("\(ConsoleSessions.cookieName)="))
                #expect(attributes.isSuperset(of: ["HttpOnly", "SameSite=Strict", "Path=/console"]))
                #expect(attributes.contains("Secure") == secure)
                // The cookie signs in; signing out ends the session and clears the cookie.
                let id = String(cookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1)[1])
                let signedIn: HTTPFields = [.cookie: "\(ConsoleSessions.cookieName)=\(id)"]
                let (page, _, body) = try await c.get("/console/partitions", headers: signedIn)
                #expect(page == .ok)
                let csrf = try #require(body.range(of: "name=\"csrf\" value=\"").map { String(body[$0.upperBound...].prefix(while: { $0 != "\"" })) })
                let (out, outHeaders, _) = try await c.post("/console/sign-out", form: "csrf=\(csrf)", headers: signedIn)
                #expect(out == .seeOther && outHeaders[.setCookie]?.contains("Max-Age=0") == true)
                let (after, _, _) = try await c.get("/console/partitions", headers: signedIn)
                #expect(after == .seeOther)
            }
        }
    }

    @Test func aWrongTokenIsRefusedAndASignInFromAnotherSiteToo() async throws {
        try await Self.withConsole { c in
            let (wrong, headers, body) = try await c.post("/console/sign-in", form: "token=nope")
            #expect(wrong == .unauthorized && headers[.setCookie] == nil && body.contains("not the admin token"))
            let (cross, crossHeaders, _) = try await c.post(
                "/console/sign-in", form: "token=admin", headers: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])
            #expect(cross == .forbidden && crossHeaders[.setCookie] == nil)
        }
    }

    @Test func hostileDeviceNamesAreShownEscaped() async throws {
        try await Self.withConsole { c in
            let hostile = "<script>alert(1)</script>\"'&"
            try await c.fixture.storage.recordDeviceReports([
                DeviceLedgerEntry(
                    deviceID: "d-1", deviceName: hostile, user: "pos", release: "<b>1</b>", partition: "p", state: "synced",
                    reportedAt: c.fixture.clock.date)
            ])
            let (cookie, _) = c.signedIn()
            for path in ["/console/devices", "/console/devices/d-1"] {
                let (status, _, page) = try await c.get(path, headers: cookie)
                #expect(status == .ok, "\(path)")
                #expect(!page.contains("<script>") && !page.contains("<b>1</b>"), "\(path)")
                #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;"), "\(path)")
            }
        }
    }
}
