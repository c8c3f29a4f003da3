import Foundation
import Testing
import TetherControl
import TetherTestSupport

/// Issue 46, finding 4: `[server] ca_file` was read and ignored, so a server whose certificate
/// a private CA signed could not be reached (CERTIFICATE_VERIFY_FAILED), and the only way
/// round it trusted every public CA too. Now tetherd trusts only `ca_file`'s CAs and can pin
/// the server's public key (`pin_sha256`).
@Suite(.timeLimit(.minutes(5)))
struct PrivateCAEndToEndTests {
    static let openssl = ["/usr/bin/openssl", "/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Two private CAs (`ca-a.pem`, `ca-b.pem`) and a server certificate for localhost signed by
    /// CA A, made with the openssl commands docs/operations.md shows.
    struct PrivateCA {
        let dir: String
        var caA: String { dir + "/ca-a.pem" }
        var caB: String { dir + "/ca-b.pem" }
        var certificate: String { dir + "/server.pem" }
        var key: String { dir + "/server.key" }

        init(in dir: String) async throws {
            self.dir = dir
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for name in ["a", "b"] {
                try await Self.openssl([
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                    "-subj", "/CN=Tether test CA \(name)", "-keyout", dir + "/ca-\(name).key", "-out", dir + "/ca-\(name).pem",
                ])
            }
            try await Self.openssl([
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost",
                "-keyout", dir + "/server.key", "-out", dir + "/server.csr",
            ])
            try Cluster.write("subjectAltName = DNS:localhost, IP:127.0.0.1\nextendedKeyUsage = serverAuth\n", to: dir + "/server.ext")
            try await Self.openssl([
                "x509", "-req", "-in", dir + "/server.csr", "-CA", caA, "-CAkey", dir + "/ca-a.key", "-set_serial", "\(UInt32.random(in: 1...UInt32.max))",
                "-days", "2", "-extfile", dir + "/server.ext", "-out", dir + "/server.pem",
            ])
        }

        /// The pin of the server certificate's key, as docs/operations.md computes it.
        func serverPin() async throws -> String {
            let result = try await ChildProcess.run("/bin/sh", [
                "-c",
                "openssl x509 -in '\(certificate)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
            ])
            try #require(result.status == 0, "\(result)")
            return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        @discardableResult
        static func openssl(_ arguments: [String]) async throws -> ChildProcess.Result {
            let result = try await ChildProcess.run(try #require(PrivateCAEndToEndTests.openssl), arguments)
            try #require(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.standardError)")
            return result
        }
    }

    @Test(.enabled(if: openssl != nil, "needs openssl to make the CAs"))
    func onlyTheConfiguredCAIsTrustedAndThePinIsChecked() async throws {
        let scratch = try TemporaryDirectory(prefix: "tether-private-ca")
        defer { scratch.remove() }
        let ca = try await PrivateCA(in: scratch.appending("pki"))
        let settings = ClusterSettings(serverExtra: "tls_certificate = \"\(ca.certificate)\"\ntls_key = \"\(ca.key)\"")
        try await withCluster(settings) { cluster in
            let url = "wss://localhost:\(cluster.port)/sync"
            let serverPin = try await ca.serverPin()

            // ca_file = the CA that signed the server: it syncs (before: CERTIFICATE_VERIFY_FAILED).
            let a = try cluster.agent("a", partitions: ["p"], url: url, server: "ca_file = \"\(ca.caA)\"")
            try await a.start()
            try await a.waitSynced("p")
            // With the server's key pinned too, it syncs as well, and rows travel.
            let pinned = try cluster.agent(
                "pinned", partitions: ["p"], url: url, server: "ca_file = \"\(ca.caA)\"\npin_sha256 = [\"\(serverPin)\"]")
            try await pinned.start()
            try await pinned.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('tls-1', 'c', 1)")
            try await a.waitSynced("p")
            try await eventually("the row reaches the pinned agent", timeout: .seconds(30)) {
                (try? await pinned.sql("p", "SELECT count(*) FROM orders WHERE id = 'tls-1'"))?.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }

            // A pin that is not the server's key: refused, and the log says which key it saw.
            let wrongPin = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            let wrong = try cluster.agent(
                "wrong-pin", partitions: ["p"], url: url, server: "ca_file = \"\(ca.caA)\"\npin_sha256 = [\"\(wrongPin)\"]")
            try await wrong.start()
            try await eventually("the wrong pin is reported", timeout: .seconds(30)) {
                wrong.log.contains("is not in [server] pin_sha256") && wrong.log.contains(serverPin)
            }
            let mismatch = try await eventually("a pin_mismatch sync-error event", timeout: .seconds(30)) { () -> JSONValue? in
                try await wrong.events("sync-error").first { $0["name"]?.stringValue == "pin_mismatch" }
            }
            #expect(mismatch["action"]?.stringValue == "transient", "\(mismatch)")
            #expect(try await wrong.status("p")?["state"]?.stringValue != "synced")

            // ca_file = another CA: the server's certificate, valid for whoever trusts CA A (as a
            // public CA's certificate is for the system's store), is refused.
            let other = try cluster.agent("other-ca", partitions: ["p"], url: url, server: "ca_file = \"\(ca.caB)\"")
            try await other.start()
            let refused = try await eventually("a tls_failure sync-error event", timeout: .seconds(30)) { () -> JSONValue? in
                try await other.events("sync-error").first { $0["name"]?.stringValue == "tls_failure" }
            }
            #expect(refused["message"]?.stringValue?.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(refused)")
            #expect(try await other.status("p")?["state"]?.stringValue != "synced")

            // --check-config says how the server is trusted.
            let check = try await ChildProcess.run(try BuiltProducts.executable("tetherd"), ["--check-config", "--config", pinned.configPath])
            #expect(check.status == 0, "\(check)")
            #expect(check.standardOutput.contains("server trust: only the 1 CA certificate of \(ca.caA), public key pinned (1 pin), TLS 1.2 or later"),
                    "\(check.standardOutput)")
        }
    }

    @Test(.enabled(if: openssl != nil, "needs openssl to make the CAs"))
    func anUnusableCAFileIsAConfigurationError() async throws {
        let scratch = try TemporaryDirectory(prefix: "tether-private-ca")
        defer { scratch.remove() }
        try Cluster.write("not a certificate\n", to: scratch.appending("ca.pem"))
        try Cluster.write("secret\n", to: scratch.appending("token"), mode: 0o600)
        try Cluster.write(
            ClusterAgent.config(
                dir: scratch.path, url: "wss://localhost:1/sync", partitions: ["p"], extra: "",
                server: "ca_file = \"\(scratch.appending("ca.pem"))\""),
            to: scratch.appending("tetherd.toml"))
        let check = try await ChildProcess.run(
            try BuiltProducts.executable("tetherd"), ["--check-config", "--config", scratch.appending("tetherd.toml")])
        #expect(check.status == 2, "\(check)")
        #expect(check.standardError.contains("server.ca_file: \(scratch.appending("ca.pem")) holds no PEM certificate"), "\(check.standardError)")
    }
}
