extension ClientMessage {
    /// The message's bytes: type byte, then the body of docs/protocol.md.
    package func encoded() -> [UInt8] {
        var w = ByteWriter()
        switch self {
        case .hello(let hello):
            w.byte(MessageType.hello.rawValue)
            w.raw(MessageType.helloMagic)
            w.varint(hello.protocolVersion)
            w.string(hello.software)
        case .bind(let bind):
            w.byte(MessageType.bind.rawValue)
            w.varint(bind.session)
            w.string(bind.partition)
            w.string(bind.token)
            if let identity = bind.identity {
                w.bool(true)
                w.varint(identity.id)
                w.varint(identity.salt)
            } else {
                w.bool(false)
            }
            w.varint(bind.lastServerVersion.version)
            w.varint(bind.lastServerVersion.salt)
            w.varint(bind.schemaVersion)
            if let lineage = bind.lineage {
                w.varint(lineage.uploadSalt)
                w.varint(lineage.integratedSeq)
                w.varint(lineage.lastSeq)
                w.varint(lineage.sent.count)
                for range in lineage.sent {
                    w.varint(range.salt)
                    w.varint(range.firstSeq)
                    w.varint(range.lastSeq)
                }
                if let ready = bind.readyFile {
                    w.byte(ready.kind)
                    switch ready {
                    case .accept: break
                    case .resume(let digest, let offset):
                        w.raw(digest)
                        w.varint(offset)
                    case .refused(let digest):
                        w.raw(digest)
                    }
                } else if bind.subscriptions != nil {
                    w.byte(0)  // protocol 9: no ready file, subscriptions follow
                }
                bind.subscriptions?.encode(into: &w)
            }
        case .upload(let upload):
            w.byte(MessageType.upload.rawValue)
            w.varint(upload.session)
            w.varint(upload.changesets.count)
            for changeset in upload.changesets {
                w.varint(changeset.afterSeq)
                w.varint(changeset.firstSeq)
                w.varint(changeset.lastSeq)
                changeset.changes.encode(into: &w)
            }
        case .unbind(let session):
            w.byte(MessageType.unbind.rawValue)
            w.varint(session)
        case .ping(let nonce):
            w.byte(MessageType.ping.rawValue)
            w.varint(nonce)
        case .credit(let session, let messages):
            w.byte(MessageType.credit.rawValue)
            w.varint(session)
            w.varint(messages)
        case .heal(let chunk):
            w.byte(MessageType.heal.rawValue)
            w.varint(chunk.session)
            w.varint(chunk.contribution)
            w.varint(chunk.view.version)
            w.varint(chunk.view.salt)
            w.varint(chunk.base)
            w.byte(chunk.isFinal ? 1 : 0)
            chunk.unknown.encode(into: &w)
            chunk.rows.encode(into: &w)
        case .report(let report):
            w.byte(MessageType.report.rawValue)
            report.encode(into: &w)
        case .credentialAccepted(let digest):
            w.byte(MessageType.credentialAccepted.rawValue)
            w.raw(digest)
        case .actionResult(let result):
            w.byte(MessageType.actionResult.rawValue)
            result.encode(into: &w)
        }
        return w.bytes
    }

