/// The identity the server gave one store: a client file id and its salt (docs/sync-model.md).
public struct ClientFileIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    public var id: Int64
    public var salt: Int64

    public init(id: Int64, salt: Int64) {
        self.id = id
        self.salt = salt
    }

    /// The salt is a secret-ish check value and is not printed.
    public var description: String { "client file \(id)" }
}
