extension ServerMessage {
    /// The message's bytes: type byte, then the body of docs/protocol.md.
    package func encoded() -> [UInt8] {
        var w = ByteWriter()
        switch self {
        case .welcome(let welcome):
            w.byte(MessageType.welcome.rawValue)
            w.varint(welcome.protocolVersion)
            w.string(welcome.software)
        case .bound(let reply):
            w.byte(MessageType.bound.rawValue)
            w.varint(reply.session)
            var flags: UInt8 = 0
            if reply.isNewIdentity { flags |= 1 }
            if reply.stateFollows { flags |= 2 }
            if reply.access == .readwrite { flags |= 4 }
            if reply.fileFollows { flags |= 8 }
            w.byte(flags)
            w.varint(reply.identity.id)
            w.varint(reply.identity.salt)
            w.varint(reply.latestServerVersion.version)
            w.varint(reply.latestServerVersion.salt)
            w.varint(reply.integratedClientSeq)
            reply.schema.encode(into: &w)
        case .state(let chunk):
            switch chunk.content {
            case .rows(let rows):
                Self.encodeStateHeader(chunk, type: .state, into: &w)
                rows.encode(into: &w)
            case .file(let slice):
                Self.encodeStateHeader(chunk, type: slice.messageType, into: &w)
                Self.encodeSliceHeader(slice, count: slice.bytes.count, into: &w)
                w.raw(slice.bytes)
            }
        case .download(let download):
            w.byte(MessageType.download.rawValue)
            w.varint(download.session)
            w.varint(download.latestServerVersion)
            w.varint(download.entries.count)
            for entry in download.entries {
                w.varint(entry.serverVersion.version)
                w.varint(entry.serverVersion.salt)
                w.varint(entry.integratedClientSeq)
                entry.changes.encode(into: &w)
            }
        case .unbound(let session):
            w.byte(MessageType.unbound.rawValue)
            w.varint(session)
        case .pong(let nonce):
            w.byte(MessageType.pong.rawValue)
            w.varint(nonce)
        case .error(let message):
            w.byte(MessageType.error.rawValue)
            var flags: UInt8 = 0
            if message.session != nil { flags |= 1 }
            if message.error.retryAfterMilliseconds != nil { flags |= 2 }
            w.byte(flags)
            if let session = message.session { w.varint(session) }
            w.varint(message.error.code.rawValue)
            w.string(message.error.action.rawValue)
            w.string(message.error.message)
            w.string(message.error.hint)
            if let retry = message.error.retryAfterMilliseconds { w.varint(max(retry, 0)) }
        case .healed(let reply):
            w.byte(MessageType.healed.rawValue)
            w.varint(reply.session)
            w.varint(reply.contribution)
            w.byte(reply.outcome.rawValue)
            w.varint(reply.healedChanges)
            w.string(reply.reason)
        case .credential(let credential):
            w.byte(MessageType.credential.rawValue)
            w.string(credential.text)
        case .compensatingWrites(let writes):
            writes.encode(into: &w)
        case .subscriptionChunk(let chunk):
            chunk.encode(into: &w)
        case .action(let action):
            w.byte(MessageType.action.rawValue)
            action.encode(into: &w)
        }
        return w.bytes
    }

