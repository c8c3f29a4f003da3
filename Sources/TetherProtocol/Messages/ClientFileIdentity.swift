/// The identity the server gave one store: a client file id and its salt (docs/sync-model.md).
package struct ClientFileIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    package var id: Int64
    package var salt: Int64

    package init(id: Int64, salt: Int64) {
        self.id = id
        self.salt = salt
    }

    /// The salt is a secret-ish check value and is not printed.
    package var description: String { "client file \(id)" }
}
