import Foundation
import Testing
import TetherServer
import TetherTestSupport

/// The admin listener (`admin_listen`, issue 46): `/admin` and `/console` only there, with a
/// clear answer on the devices' listener; a budget of its own; the console's sign-in throttled
/// per peer and its form kept small.
@Suite struct AdminListenerTests {
    /// `POST /console/sign-in` with `token` on a connection of its own: the status and the head.
    /// `forwardedFor`: sent from 127.0.0.2 with that `X-Forwarded-For`, as a reverse proxy does.
    static func signIn(_ port: Int, token: String, forwardedFor: String? = nil) throws -> (status: Int, head: String) {
        let socket = try PlainSocket(port: port, sourceAddress: forwardedFor == nil ? nil : "127.0.0.2")
        let body = "token=\(token)"
        let forwarded = forwardedFor.map { "X-Forwarded-For: \($0)\r\n" } ?? ""
        _ = socket.send(
            "POST /console/sign-in HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "\(forwarded)Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        let head = socket.receive(until: "\r\n\r\n")
        return (Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0, head)
    }

    @Test func theDevicesListenerServesNoAdminAndSaysWhere() async throws {
        try await withServer { server in
            let admin = try PlainSocket.get(port: server.port, path: "/admin/status")
            #expect(admin.status == 404)
            let failure = try JSONDecoder().decode(AdminAPI.Failure.self, from: Data(admin.body.utf8))
            #expect(failure.error.hasPrefix("the admin API and console are served on admin_listen ("), "\(failure)")
            #expect(failure.error.hasSuffix("not on the devices' listener; docs/server.md"))
            for path in ["/console", "/console/sign-in", "/admin"] {
                let console = try PlainSocket.get(port: server.port, path: path)
                #expect(console.status == 404 && console.body.contains("served on admin_listen"), "\(path): \(console)")
            }
            // The devices' listener keeps /healthz; /metrics only with public_metrics.
            #expect(try PlainSocket.get(port: server.port, path: "/healthz").status == 200)
            #expect(try PlainSocket.get(port: server.port, path: "/metrics").status == 404)
            // The admin listener serves the console, health and metrics.
            #expect(try PlainSocket.get(port: server.adminPort, path: "/console/sign-in").status == 200)
            #expect(try PlainSocket.get(port: server.adminPort, path: "/healthz").status == 200)
            #expect(try PlainSocket.get(port: server.adminPort, path: "/metrics").body.contains("tether_server_"))
            #expect(try await server.admin.status().server.syncTerminated == false)
            #expect(server.log.contains("admin listening on 127.0.0.1:\(server.adminPort) (http"))

            // The admin client pointed at the devices' listener says where to go instead.
            let wrong = try await server.adminCLI(["status"], url: server.httpURL)
            #expect(wrong.status == 1)
            #expect(wrong.stderr.contains("\(server.httpURL) is the devices' listener: the admin API and console are served on admin_listen"), "\(wrong.stderr)")
            await #expect(throws: AdminClient.Failure.self) {
                try await AdminClient(baseURL: server.httpURL, token: ServerProcess.adminToken).status()
            }

            // Without --url the client takes admin_listen from the config file.
            let config = try String(contentsOfFile: server.configPath, encoding: .utf8)
            let pointed = server.directory + "/client.toml"
            try config.replacingOccurrences(of: "admin_listen = \"127.0.0.1:0\"", with: "admin_listen = \"127.0.0.1:\(server.adminPort)\"")
                .write(toFile: pointed, atomically: true, encoding: .utf8)
            let status = try await server.runCLI(["admin", "--config", pointed, "status"])
            #expect(status.status == 0, "\(status.stderr)")
            #expect(status.stdout.contains("sync protocol"), "\(status.stdout)")
        }
    }

