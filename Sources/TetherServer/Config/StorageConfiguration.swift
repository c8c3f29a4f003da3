import Foundation

/// `[storage]` of `tether-server.toml`: where the server keeps its durable state.
///
/// `kind = "sqlite"` (the default) keeps everything in `data_dir/server.sqlite` and allows one
/// server process; `kind = "postgresql"` keeps it in a PostgreSQL database that any number of
/// server instances share (docs/server.md, "PostgreSQL").
package struct StorageConfiguration: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        case sqlite
        case postgresql
    }

    package var kind: Kind
    /// Set when ``kind`` is `.postgresql`.
    package var postgres: PostgresLocation?
    /// PostgreSQL: state downloads an instance reads at once (`max_state_downloads`); more wait.
    package var maxStateDownloads: Int

    package static let defaultMaxStateDownloads = 32
    package static let maxStateDownloadsRange = 1...1000

    package init(kind: Kind = .sqlite, postgres: PostgresLocation? = nil, maxStateDownloads: Int = Self.defaultMaxStateDownloads) {
        self.kind = kind
        self.postgres = postgres
        self.maxStateDownloads = maxStateDownloads
    }

    package static let sqlite = StorageConfiguration()
}

/// A PostgreSQL database named by `url = "postgresql://user@host:port/database?sslmode=…"`,
/// with the password in `password_file` (never in the URL, never logged).
package struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    package enum TLSMode: String, Sendable, Hashable, CaseIterable {
        case disable, prefer, require
    }

    package var host: String
    package var port: Int
    package var user: String
    package var database: String
    package var tls: TLSMode
    package var passwordFile: String?

    package init(host: String, port: Int = 5432, user: String, database: String, tls: TLSMode = .prefer, passwordFile: String? = nil) {
        self.host = host
        self.port = port
        self.user = user
        self.database = database
        self.tls = tls
        self.passwordFile = passwordFile
    }

    /// The URL without any secret, for logs and messages.
    package var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgresql://\(user)@\(shownHost):\(port)/\(database)"
    }

    /// Parses `postgresql://user@host[:port][/database][?sslmode=disable|prefer|require]`
    /// (also `postgres://`); the reason when it is not one.
    package static func parse(url text: String) -> Result<PostgresLocation, URLProblem> {
        let schemes = ["postgresql://", "postgres://"]
        guard let scheme = schemes.first(where: { text.hasPrefix($0) }) else {
            // Not echoed: a mistyped URL may carry a password.
            return .failure(URLProblem("the URL must start with postgresql:// or postgres://"))
        }
        var rest = Substring(text.dropFirst(scheme.count))
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        guard let at = rest.lastIndex(of: "@") else {
            return .failure(URLProblem("the URL names no user (postgresql://USER@HOST:PORT/DATABASE)"))
        }
        let userInfo = rest[..<at]
        var hostPort = rest[rest.index(after: at)...]
        if userInfo.contains(":") {
            return .failure(URLProblem("the URL carries a password: put it in password_file instead"))
        }
        let user = String(userInfo).removingPercentEncoding ?? String(userInfo)
        guard !user.isEmpty else { return .failure(URLProblem("the URL names no user (postgresql://USER@HOST:PORT/DATABASE)")) }
        var port = 5432
        var host: Substring
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { return .failure(URLProblem("unclosed [ in the URL's host")) }
            host = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
            hostPort = hostPort[hostPort.index(after: close)...]
            if hostPort.hasPrefix(":") {
                guard let value = Int(hostPort.dropFirst()), (1...65535).contains(value) else {
                    return .failure(URLProblem("the URL's port must be 1-65535"))
                }
                port = value
            } else if !hostPort.isEmpty {
                return .failure(URLProblem("unexpected \(String(hostPort).debugDescription) after the URL's host"))
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<colon]
            guard let value = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(value) else {
                return .failure(URLProblem("the URL's port must be 1-65535"))
            }
            port = value
        } else {
            host = hostPort
        }
        guard !host.isEmpty, !host.contains(" ") else { return .failure(URLProblem("the URL names no host")) }
        let database = path.isEmpty ? user : (String(path).removingPercentEncoding ?? String(path))
        guard !database.contains("/") else { return .failure(URLProblem("the URL's database name contains /")) }
        var tls = TLSMode.prefer
        for parameter in query.split(separator: "&") where !parameter.isEmpty {
            let parts = parameter.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0] == "sslmode" else {
                return .failure(URLProblem("unknown URL parameter \(String(parameter).debugDescription) (only sslmode is read)"))
            }
            guard let mode = TLSMode(rawValue: parts[1]) else {
                return .failure(URLProblem("sslmode must be disable, prefer or require, not \(parts[1].debugDescription)"))
            }
            tls = mode
        }
        return .success(PostgresLocation(host: String(host), port: port, user: user, database: database, tls: tls))
    }

    package struct URLProblem: Error, Sendable, Hashable, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }
}
