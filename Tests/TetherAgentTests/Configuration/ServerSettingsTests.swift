import Foundation
import Testing
import TetherAgent
import TetherProtocol
import NIOSSL
import TetherSyncClient
import TetherTOML

/// `[server] ca_file`, `pin_sha256` and `tls_min_version` (issue 46, finding 4).
@Suite struct ServerSettingsTests {
    /// Two self-signed CA certificates (P-256, valid for a century) and the pins openssl
    /// computes for them (`openssl x509 -pubkey -noout | openssl pkey -pubin -outform der |
    /// openssl dgst -sha256 -binary | base64`).
    static let caA = """
        -----BEGIN CERTIFICATE-----
        MIIBjTCCATOgAwIBAgIUY6jeQ0Z0n831WWK7orIeoOLhuowwCgYIKoZIzj0EAwIw
        GzEZMBcGA1UEAwwQVGV0aGVyIHRlc3QgQ0EgYTAgFw0yNjExMjgyMzMxNDZaGA8y
        MTI2MTEwNDIzMzE0NlowGzEZMBcGA1UEAwwQVGV0aGVyIHRlc3QgQ0EgYTBZMBMG
        ByqGSM49AgEGCCqGSM49AwEHA0IABPyue8h3Ngsc6g5mjEf8JyHPUz5ot03b3+XA
        D2Qfey9Pt1lnyHcGiZ59irOOPQ/ASX2+mC4p/vMaM75eo9rOaOWjUzBRMB0GA1Ud
        DgQWBBSnQYXU+WpNLTWZg9bhelfppUzZVTAfBgNVHSMEGDAWgBSnQYXU+WpNLTWZ
        g9bhelfppUzZVTAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIFzy
        1Dxbw49Ktrek8nXMG4eK9DUdpkO3Jkh7GoZNoGNSAiEAv11wuk1BYBZeAxLuBtQq
        0RhEmSiL+UPAxAXVhf7yfFY=
        -----END CERTIFICATE-----
        """
    static let caB = """
        -----BEGIN CERTIFICATE-----
        MIIBjTCCATOgAwIBAgIUInDiR4eA6fOTxEydawTCCgAGAiAwCgYIKoZIzj0EAwIw
        GzEZMBcGA1UEAwwQVGV0aGVyIHRlc3QgQ0EgYjAgFw0yNjExMjgyMzMxNDZaGA8y
        MTI2MTEwNDIzMzE0NlowGzEZMBcGA1UEAwwQVGV0aGVyIHRlc3QgQ0EgYjBZMBMG
        ByqGSM49AgEGCCqGSM49AwEHA0IABCgqLB5Mjb/7+ckYSfffR9IThA2MwexWIMva
        Do/ltV8O7P2XiQjRhNGnjrfij6n53hjF+ySfOuqvZUOPasr3e1mjUzBRMB0GA1Ud
        DgQWBBTXAyFJaxUFja8xsRhAsuPdeFAi5zAfBgNVHSMEGDAWgBTXAyFJaxUFja8x
        sRhAsuPdeFAi5zAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQC7
        +Z54XZq5Rhj9+FSyNhKVia0Ei4Yfhdaqz3TL9iv6XQIgHO70CQuPRuZMo6SqlCMb
        AaOsnT4sTHrxyIhCCpD9YIM=
        -----END CERTIFICATE-----
        """
    static let pinA = "usfnPZ4Lx2V9qc51kqEv9M1FysVtnoaJNk9BbkSHh/U="
    static let pinB = "kwWUKpFv+SOJHQEOf6OuHMRRvDIxuyXIgyqqYjikosk="

    /// A temp dir with a 0600 token file, removed at the end.
    private struct Fixture: ~Copyable {
        let dir: String
        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("tether-trust-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try write("token", "secret\n", mode: 0o600)
        }
        deinit { try? FileManager.default.removeItem(atPath: dir) }

        func write(_ name: String, _ text: String, mode: mode_t = 0o644) throws {
            try text.write(toFile: dir + "/" + name, atomically: false, encoding: .utf8)
            chmod(dir + "/" + name, mode)
        }

        /// A configuration whose `[server]` has `keys` besides url and token_file.
        func parse(_ keys: String, url: String = "wss://sync.example.net/sync") throws(ConfigError) -> AgentConfiguration {
            try AgentConfiguration.parse(text: """
                [server]
                url = "\(url)"
                token_file = "\(dir)/token"
                \(keys)
                [[partition]]
                name = "a"
                """, file: "tetherd.toml")
        }

        func problems(_ keys: String, url: String = "wss://sync.example.net/sync") -> [String] {
            do {
                _ = try parse(keys, url: url)
                return []
            } catch {
                return error.problems.map(\.description)
            }
        }
    }

    @Test func withoutTheKeysTheSystemsCAsAndTLS12() throws {
        let fixture = try Fixture()
        let server = try fixture.parse("").server
        #expect(server.caFile == nil)
        #expect(server.trust == ServerTrust())
        #expect(server.trust.certificateAuthorities == nil, "nil: the system's roots")
        #expect(server.pinnedKeys.isEmpty)
        #expect(server.tlsMinVersion == .tls12)
        #expect(server.trustSummary == nil)
    }