    @Test func aFloodOfTheDevicesListenerDoesNotTouchTheAdminListener() async throws {
        try await withServer(extraConfig: "[limits]\nconnections_per_peer = 3\n") { server in
            // The devices' listener is full for this address ...
            let held = try (0..<4).map { _ in try PlainSocket(port: server.port) }
            _ = try await eventually("one devices' connection refused", timeout: .seconds(10)) { held.contains(where: \.isClosedByPeer) ? true : nil }
            // ... the admin listener has a budget of its own: a connection held there, and the
            // admin API answers on another.
            let adminHeld = try PlainSocket(port: server.adminPort)
            #expect(try await server.admin.status().server.syncTerminated == false)
            #expect(!adminHeld.isClosedByPeer)
            #expect(held.filter(\.isClosedByPeer).count == 1)
        }
    }

    @Test func manyWrongTokensFromOnePeerAreAnswered429AndTheRightOneWorksAfterTheWait() async throws {
        try await withServer { server in
            var statuses: [Int] = []
            var retryAfter: String? = nil
            for _ in 0..<12 {
                let (status, head) = try Self.signIn(server.adminPort, token: "guess-\(statuses.count)")
                statuses.append(status)
                if status == 429 {
                    retryAfter = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("retry-after:") }.map(String.init)
                    break
                }
            }
            #expect(statuses.last == 429, "\(statuses)")
            #expect(statuses.dropLast().allSatisfy { $0 == 401 } && statuses.count <= 8, "\(statuses)")
            #expect(retryAfter?.lowercased() == "retry-after: 1", "\(retryAfter ?? "no Retry-After")")
            // The right token while the peer waits is answered 429 too (not looked at); after the wait it signs in.
            let signedIn = try await eventually("the right token accepted after the wait", timeout: .seconds(15), pollInterval: .milliseconds(200)) {
                let (status, head) = try Self.signIn(server.adminPort, token: ServerProcess.adminToken)
                return status == 429 ? nil : (status, head)
            }
            #expect(signedIn.0 == 303 && signedIn.1.contains("tether_console="), "\(signedIn.1)")
            // Logged with the peer, folded (one line in the first minute), never the token.
            func refusals() -> [Substring] { server.log.split(separator: "\n").filter { $0.contains("console sign-in refused for 127.0.0.1") } }
            #expect(refusals().count == 1, "\(refusals())")
            #expect(server.log.contains("console signed in from 127.0.0.1"))
            // Success cleared the peer: a wrong token is a plain 401 again, logged as a first failure.
            #expect(try Self.signIn(server.adminPort, token: "guess-again").status == 401)
            #expect(refusals().count == 2, "\(refusals())")
            #expect(!server.log.contains("guess-"))
        }
    }

    /// Behind a reverse proxy (`trusted_proxies`), the sign-in throttle counts the client the
    /// proxy names, not the proxy: one client guessing tokens makes no one else wait.
    @Test func behindATrustedProxyWrongTokensAreCountedForTheClientItNames() async throws {
        let config = ConnectionLimitsTests.config("trusted_proxies = [\"127.0.0.2\"]")
        try await withServer(extraConfig: config) { server in
            var statuses: [Int] = []
            for attempt in 0..<12 {
                let status = try Self.signIn(server.adminPort, token: "guess-\(attempt)", forwardedFor: "192.0.2.66").status
                statuses.append(status)
                if status == 429 { break }
            }
            #expect(statuses.last == 429, "\(statuses)")
            // Another client through the same proxy signs in at once; the guesser still waits.
            let other = try Self.signIn(server.adminPort, token: ServerProcess.adminToken, forwardedFor: "198.51.100.5")
            #expect(other.status == 303, "\(other.head)")
            #expect(try Self.signIn(server.adminPort, token: ServerProcess.adminToken, forwardedFor: "192.0.2.66").status == 429)
            #expect(server.log.contains("console sign-in refused for 192.0.2.66"))
            #expect(server.log.contains("console signed in from 198.51.100.5"))
            #expect(!server.log.contains("console sign-in refused for 127.0.0.2"))
        }
    }

    @Test func aLargeSignInFormIsRefusedUnread() async throws {
        try await withServer { server in
            let socket = try PlainSocket(port: server.adminPort)
            // Only the head: the answer comes before any of the announced body is read.
            _ = socket.send(
                "POST /console/sign-in HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: 65000\r\n\r\n")
            let head = socket.receive(until: "\r\n\r\n")
            #expect(head.hasPrefix("HTTP/1.1 413"), "\(head.prefix(200))")
        }
    }
}
