import TetherProtocol
import TetherSyncClient

/// The `[server]` table.
package struct ServerSettings: Sendable, Hashable {
    /// `ws://` or `wss://` URL of the server's `/sync` endpoint.
    package var url: String
    package var tokenFile: String
    /// `enrollment_key_file`: the file holding an enrollment key (`tek1.…`). When set, the
    /// agent enrolls itself (`POST /enroll`) while `token_file` is missing or empty, or holds
    /// the credential of another device (a clone), and writes the credential it receives to
    /// `token_file`. nil: the token is installed by hand or with `tetherctl enroll`.
    package var enrollmentKeyFile: String?
    /// `ca_file`: the PEM file of the only CAs a `wss://` server's chain may lead to; nil: the
    /// system's CAs.
    package var caFile: String?
    /// How the server is trusted: `pin_sha256`, `tls_min_version`, and `ca_file`'s certificates
    /// as read when the configuration was loaded (at start and at every reload; a changed file
    /// is read again at the next reload, and a changed trust reconnects).
    package var trust: ServerTrust

    package init(
        url: String, tokenFile: String, caFile: String? = nil, trust: ServerTrust = ServerTrust(), enrollmentKeyFile: String? = nil
    ) {
        self.url = url
        self.tokenFile = tokenFile
        self.enrollmentKeyFile = enrollmentKeyFile
        self.caFile = caFile
        self.trust = trust
    }

    package var usesTLS: Bool { url.hasPrefix("wss://") }

    /// `pin_sha256`.
    package var pinnedKeys: [ServerKeyPin] { trust.pinnedKeys }
    /// `tls_min_version`.
    package var tlsMinVersion: TLSMinimumVersion { trust.minimumVersion }

    /// How the agent's connections are made.
    func clientConfiguration(software: String) -> SyncClientConfiguration {
        SyncClientConfiguration(url: url, trust: trust, software: software)
    }

    /// One line on how a `wss://` server is trusted, when it is not the system's way
    /// (`tetherd --check-config` prints it); nil otherwise.
    package var trustSummary: String? {
        guard usesTLS, caFile != nil || !trust.pinnedKeys.isEmpty || trust.minimumVersion != .default else { return nil }
        var parts: [String] = []
        if let caFile {
            let count = trust.certificateAuthorityCount ?? 0
            parts.append("only the \(count) CA certificate\(count == 1 ? "" : "s") of \(caFile)")
        } else {
            parts.append("the system's CAs")
        }
        if !trust.pinnedKeys.isEmpty {
            parts.append("public key pinned (\(trust.pinnedKeys.count) pin\(trust.pinnedKeys.count == 1 ? "" : "s"))")
        }
        parts.append("\(trust.minimumVersion) or later")
        return "server trust: " + parts.joined(separator: ", ")
    }
}