    @Test func caFileIsReadAtLoadAndIsTheOnlyTrust() throws {
        let fixture = try Fixture()
        try fixture.write("ca.pem", Self.caA + "\n" + Self.caB + "\n")
        let server = try fixture.parse(#"ca_file = "\#(fixture.dir)/ca.pem""#).server
        #expect(server.caFile == fixture.dir + "/ca.pem")
        #expect(server.trust.certificateAuthorityCount == 2)
        // The TLS settings trust these two and nothing else: not the system's roots, none added.
        let tls = server.trust.tlsConfiguration
        #expect(tls.trustRoots == .certificates(server.trust.certificateAuthorities ?? []))
        #expect(tls.additionalTrustRoots.isEmpty)
        #expect(tls.certificateVerification == .fullVerification, "the host name is verified as usual")
        #expect(tls.minimumTLSVersion == .tlsv12)
        #expect(server.trustSummary == "server trust: only the 2 CA certificates of \(fixture.dir)/ca.pem, TLS 1.2 or later")
        // Read when loaded: a reload reads the file again, and a changed file is a changed trust.
        try fixture.write("ca.pem", Self.caA + "\n")
        let reloaded = try fixture.parse(#"ca_file = "\#(fixture.dir)/ca.pem""#).server
        #expect(reloaded.trust.certificateAuthorityCount == 1)
        #expect(reloaded != server)
    }

    @Test func aMissingUnreadableOrInvalidCAFileIsAProblemNamingKeyAndFile() throws {
        let fixture = try Fixture()
        try fixture.write("garbage.pem", "not a certificate\n")
        try fixture.write("key-only.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        let cases: [(String, String)] = [
            ("\(fixture.dir)/missing.pem", "does not exist"),
            (fixture.dir, "cannot be read"),
            ("\(fixture.dir)/garbage.pem", "holds no PEM certificate"),
            ("\(fixture.dir)/key-only.pem", "holds no PEM certificate"),
        ]
        for (path, reason) in cases {
            let found = fixture.problems(#"ca_file = "\#(path)""#)
            #expect(found.count == 1, "\(found)")
            #expect(found.first?.hasPrefix("tetherd.toml:4: server.ca_file: \(path) \(reason)") == true, "\(found)")
        }
        #expect(fixture.problems(#"ca_file = "\#(fixture.dir)/missing.pem""#, url: "ws://127.0.0.1:7800/sync")
            == ["tetherd.toml:4: server.ca_file: \(fixture.dir)/missing.pem is set but the server url is not wss://"])
    }

    @Test func pinsAreBase64SHA256DigestsAndMatchOpenSSLs() throws {
        let fixture = try Fixture()
        let server = try fixture.parse(#"pin_sha256 = ["\#(Self.pinA)", "sha256//\#(Self.pinB)", "\#(Self.pinA)"]"#).server
        #expect(server.pinnedKeys.map(\.base64) == [Self.pinA, Self.pinB], "curl's sha256// form is taken; a repeat is dropped")
        #expect(server.trustSummary == "server trust: the system's CAs, public key pinned (2 pins), TLS 1.2 or later")
        // The pin of a certificate is what the openssl pipeline of docs/operations.md prints.
        for (pem, pin) in [(Self.caA, Self.pinA), (Self.caB, Self.pinB)] {
            try fixture.write("one.pem", pem)
            let certificate = try #require(try ServerTrust.certificateAuthorities(pemFile: fixture.dir + "/one.pem").first)
            #expect(try ServerKeyPin(of: certificate).base64 == pin)
        }
        let found = fixture.problems(#"pin_sha256 = ["\#(Self.pinA)", "c2hvcnQ=", "not base64!"]"#)
        #expect(found.count == 2, "\(found)")
        #expect(found.contains { $0.hasPrefix("tetherd.toml:4: server.pin_sha256[1]: \"c2hvcnQ=\" is not the base64 of a SHA-256 digest") })
        #expect(found.contains { $0.contains("server.pin_sha256[2]: \"not base64!\"") })
        #expect(fixture.problems("pin_sha256 = []").first?.contains("server.pin_sha256: lists no pin") == true)
        #expect(fixture.problems(#"pin_sha256 = ["\#(Self.pinA)"]"#, url: "ws://127.0.0.1:7800/sync")
            == ["tetherd.toml:4: server.pin_sha256: pin_sha256 is set but the server url is not wss://"])
    }

    @Test func tlsMinVersionIs12Or13() throws {
        let fixture = try Fixture()
        let server = try fixture.parse(#"tls_min_version = "1.3""#).server
        #expect(server.tlsMinVersion == .tls13)
        #expect(server.trust.tlsConfiguration.minimumTLSVersion == .tlsv13)
        #expect(server.trustSummary == "server trust: the system's CAs, TLS 1.3 or later")
        #expect(fixture.problems(#"tls_min_version = "1.1""#) == [#"tetherd.toml:4: server.tls_min_version: "1.1" is not one of "1.2", "1.3""#])
        #expect(fixture.problems(#"tls_min_version = "1.2""#, url: "ws://127.0.0.1:7800/sync")
            == ["tetherd.toml:4: server.tls_min_version: tls_min_version is set but the server url is not wss://"])
    }
}
