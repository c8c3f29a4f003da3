import Foundation
import NIOSSL
import TetherProtocol

/// Which servers a sync client trusts: the certificate authorities its chain must lead to
/// (only these, when given; the system's otherwise), the public keys the server's certificate
/// must carry (none: any, once the chain verifies), and the oldest TLS version offered. The
/// host name is verified as usual in every case.
///
/// tetherd builds it from `[server] ca_file`, `pin_sha256` and `tls_min_version` at start and at
/// every reload (docs/configuration.md); ``SyncClientConfiguration/init(url:trust:software:keepAlive:sourceAddress:)``
/// turns it into the connection's TLS settings.
package struct ServerTrust: Sendable, Hashable {
    /// The only roots a server's chain may lead to; nil: the system's.
    package var certificateAuthorities: [NIOSSLCertificate]?
    /// The server's certificate must carry one of these keys (checked after the chain verified).
    package var pinnedKeys: [ServerKeyPin]
    package var minimumVersion: TLSMinimumVersion

    package init(certificateAuthorities: [NIOSSLCertificate]? = nil, pinnedKeys: [ServerKeyPin] = [], minimumVersion: TLSMinimumVersion = .default) {
        self.certificateAuthorities = certificateAuthorities
        self.pinnedKeys = pinnedKeys
        self.minimumVersion = minimumVersion
    }

    /// The client TLS settings: full verification (chain and host name), the given roots
    /// instead of the system's — never in addition to them — and the minimum version.
    package var tlsConfiguration: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        if let certificateAuthorities { configuration.trustRoots = .certificates(certificateAuthorities) }
        configuration.additionalTrustRoots = []
        configuration.minimumTLSVersion = minimumVersion.nioVersion
        return configuration
    }

    /// Trusts only the certificates of the PEM file `path` (``certificateAuthorities(pemFile:)``).
    package mutating func trustOnly(caFile path: String) throws(ServerTrustError) {
        certificateAuthorities = try Self.certificateAuthorities(pemFile: path)
    }

    /// How many certificates the roots hold (nil: the system's).
    package var certificateAuthorityCount: Int? { certificateAuthorities?.count }

    /// The certificates of a PEM file (a CA bundle may hold several). Throws when the file
    /// cannot be read or holds no certificate.
    package static func certificateAuthorities(pemFile path: String) throws(ServerTrustError) -> [NIOSSLCertificate] {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read by this user" : "does not exist"
            throw .unreadable(path: path, reason: reason)
        }
        // NIOSSL throws for a file without a certificate block, and may return none.
        guard let certificates = try? NIOSSLCertificate.fromPEMBytes(bytes), !certificates.isEmpty else {
            throw .invalid(path: path, reason: "holds no PEM certificate (-----BEGIN CERTIFICATE-----) that can be read")
        }
        return certificates
    }
}

/// Why a CA file cannot be used.
package enum ServerTrustError: Error, Sendable, Hashable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case invalid(path: String, reason: String)

    package var description: String {
        switch self {
        case .unreadable(let path, let reason), .invalid(let path, let reason): "\(path) \(reason)"
        }
    }
}

extension TLSMinimumVersion {
    /// NIOSSL's name of the version.
    var nioVersion: TLSVersion {
        switch self {
        case .tls12: .tlsv12
        case .tls13: .tlsv13
        }
    }
}