    /// Decodes one message. Throws ``WireDecodeError`` for anything malformed, truncated,
    /// oversized or unknown; never traps.
    package static func decode(_ bytes: [UInt8], limit: Int = ProtocolLimits.maxMessageBytes) throws(WireDecodeError) -> ClientMessage {
        guard bytes.count <= limit else { throw .messageTooLarge(size: bytes.count, limit: limit) }
        var r = ByteReader(bytes)
        guard !r.isAtEnd else { throw .emptyMessage }
        let typeByte = try r.byte("message type")
        let message: ClientMessage
        switch MessageType(rawValue: typeByte) {
        case .hello:
            for expected in MessageType.helloMagic {
                guard try r.byte("hello magic") == expected else {
                    throw .malformed(field: "hello magic", reason: "not a Tether sync client")
                }
            }
            let version = try r.int("protocol version", in: 0...Int(Int32.max))
            message = .hello(Hello(protocolVersion: version, software: try r.string("software", limit: ProtocolLimits.maxTextBytes)))
        case .bind:
            let session = try r.uint32("session id")
            let partition = try r.string("partition", limit: ProtocolLimits.maxPartitionBytes)
            let token = try r.string("token", limit: ProtocolLimits.maxTokenBytes)
            var identity: ClientFileIdentity? = nil
            if try r.bool("has identity") {
                identity = ClientFileIdentity(id: try r.int64("client file id"), salt: try r.int64("client file salt"))
            }
            let version = ServerVersion(version: try r.int64("server version"), salt: try r.int64("server version salt"))
            let schemaVersion = try r.int("schema version", in: 0...Int(Int32.max))
            // Protocol 3 appends the store's lineage; a protocol-2 bind ends here.
            let lineage = r.isAtEnd ? nil : try Self.decodeLineage(&r)
            // Protocol 5 may append what the client says of ready files.
            let readyFile = r.isAtEnd ? nil : try Self.decodeReadyFileRequest(&r)
            // Protocol 9 may append the subscriptions held and wanted.
            let subscriptions = r.isAtEnd ? nil : try SubscriptionRequest.decode(from: &r)
            message = .bind(BindRequest(
                session: session, partition: partition, token: token, identity: identity,
                lastServerVersion: version, schemaVersion: schemaVersion, lineage: lineage, readyFile: readyFile,
                subscriptions: subscriptions))
        case .upload:
            let session = try r.uint32("session id")
            let count = try r.count("changeset count", minimumElementBytes: 6, limit: Int.max / 6)
            var changesets: [UploadChangeset] = []
            for _ in 0..<count {
                let after = try r.int64("after seq")
                let first = try r.int64("first seq")
                let last = try r.int64("last seq")
                guard after < first, first <= last else {
                    throw .malformed(field: "seq range", reason: "after \(after), \(first)...\(last) is not a range after afterSeq")
                }
                changesets.append(UploadChangeset(
                    afterSeq: after, firstSeq: first, lastSeq: last, changes: try ChangeRows.decode(from: &r, allowing: .any)))
            }
            message = .upload(Upload(session: session, changesets: changesets))
        case .unbind:
            message = .unbind(try r.uint32("session id"))
        case .ping:
            message = .ping(try r.varint("nonce"))
        case .credit:
            let session = try r.uint32("session id")
            message = .credit(session, messages: try r.int("credit", in: 1...ProtocolLimits.maxCreditGrant))
        case .heal:
            message = .heal(try Self.decodeHeal(&r))
        case .report:
            message = .report(try DeviceReport.decode(&r))
        case .credentialAccepted:
            message = .credentialAccepted(digest: try r.raw("credential digest", count: ProtocolLimits.credentialDigestBytes))
        case .actionResult:
            message = .actionResult(try RemoteActionResult.decode(&r))
        default:
            throw .unknownMessageType(typeByte)
        }
        try r.expectEnd()
        return message
    }

    /// A protocol-4 heal chunk after its type byte: only bit 0 of the flags (final) is defined,
    /// unknown keys are deletes, and a view's rows are whole-row inserts or deletes.
    static func decodeHeal(_ r: inout ByteReader) throws(WireDecodeError) -> HealChunk {
        let session = try r.uint32("session id")
        let contribution = try r.varint("contribution")
        let view = ServerVersion(version: try r.int64("view version"), salt: try r.int64("view salt"))
        let base = try r.int64("base version")
        let flags = try r.byte("heal flags")
        guard flags & ~0x01 == 0 else { throw .malformed(field: "heal flags", reason: "unknown flag bits") }
        let unknown = try ChangeRows.decode(from: &r, allowing: .deletesOnly)
        let rows = try ChangeRows.decode(from: &r, allowing: .insertsAndDeletes)
        return HealChunk(
            session: session, contribution: contribution, view: view, base: base, isFinal: flags & 1 != 0, unknown: unknown, rows: rows)
    }

    /// The ready-file section of a protocol-5 bind: a kind, then a digest and an offset as it needs
    /// (kind 0, protocol 9: none, written only when subscriptions follow).
    static func decodeReadyFileRequest(_ r: inout ByteReader) throws(WireDecodeError) -> ReadyFileRequest? {
        switch try r.byte("ready file request") {
        case 0:
            return nil
        case 1:
            return .accept
        case 2:
            let digest = try r.raw("ready file digest", count: StateFileSlice.digestBytes)
            return .resume(digest: digest, offset: try r.int64("ready file offset"))
        case 3:
            return .refused(digest: try r.raw("ready file digest", count: StateFileSlice.digestBytes))
        default:
            throw .malformed(field: "ready file request", reason: "unknown kind")
        }
    }

    /// The lineage section of a protocol-3 bind: salt, integrated seq, last seq, sent ranges.
    static func decodeLineage(_ r: inout ByteReader) throws(WireDecodeError) -> StoreLineage {
        let salt = try r.int64("upload salt")
        guard salt != 0 else { throw .malformed(field: "upload salt", reason: "0 is not a salt") }
        let integrated = try r.int64("integrated seq")
        let last = try r.int64("last seq")
        let count = try r.count("sent range count", minimumElementBytes: 3, limit: ProtocolLimits.maxSentRanges)
        var sent: [StoreLineage.SentRange] = []
        for _ in 0..<count {
            let range = StoreLineage.SentRange(
                salt: try r.int64("sent range salt"), firstSeq: try r.int64("sent range first seq"), lastSeq: try r.int64("sent range last seq"))
            guard range.firstSeq <= range.lastSeq else {
                throw .malformed(field: "sent range", reason: "\(range.firstSeq)...\(range.lastSeq) is not a range")
            }
            sent.append(range)
        }
        return StoreLineage(uploadSalt: salt, integratedSeq: integrated, lastSeq: last, sent: sent)
    }
}
