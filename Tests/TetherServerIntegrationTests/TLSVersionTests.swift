import Foundation
import NIOSSL
import Testing
import TetherProtocol
import TetherSyncClient
import TetherTestSupport

/// Issue 46: the server accepted TLS 1.0 and 1.1 (NIOSSL's server default). Now it refuses
/// anything older than `tls_min_version` (1.2 unless told).
@Suite struct TLSVersionTests {
    /// A client offering only TLS versions `minimum` ... `maximum`, trusting the test certificate.
    static func client(_ port: Int, certificate: String, minimum: TLSVersion, maximum: TLSVersion) throws -> SyncClientConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificate))
        tls.minimumTLSVersion = minimum
        tls.maximumTLSVersion = maximum
        return SyncClientConfiguration(url: "wss://localhost:\(port)/sync", tlsConfiguration: tls)
    }

    /// Whether a connection offering those versions gets through the handshake and binds.
    static func binds(_ configuration: SyncClientConfiguration) async -> Result<Void, any Error> {
        do {
            try await withDeadline(.seconds(30)) {
                try await SyncConnection.run(configuration, logger: testLogger) { connection in
                    _ = try await TestDevice().bind(on: connection)
                }
            }
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Whether `result` is a failed TLS handshake, reported as such.
    static func isHandshakeFailure(_ result: Result<Void, any Error>) -> Bool {
        guard case .failure(let error) = result else { return false }
        guard case SyncClientError.tlsFailure = error else { return false }
        return true
    }

    @Test(.enabled(if: LifecycleTests.openssl != nil, "needs openssl to make test certificates"))
    func tls11IsRefusedAndTls12AcceptedByDefault() async throws {
        let dir = NSTemporaryDirectory() + "tether-tls-version-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await TLSReloadTests.makeCertificate(dir, "server")
        let certificate = dir + "/server-cert.pem"
        try await withServer(extraConfig: "tls_certificate = \"\(certificate)\"\ntls_key = \"\(dir)/server-key.pem\"") { server in
            let old = try Self.client(server.port, certificate: certificate, minimum: .tlsv1, maximum: .tlsv11)
            let refused = await Self.binds(old)
            #expect(Self.isHandshakeFailure(refused), "a TLS 1.1 client is refused in the handshake: \(refused)")
            #expect("\(refused)".contains("VERSION"), "\(refused)")
            let current = try Self.client(server.port, certificate: certificate, minimum: .tlsv12, maximum: .tlsv12)
            let accepted = await Self.binds(current)
            #expect((try? accepted.get()) != nil, "a TLS 1.2 client is served: \(accepted)")
        }
    }

    @Test(.enabled(if: LifecycleTests.openssl != nil, "needs openssl to make test certificates"))
    func tlsMinVersion13RefusesTls12() async throws {
        let dir = NSTemporaryDirectory() + "tether-tls-version-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await TLSReloadTests.makeCertificate(dir, "server")
        let certificate = dir + "/server-cert.pem"
        try await withServer(
            extraConfig: "tls_certificate = \"\(certificate)\"\ntls_key = \"\(dir)/server-key.pem\"\ntls_min_version = \"1.3\""
        ) { server in
            let tls12 = try Self.client(server.port, certificate: certificate, minimum: .tlsv12, maximum: .tlsv12)
            let refused = await Self.binds(tls12)
            #expect(Self.isHandshakeFailure(refused), "a TLS 1.2 client is refused by a server asking for 1.3: \(refused)")
            let tls13 = try Self.client(server.port, certificate: certificate, minimum: .tlsv13, maximum: .tlsv13)
            #expect((try? await Self.binds(tls13).get()) != nil)
        }
    }
}
