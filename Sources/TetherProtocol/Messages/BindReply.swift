/// The server's answer to an accepted bind.
package struct BindReply: Sendable, Hashable {
    package var session: SessionID
    /// The store's identity: newly assigned when ``isNewIdentity``, else the one it sent.
    package var identity: ClientFileIdentity
    package var isNewIdentity: Bool
    /// When true, ``StateChunk``s follow (a new store or a reset), then downloads.
    package var stateFollows: Bool
    /// With ``stateFollows``: the state comes as slices of a ready file (``StateFileSlice``),
    /// not as rows (protocol 5, only when the bind asked with ``BindRequest/readyFile``).
    package var fileFollows: Bool
    package var access: PartitionAccess
    /// The partition's latest version when the bind was accepted.
    package var latestServerVersion: ServerVersion
    /// The highest local seq of this store the server has integrated (0 for a new identity):
    /// the next upload's `afterSeq`.
    package var integratedClientSeq: Int64
    /// The server's current schema (its `version` is the schema version).
    package var schema: Schema

    package init(
        session: SessionID, identity: ClientFileIdentity, isNewIdentity: Bool, stateFollows: Bool,
        access: PartitionAccess, latestServerVersion: ServerVersion, integratedClientSeq: Int64 = 0, schema: Schema,
        fileFollows: Bool = false
    ) {
        self.fileFollows = fileFollows
        self.session = session
        self.identity = identity
        self.isNewIdentity = isNewIdentity
        self.stateFollows = stateFollows
        self.access = access
        self.latestServerVersion = latestServerVersion
        self.integratedClientSeq = integratedClientSeq
        self.schema = schema
    }
}