    /// Decodes one message. Throws ``WireDecodeError`` for anything malformed, truncated,
    /// oversized or unknown; never traps.
    package static func decode(_ bytes: [UInt8], limit: Int = ProtocolLimits.maxMessageBytes) throws(WireDecodeError) -> ServerMessage {
        guard bytes.count <= limit else { throw .messageTooLarge(size: bytes.count, limit: limit) }
        var r = ByteReader(bytes)
        guard !r.isAtEnd else { throw .emptyMessage }
        let typeByte = try r.byte("message type")
        let message: ServerMessage
        switch MessageType(rawValue: typeByte) {
        case .welcome:
            let version = try r.int("protocol version", in: 0...Int(Int32.max))
            message = .welcome(Welcome(protocolVersion: version, software: try r.string("software", limit: ProtocolLimits.maxTextBytes)))
        case .bound:
            let session = try r.uint32("session id")
            let flags = try r.byte("bound flags")
            guard flags & ~0x0f == 0 else { throw .malformed(field: "bound flags", reason: "unknown flag bits") }
            guard flags & 8 == 0 || flags & 2 != 0 else { throw .malformed(field: "bound flags", reason: "a file follows without state") }
            let identity = ClientFileIdentity(id: try r.int64("client file id"), salt: try r.int64("client file salt"))
            let latest = ServerVersion(version: try r.int64("server version"), salt: try r.int64("server version salt"))
            let integrated = try r.int64("integrated client seq")
            let schema = try Schema.decode(from: &r)
            message = .bound(BindReply(
                session: session, identity: identity, isNewIdentity: flags & 1 != 0, stateFollows: flags & 2 != 0,
                access: flags & 4 != 0 ? .readwrite : .read, latestServerVersion: latest, integratedClientSeq: integrated,
                schema: schema, fileFollows: flags & 8 != 0))
        case .state:
            let (session, version, progress, isLast) = try Self.decodeStateHeader(&r)
            message = .state(StateChunk(
                session: session, serverVersion: version, progress: progress, isLast: isLast, rows: try ChangeRows.decode(from: &r, allowing: .insertsOnly)))
        case .stateFile, .stateFileDeflated:
            let (session, version, progress, isLast) = try Self.decodeStateHeader(&r)
            let size = try r.int64("file size")
            let offset = try r.int64("file offset")
            let digest = try r.raw("file digest", count: StateFileSlice.digestBytes)
            let encoding: StateFileSlice.Encoding =
                typeByte == MessageType.stateFile.rawValue
                ? .raw : .deflate(fileBytes: try r.int("file bytes inflated", in: 1...ProtocolLimits.maxFileSliceBytes))
            let bytes = try r.lengthPrefixed("file bytes", limit: ProtocolLimits.maxFileSliceBytes)
            let slice = StateFileSlice(fileSize: size, offset: offset, digest: digest, encoding: encoding, bytes: bytes)
            guard offset + Int64(slice.fileBytes) <= size, slice.isLast == isLast else {
                throw .malformed(field: "file slice", reason: "bytes \(offset)+\(slice.fileBytes) of \(size), last \(isLast)")
            }
            message = .state(StateChunk(session: session, serverVersion: version, progress: progress, isLast: isLast, content: .file(slice)))
        case .download:
            let session = try r.uint32("session id")
            let latest = try r.int64("latest server version")
            let count = try r.count("entry count", minimumElementBytes: 6, limit: Int.max / 6)
            var entries: [DownloadEntry] = []
            for _ in 0..<count {
                let version = ServerVersion(version: try r.int64("server version"), salt: try r.int64("server version salt"))
                let seq = try r.int64("integrated client seq")
                entries.append(DownloadEntry(serverVersion: version, integratedClientSeq: seq, changes: try ChangeRows.decode(from: &r, allowing: .any)))
            }
            message = .download(Download(session: session, latestServerVersion: latest, entries: entries))
        case .unbound:
            message = .unbound(try r.uint32("session id"))
        case .pong:
            message = .pong(try r.varint("nonce"))
        case .error:
            let flags = try r.byte("error flags")
            guard flags & ~0x03 == 0 else { throw .malformed(field: "error flags", reason: "unknown flag bits") }
            let session: SessionID? = if flags & 1 != 0 { try r.uint32("session id") } else { nil }
            let code = SyncErrorCode(try r.int("error code", in: 0...Int(Int32.max)))
            let actionName = try r.string("error action", limit: ProtocolLimits.maxNameBytes)
            let text = try r.string("error message", limit: ProtocolLimits.maxTextBytes)
            let hint = try r.string("error hint", limit: ProtocolLimits.maxTextBytes)
            let retry: Int? = if flags & 2 != 0 { try r.int("retry after", in: 0...Int(Int32.max)) } else { nil }
            // An action this build does not know degrades to the code's default (retry for unknown codes).
            let action = ErrorAction(rawValue: actionName) ?? code.defaultAction
            message = .error(ErrorMessage(
                session: session, error: SyncError(code, text, action: action, hint: hint, retryAfterMilliseconds: retry)))
        case .healed:
            let session = try r.uint32("session id")
            let contribution = try r.varint("contribution")
            let outcomeByte = try r.byte("heal outcome")
            guard let outcome = HealReply.Outcome(rawValue: outcomeByte) else {
                throw .malformed(field: "heal outcome", reason: "unknown outcome \(outcomeByte)")
            }
            let healed = try r.int64("healed changes")
            let reason = try r.string("heal reason", limit: ProtocolLimits.maxTextBytes)
            message = .healed(HealReply(session: session, contribution: contribution, outcome: outcome, healedChanges: healed, reason: reason))
        case .credential:
            let text = try r.string("credential", limit: ProtocolLimits.maxTokenBytes)
            guard let credential = DeviceCredential(parsing: text), credential.text == text else {
                throw .malformed(field: "credential", reason: "not a device credential (tdc1.<device id>.<secret>)")
            }
            message = .credential(credential)
        case .action:
            message = .action(try RemoteAction.decode(&r))
        case .compensatingWrites:
            message = .compensatingWrites(try CompensatingWrites.decode(&r))
        case .subscriptionChunk:
            message = .subscriptionChunk(try SubscriptionChunk.decode(&r))
        default:
            throw .unknownMessageType(typeByte)
        }
        try r.expectEnd()
        return message
    }

