/// A ``DownloadEntry`` whose changeset is already encoded: what a server sends from the bytes
/// it stored, without decoding and encoding each entry again for every session.
package struct EncodedDownloadEntry: Sendable, Hashable {
    package var serverVersion: ServerVersion
    package var integratedClientSeq: Int64
    /// The changeset's encoding (``Changeset/encoded``).
    package var changeset: [UInt8]

    package init(serverVersion: ServerVersion, integratedClientSeq: Int64, changeset: [UInt8]) {
        self.serverVersion = serverVersion
        self.integratedClientSeq = integratedClientSeq
        self.changeset = changeset
    }

    /// The encoding of an empty changeset (a store's own changes coming back as an acknowledgement).
    package static let emptyChangeset = Changeset().encoded
}

extension ServerMessage {
    /// The bytes of a `download` message (the same as ``encoded()`` of ``download(_:)`` with
    /// these entries decoded), the changesets copied as they are.
    package static func encodedDownload(session: SessionID, latestServerVersion: Int64, entries: [EncodedDownloadEntry]) -> [UInt8] {
        var w = ByteWriter(capacity: 32 + entries.reduce(0) { $0 + $1.changeset.count + 24 })
        w.byte(MessageType.download.rawValue)
        w.varint(session)
        w.varint(latestServerVersion)
        w.varint(entries.count)
        for entry in entries {
            w.varint(entry.serverVersion.version)
            w.varint(entry.serverVersion.salt)
            w.varint(entry.integratedClientSeq)
            w.raw(entry.changeset)
        }
        return w.bytes
    }
}
