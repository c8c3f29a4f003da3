import ArgumentParser
import Foundation
import NIOSSL
import TetherProtocol
import TetherServer
import TetherTOML

/// `tether-server admin [--url URL] [--token-file F] COMMAND [--json]`: the admin client.
/// Without --url and --token-file, they come from the server's config file when it is
/// readable (`admin_listen`, `tls_*`, `admin_token_file`), else `http://127.0.0.1:7801` and
/// `/etc/tether/admin.token`. A config file that is read but does not parse is refused, not
/// taken for defaults that may name another server.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Administer a running server.",
        subcommands: [
            AdminStatus.self, AdminDevices.self, AdminSnapshot.self, AdminRestore.self, AdminHealDone.self, AdminTerminateSync.self, AdminEnableSync.self,
            AdminRecovery.self, AdminSchema.self, AdminGrant.self, AdminRevoke.self, AdminBackup.self, AdminCompact.self,
            AdminEnrollKey.self, AdminDevice.self, AdminAudit.self, AdminAccess.self, AdminAction.self,
        ])

    @Option(name: .long, help: "The server's admin listener (admin_listen) as http://host:port or https://host:port.")
    var url: String?

    @Option(name: .customLong("token-file"), help: "File holding the admin token.")
    var tokenFile: String?

    @Option(name: .long, help: "Server config file to take the URL and admin token file from when they are not given.")
    var config: String = ServerConfiguration.defaultPath

    @Option(name: .customLong("ca-file"), help: "PEM file of the CA that signed the server's TLS certificate.")
    var caFile: String?

    @Flag(name: .long, help: "Print one JSON document instead of text.")
    var json = false

    /// The server's config file, nil when it cannot be read (absent, or not readable by this user).
    private func configuredServer() throws -> ServerConfiguration? {
        // Unreadable: the defaults apply, as documented; the read's error is not an answer.
        guard let text = try? String(contentsOfFile: config, encoding: .utf8) else { return nil }
        do {
            return try ServerConfiguration.parse(toml: text, file: config)
        } catch {
            throw CommandFailure.usage(["--config: \(config) does not parse; pass --url and --token-file, or fix it:"] + error.problems.map(\.description))
        }
    }

    func client() throws -> AdminClient {
        let configured = url != nil && tokenFile != nil ? nil : try configuredServer()
        let baseURL = url ?? configured.map(Self.url(for:)) ?? "http://\(ServerConfiguration.defaultAdminListen)"
        let tokenPath = tokenFile ?? configured?.adminTokenFile ?? "/etc/tether/admin.token"
        let token: String
        switch TokenFile.read(tokenPath) {
        case .success(let value): token = value
        case .failure(let error): throw CommandFailure.usage("--token-file: \(error.description)")
        }
        var tls: TLSConfiguration? = nil
        if let caFile {
            do {
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
                tls = configuration
            } catch {
                throw CommandFailure.usage("--ca-file: cannot load \(caFile): \(error)")
            }
        }
        if let host = CleartextCredentials.exposedHost(in: baseURL) {
            FileHandle.standardError.write(Data(
                "tether-server admin: warning: the admin token goes in clear to \(host) (\(baseURL)): anyone on the path can read it; use https:// (docs/server.md)\n".utf8))
        }
        return AdminClient(baseURL: baseURL, token: token, tlsConfiguration: tls)
    }

    static func url(for configuration: ServerConfiguration) -> String {
        var host = configuration.adminListen.host
        if host == "0.0.0.0" || host == "::" { host = "127.0.0.1" }
        if host.contains(":") { host = "[\(host)]" }
        return "\(configuration.tls == nil ? "http" : "https")://\(host):\(configuration.adminListen.port)"
    }

    /// Runs one admin call, printing its result as text or JSON and mapping failures to exit codes.
    func perform<Result: Encodable>(_ call: (AdminClient) async throws -> Result, text: (Result) -> String) async throws {
        let client = try client()
        do {
            let result = try await call(client)
            if json {
                print(try Self.encode(result))
            } else {
                print(text(result))
            }
        } catch let failure as AdminClient.Failure {
            throw Self.commandFailure(failure, json: json)
        }
    }

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// 400 (a request the server found invalid) is a usage error; the rest are runtime errors.
    /// The server's words (its message and hint, a body that is not JSON) are shown safe
    /// (TerminalText): control characters escaped, so the answer stays on its line.
    static func commandFailure(_ failure: AdminClient.Failure, json: Bool) -> CommandFailure {
        if json, case .rejected(_, _, _, let body) = failure, !body.isEmpty {
            print(Self.jsonBody(body))
        }
        let description = TerminalText.safe(failure.description)
        if case .rejected(let status, _, _, _) = failure, status == 400 {
            return CommandFailure.usage(description)
        }
        return CommandFailure.runtime(description)
    }

    /// An error answer's body for --json: a JSON document written anew by the encoder (which
    /// escapes control characters in its strings), anything else shown safe.
    static func jsonBody(_ body: Data) -> String {
        // A body that is not JSON, or does not write back as JSON, is shown safe below.
        if let document = try? JSONSerialization.jsonObject(with: body),
            let data = try? JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        {
            return String(decoding: data, as: UTF8.self)
        }
        return TerminalText.safe(String(decoding: body, as: UTF8.self))
    }
}