    /// The fields a `state` and a `stateFile` message share, after the type byte.
    static func decodeStateHeader(
        _ r: inout ByteReader
    ) throws(WireDecodeError) -> (session: SessionID, version: ServerVersion, progress: DownloadProgress, isLast: Bool) {
        let session = try r.uint32("session id")
        let version = ServerVersion(version: try r.int64("server version"), salt: try r.int64("server version salt"))
        let progress = DownloadProgress(
            rowsDone: try r.int64("rows done"), rowsTotal: try r.int64("rows total"),
            bytesDone: try r.int64("bytes done"), bytesTotal: try r.int64("bytes total"))
        return (session, version, progress, try r.bool("last chunk"))
    }

    /// The fields a `state` and a `stateFile` message share, after the type byte, written.
    static func encodeStateHeader(_ chunk: StateChunk, type: MessageType, into w: inout ByteWriter) {
        w.byte(type.rawValue)
        w.varint(chunk.session)
        w.varint(chunk.serverVersion.version)
        w.varint(chunk.serverVersion.salt)
        w.varint(chunk.progress.rowsDone)
        w.varint(chunk.progress.rowsTotal)
        w.varint(chunk.progress.bytesDone)
        w.varint(chunk.progress.bytesTotal)
        w.bool(chunk.isLast)
    }

    /// A file slice's size, offset, digest, its inflated size when deflated, and the length of
    /// the `count` bytes that follow.
    static func encodeSliceHeader(_ slice: StateFileSlice, count: Int, into w: inout ByteWriter) {
        w.varint(slice.fileSize)
        w.varint(slice.offset)
        w.raw(slice.digest)
        if case .deflate(let fileBytes) = slice.encoding { w.varint(fileBytes) }
        w.varint(count)
    }

    /// The head of a `stateFile` or `stateFileDeflated` message (by `slice`'s encoding) whose
    /// `count` bytes the caller appends itself (the server reads them from its file straight
    /// into its send buffer).
    package static func encodedStateFileHead(_ chunk: StateChunk, slice: StateFileSlice, count: Int) -> [UInt8] {
        var w = ByteWriter()
        encodeStateHeader(chunk, type: slice.messageType, into: &w)
        encodeSliceHeader(slice, count: count, into: &w)
        return w.bytes
    }
}

extension StateFileSlice {
    var messageType: MessageType {
        switch encoding {
        case .raw: .stateFile
        case .deflate: .stateFileDeflated
        }
    }
}
