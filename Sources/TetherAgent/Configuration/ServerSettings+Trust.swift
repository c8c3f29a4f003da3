import TetherProtocol
import TetherSyncClient
import TetherTOML

extension ServerSettings {
    /// `pin_sha256` and `tls_min_version` of `[server]` (both `wss://` only).
    static func parseTrust(_ table: ConfigTable, url: String?) -> ServerTrust {
        let secure = url.map { $0.hasPrefix("wss://") } ?? true
        var pins: [ServerKeyPin] = []
        if let texts = table.stringArray("pin_sha256") {
            if texts.isEmpty { table.problem("pin_sha256", "lists no pin; remove the key, or name the server's key (docs/operations.md)") }
            for (index, text) in texts.enumerated() {
                if let pin = ServerKeyPin(base64: text) {
                    if !pins.contains(pin) { pins.append(pin) }
                } else {
                    table.problem(
                        "pin_sha256[\(index)]",
                        "\(text.debugDescription) is not the base64 of a SHA-256 digest (44 characters); compute it with openssl as docs/operations.md shows")
                }
            }
            if !secure { table.problem("pin_sha256", "pin_sha256 is set but the server url is not wss://") }
        }
        let minimum = table.enumeration("tls_min_version", TLSMinimumVersion.self)
        if minimum != nil, !secure { table.problem("tls_min_version", "tls_min_version is set but the server url is not wss://") }
        return ServerTrust(pinnedKeys: pins, minimumVersion: minimum ?? .default)
    }
}

extension AgentConfiguration {
    /// Reads `[server] ca_file` into the trust (at start, `--check-config` and every reload):
    /// a file that cannot be read or holds no certificate is a problem at the key.
    mutating func loadCertificateAuthorities(_ parser: ConfigParser) {
        guard let caFile = server.caFile, server.usesTLS else { return }
        do {
            try server.trust.trustOnly(caFile: caFile)
        } catch {
            parser.problem("server.ca_file", "\(error); it must hold the PEM certificate of the CA that signed the server's certificate")
        }
    }
}
