import Foundation
import Testing
import TetherSyncClient
import TetherProtocol
import TetherTestSupport
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// A renewed certificate (SIGHUP) is served to new connections while a connection opened
/// with the old one goes on syncing.
@Suite struct TLSReloadTests {
    static func makeCertificate(_ dir: String, _ name: String) async throws {
        let made = try await CLIResult.run(LifecycleTests.openssl!, [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost \(name)",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", dir + "/\(name)-key.pem", "-out", dir + "/\(name)-cert.pem",
        ], directory: dir)
        try #require(made.status == 0, "\(made.stderr)")
    }

    static func client(_ port: Int, trusting certificates: [String]) throws -> SyncClientConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try certificates.flatMap { try NIOSSLCertificate.fromPEMFile($0) })
        return SyncClientConfiguration(url: "wss://localhost:\(port)/sync", tlsConfiguration: tls)
    }

    static func install(_ dir: String, _ name: String) throws {
        for part in ["cert", "key"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/\(name)-\(part).pem"))
            try data.write(to: URL(fileURLWithPath: dir + "/\(part).pem"), options: .atomic)
        }
    }

    @Test(.enabled(if: LifecycleTests.openssl != nil, "needs openssl to make test certificates"))
    func renewedCertificateForNewConnectionsOldConnectionGoesOn() async throws {
        let dir = NSTemporaryDirectory() + "tether-tls-reload-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await Self.makeCertificate(dir, "old")
        try await Self.makeCertificate(dir, "new")
        try Self.install(dir, "old")
        try await withServer(extraConfig: "tls_certificate = \"\(dir)/cert.pem\"\ntls_key = \"\(dir)/key.pem\"") { server in
            let port = server.port
            let old = try Self.client(port, trusting: [dir + "/old-cert.pem"])
            let new = try Self.client(port, trusting: [dir + "/new-cert.pem"])
            // Before the renewal only the old certificate is served.
            await #expect(throws: (any Error).self) {
                try await withDeadline(.seconds(30)) {
                    try await SyncConnection.run(new, logger: testLogger) { _ in }
                }
            }
            let version = try await withDeadline(.seconds(60)) {
                try await SyncConnection.run(old, logger: testLogger) { connection in
                    let device = TestDevice()
                    try await device.bind(on: connection)
                    try Self.install(dir, "new")
                    server.signal(SIGHUP)
                    _ = try await eventually("the certificate reload", timeout: .seconds(20)) {
                        server.log.contains("TLS certificate and key reloaded") ? true : nil
                    }
                    // A new connection gets the renewed certificate ...
                    let reply = try await SyncConnection.run(new, logger: testLogger) { fresh in
                        try await TestDevice(partition: "store-17").bind(on: fresh)
                    }
                    #expect(reply.isNewIdentity)
                    // ... and one that trusts only the old certificate is refused ...
                    await #expect(throws: (any Error).self) {
                        try await SyncConnection.run(old, logger: testLogger) { _ in }
                    }
                    // ... while the connection opened before the renewal goes on syncing.
                    device.write(.insert("orders", .text("kept"), ["customer": .text("c"), "total": .real(1)]))
                    try await device.upload()
                    try await device.syncUntilCaughtUp()
                    #expect(!(await connection.isClosed))
                    return device.state.lastServerVersion.version
                }
            }
            #expect(version >= 1)
            // The admin listener (same TLS context) serves the renewed certificate too.
            let status = try await server.runCLI([
                "admin", "--url", "https://127.0.0.1:\(server.adminPort)", "--token-file", server.directory + "/admin.token",
                "--ca-file", dir + "/new-cert.pem", "status", "--json",
            ])
            #expect(status.status == 0, "\(status.stderr)")
        }
    }
}
