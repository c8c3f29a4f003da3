/// What the server keeps with a history entry whose upload had compensating writes: the
/// notices and the changes that revert them on the uploading store (the server's row as a
/// whole-row insert, or a removal). The entry's own changes are the rest of the upload; a
/// session of the uploading store receives the reverts in place of the empty acknowledgement.
package struct CompensationRecord: Sendable, Hashable {
    package var writes: [CompensatingWrite]
    package var reverts: Changeset

    package init(writes: [CompensatingWrite], reverts: Changeset) {
        self.writes = writes
        self.reverts = reverts
    }

    /// The notices (count, then table, key, reason, message each), then the reverts' changeset.
    package var encoded: [UInt8] {
        var w = ByteWriter()
        w.varint(writes.count)
        for write in writes { write.encode(into: &w) }
        reverts.encode(into: &w)
        return w.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(WireDecodeError) -> CompensationRecord {
        var r = ByteReader(bytes)
        let count = try r.count("compensating write count", minimumElementBytes: 4, limit: Int(Int32.max))
        var writes: [CompensatingWrite] = []
        for _ in 0..<count { writes.append(try CompensatingWrite.decode(&r, messageLimit: ProtocolLimits.maxTextBytes)) }
        let reverts = try ChangeRows.decode(from: &r, allowing: .entering).changeset
        try r.expectEnd()
        return CompensationRecord(writes: writes, reverts: reverts)
    }
}
