import Foundation
import TetherTOML

/// The users of `[[user]]` with the digests of their tokens, read from their token files
/// at start and on reload.
package struct UserDirectory: Sendable {
    package struct Entry: Sendable {
        package var name: String
        var digest: TokenDigest
    }

    package private(set) var entries: [Entry]

    package init(entries: [(name: String, token: String)]) {
        self.entries = entries.map { Entry(name: $0.name, digest: TokenDigest(token: $0.token)) }
    }

    /// Reads every user's token file; unreadable or empty files are problems naming the key.
    package static func load(_ configuration: ServerConfiguration) throws(ConfigError) -> UserDirectory {
        var problems: [ConfigProblem] = []
        var entries: [(name: String, token: String)] = []
        for (i, user) in configuration.users.enumerated() {
            switch TokenFile.read(user.tokenFile) {
            case .success(let token): entries.append((user.name, token))
            case .failure(let error):
                problems.append(ConfigProblem(file: configuration.file, key: "user[\(i)].token_file", line: nil, message: error.description))
            }
        }
        if !problems.isEmpty { throw ConfigError(problems) }
        return UserDirectory(entries: entries)
    }

    /// The user whose token this is. Compares against every user's digest in constant time,
    /// so the time taken does not depend on which user (if any) matched.
    package func authenticate(_ token: String) -> String? {
        authenticate(digest: TokenDigest(token: token))
    }

    package func authenticate(digest: TokenDigest) -> String? {
        var match: String? = nil
        for entry in entries where entry.digest.constantTimeEquals(digest) && match == nil {
            match = entry.name
        }
        return match
    }

    package func contains(user: String) -> Bool { entries.contains { $0.name == user } }
}
