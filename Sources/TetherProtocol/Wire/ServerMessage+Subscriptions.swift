extension CompensatingWrites {
    /// Session, version and salt, the count, then per write: table, key, reason, message.
    func encode(into w: inout ByteWriter) {
        w.byte(MessageType.compensatingWrites.rawValue)
        w.varint(session)
        w.varint(serverVersion.version)
        w.varint(serverVersion.salt)
        w.varint(writes.count)
        for write in writes { write.encode(into: &w) }
    }

    static func decode(_ r: inout ByteReader) throws(WireDecodeError) -> CompensatingWrites {
        let session = try r.uint32("session id")
        let version = ServerVersion(version: try r.int64("server version"), salt: try r.int64("server version salt"))
        let count = try r.count("compensating write count", minimumElementBytes: 4, limit: maxWrites)
        var writes: [CompensatingWrite] = []
        for _ in 0..<count { writes.append(try CompensatingWrite.decode(&r, messageLimit: ProtocolLimits.maxActionMessageBytes)) }
        return CompensatingWrites(session: session, serverVersion: version, writes: writes)
    }
}

extension CompensatingWrite {
    /// Table, key, reason byte, message: in `compensating-writes` and in the server's records.
    func encode(into w: inout ByteWriter) {
        w.string(table)
        key.encode(into: &w)
        w.byte(reason.rawValue)
        w.string(message)
    }

    static func decode(_ r: inout ByteReader, messageLimit: Int) throws(WireDecodeError) -> CompensatingWrite {
        let table = try r.string("compensating write table", limit: ProtocolLimits.maxNameBytes)
        let key = try RowKey.decode(from: &r)
        // A reason this build does not know is still a compensating write: its message says why.
        let reason = Reason(rawValue: try r.byte("compensating write reason")) ?? .writeRule
        let message = try r.string("compensating write message", limit: messageLimit)
        return CompensatingWrite(table: table, key: key, reason: reason, message: message)
    }
}

extension SubscriptionChunk {
    /// Session, version and salt, the set's digest and the scope token (8 bytes each,
    /// big-endian), last flag, then the changes (whole-row inserts and deletes).
    func encode(into w: inout ByteWriter) {
        w.byte(MessageType.subscriptionChunk.rawValue)
        w.varint(session)
        w.varint(serverVersion.version)
        w.varint(serverVersion.salt)
        w.bigEndian(setDigest)
        w.bigEndian(scopeToken)
        w.bool(isLast)
        changes.encode(into: &w)
    }

    static func decode(_ r: inout ByteReader) throws(WireDecodeError) -> SubscriptionChunk {
        let session = try r.uint32("session id")
        let version = ServerVersion(version: try r.int64("server version"), salt: try r.int64("server version salt"))
        let digest = try r.bigEndianUInt64("subscription set digest")
        let token = try r.bigEndianUInt64("scope token")
        let isLast = try r.bool("last chunk")
        let changes = try ChangeRows.decode(from: &r, allowing: .entering)
        return SubscriptionChunk(session: session, serverVersion: version, setDigest: digest, scopeToken: token, isLast: isLast, changes: changes)
    }
}
