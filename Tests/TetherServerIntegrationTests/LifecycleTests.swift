import Foundation
import Testing
import TetherSyncClient
import TetherProtocol
import TetherServer
import TetherTestSupport
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// Signals: SIGHUP reloads users, tokens and grants; SIGTERM shuts down gracefully. And TLS.
@Suite struct LifecycleTests {
    @Test func sighupReloadsTokensAndPushes203() async throws {
        try await withServer { server in
            try await withConnection(server) { connection in
                let device = TestDevice(partition: "catalog-eu")
                try await device.bind(on: connection)
                try "a-new-token\n".write(toFile: server.directory + "/users/pos-17.token", atomically: true, encoding: .utf8)
                chmod(server.directory + "/users/pos-17.token", 0o600)
                server.signal(SIGHUP)
                let error = try await device.nextError()
                #expect(error.code == .badUserAuthentication)
                #expect(error.action == .reauth)
                // The new token works.
                let again = TestDevice(partition: "catalog-eu", token: "a-new-token")
                try await again.bind(on: connection, session: 2)
            }
            #expect(server.log.contains("configuration reloaded"))
            #expect(!server.log.contains("a-new-token"))
        }
    }

    @Test func sighupWithABrokenConfigKeepsTheRunningOne() async throws {
        try await withServer { server in
            let original = try String(contentsOfFile: server.configPath, encoding: .utf8)
            try (original + "\nbogus = 1\n").write(toFile: server.configPath, atomically: true, encoding: .utf8)
            server.signal(SIGHUP)
            _ = try await eventually("reload refusal to be logged", timeout: .seconds(10)) { server.log.contains("reload refused") ? true : nil }
            let reply = try await withConnection(server) { connection in
                try await TestDevice().bind(on: connection)
            }
            #expect(reply.isNewIdentity)
        }
    }

    @Test func sigtermShutsDownGracefully() async throws {
        try await withServer { server in
            let process = try #require(server.process)
            let disconnected = try await withConnection(server) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                device.write(.insert("orders", .text("t"), ["customer": .text("c"), "total": .real(1)]))
                try await device.upload()
                try await device.syncUntilCaughtUp()
                server.signal(SIGTERM)
                while true {
                    if case .disconnected = try await device.nextEvent() { return true }
                }
            }
            #expect(disconnected)
            _ = try await eventually("server to exit", timeout: .seconds(20)) { process.isRunning ? nil : true }
            #expect(process.terminationStatus == 0)
            #expect(server.log.contains("tether-server stopped"))
            try await server.start()
            #expect(try await server.admin.status().partitions.first?.serverVersion == 1)
        }
    }

    static let openssl = ["/usr/bin/openssl", "/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: openssl != nil, "needs openssl to make a test certificate"))
    func tlsServesSyncAndAdmin() async throws {
        let dir = NSTemporaryDirectory() + "tether-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let made = try await CLIResult.run(Self.openssl!, [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem",
        ], directory: dir)
        try #require(made.status == 0, "\(made.stderr)")
        try await withServer(extraConfig: "tls_certificate = \"\(dir)/cert.pem\"\ntls_key = \"\(dir)/key.pem\"") { server in
            #expect(server.log.contains("(https"))
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(dir + "/cert.pem"))
            // TLS needs a host name in the URL (SNI cannot carry an IP address).
            let configuration = SyncClientConfiguration(url: "wss://localhost:\(server.port)/sync", tlsConfiguration: tls)
            let reply = try await withDeadline(.seconds(30)) {
                try await SyncConnection.run(configuration, logger: testLogger) { connection in
                    try await TestDevice().bind(on: connection)
                }
            }
            #expect(reply.isNewIdentity)
            let status = try await server.runCLI([
                "admin", "--url", "https://127.0.0.1:\(server.adminPort)", "--token-file", server.directory + "/admin.token",
                "--ca-file", dir + "/cert.pem", "status",
            ])
            #expect(status.status == 0, "\(status.stderr)")
        }
    }
}
