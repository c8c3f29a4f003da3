extension CompensatingWrites {
    /// Session, version and salt, the count, then per write: table, key, reason, message.
    func encode(into w: inout ByteWriter) {
        w.byte(MessageType.compensatingWrites.rawValue)
        w.varint(session)
        w.varint(serverVersion.version)
        w.varint(serverVersion.salt)
        w.varint(writes.count)
        for write in writes {
            w.string(write.table)
            write.key.encode(into: &w)
            w.byte(write.reason.rawValue)
            w.string(write.message)
        }
    }

    static func decode(_ r: inout ByteReader) throws(WireDecodeError) -> CompensatingWrites {
        let session = try r.uint32("session id")
        let version = ServerVersion(version: try r.int64("server version"), salt: try r.int64("server version salt"))
        let count = try r.count("compensating write count", minimumElementBytes: 4, limit: maxWrites)
        var writes: [CompensatingWrite] = []
        for _ in 0..<count {
            let table = try r.string("compensating write table", limit: ProtocolLimits.maxNameBytes)
            let key = try RowKey.decode(from: &r)
            let reasonByte = try r.byte("compensating write reason")
            // A reason this build does not know is still a compensating write: its message says why.
            let reason = CompensatingWrite.Reason(rawValue: reasonByte) ?? .writeRule
            let message = try r.string("compensating write message", limit: ProtocolLimits.maxActionMessageBytes)
            writes.append(CompensatingWrite(table: table, key: key, reason: reason, message: message))
        }
        return CompensatingWrites(session: session, serverVersion: version, writes: writes)
    }
}

extension SubscriptionChunk {
    /// Session, version and salt, the set's digest (8 bytes, big-endian), last flag, then the
    /// changes (whole-row inserts and deletes).
    func encode(into w: inout ByteWriter) {
        w.byte(MessageType.subscriptionChunk.rawValue)
        w.varint(session)
        w.varint(serverVersion.version)
        w.varint(serverVersion.salt)
        for shift in stride(from: 56, through: 0, by: -8) { w.byte(UInt8(truncatingIfNeeded: setDigest >> UInt64(shift))) }
        w.bool(isLast)
        changes.encode(into: &w)
    }

    static func decode(_ r: inout ByteReader) throws(WireDecodeError) -> SubscriptionChunk {
        let session = try r.uint32("session id")
        let version = ServerVersion(version: try r.int64("server version"), salt: try r.int64("server version salt"))
        var digest: UInt64 = 0
        for byte in try r.raw("subscription set digest", count: 8) { digest = digest << 8 | UInt64(byte) }
        let isLast = try r.bool("last chunk")
        let changes = try ChangeRows.decode(from: &r, allowing: .entering)
        return SubscriptionChunk(session: session, serverVersion: version, setDigest: digest, isLast: isLast, changes: changes)
    }
}
