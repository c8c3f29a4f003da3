import Testing
import TetherProtocol

/// The protocol-5 ready-file fields on the wire (docs/protocol.md, "`02` bind", "`82` bound",
/// "`89` state file", "`8a` state file, deflated"): round trips, and strict decoding of everything else.
@Suite struct ReadyFileWireTests {
    static let digest = (0..<32).map { UInt8($0) }
    static let lineage = StoreLineage(uploadSalt: 7, integratedSeq: 0, lastSeq: 0, sent: [])

    static func bind(_ readyFile: ReadyFileRequest?) -> BindRequest {
        BindRequest(session: 1, partition: "p", token: "tok", identity: nil, lineage: lineage, readyFile: readyFile)
    }

    @Test(arguments: [
        ReadyFileRequest.accept, .resume(digest: ReadyFileWireTests.digest, offset: 1 << 20), .refused(digest: ReadyFileWireTests.digest),
    ])
    func aBindCarriesWhatItSaysOfReadyFiles(_ request: ReadyFileRequest) throws {
        let bytes = ClientMessage.bind(Self.bind(request)).encoded()
        #expect(try ClientMessage.decode(bytes) == .bind(Self.bind(request)))
        // A protocol-4 bind (nothing after the lineage) asks for rows.
        #expect(try ClientMessage.decode(ClientMessage.bind(Self.bind(nil)).encoded()) == .bind(Self.bind(nil)))
    }

    @Test func aBindWithAnUnknownKindOrAShortDigestIsRefused() throws {
        let accept = ClientMessage.bind(Self.bind(.accept)).encoded()
        #expect(throws: WireDecodeError.self) { try ClientMessage.decode(Array(accept.dropLast()) + [4]) }
        let resume = ClientMessage.bind(Self.bind(.resume(digest: Self.digest, offset: 5))).encoded()
        #expect(throws: WireDecodeError.self) { try ClientMessage.decode(Array(resume.dropLast(10))) }
        // Protocol 9: a subscriptions section may follow, whose flags have two bits.
        #expect(throws: WireDecodeError.self) { try ClientMessage.decode(accept + [4]) }
    }

    static let schema = Schema(version: 1, tables: [TableSchema(name: "t", primaryKey: "id", columns: [ColumnSchema(name: "id", type: .integer)])])

    @Test func boundSaysAFileFollowsOnlyWithState() throws {
        let reply = BindReply(
            session: 1, identity: ClientFileIdentity(id: 5, salt: 300), isNewIdentity: true, stateFollows: true, access: .readwrite,
            latestServerVersion: ServerVersion(version: 9, salt: 3), schema: Self.schema, fileFollows: true)
        let bytes = ServerMessage.bound(reply).encoded()
        #expect(bytes[2] == 0x0f, "flags: new identity, state, readwrite, file")
        #expect(try ServerMessage.decode(bytes) == .bound(reply))
        var withoutState = bytes
        withoutState[2] = 0x0d
        #expect(throws: WireDecodeError.self) { try ServerMessage.decode(withoutState) }
        var unknownBit = bytes
        unknownBit[2] = 0x1f
        #expect(throws: WireDecodeError.self) { try ServerMessage.decode(unknownBit) }
    }

    static func slice(offset: Int64, bytes: [UInt8], size: Int64, last: Bool) -> ServerMessage {
        .state(StateChunk(
            session: 1, serverVersion: ServerVersion(version: 9, salt: 3),
            progress: DownloadProgress(rowsDone: 0, rowsTotal: 10, bytesDone: offset + Int64(bytes.count), bytesTotal: size),
            isLast: last, content: .file(StateFileSlice(fileSize: size, offset: offset, digest: digest, bytes: bytes))))
    }

    @Test func aStateFileSliceRoundTripsAndItsHeadIsWhatTheServerWritesBeforeTheBytes() throws {
        let message = Self.slice(offset: 4, bytes: [1, 2, 3], size: 7, last: true)
        let bytes = message.encoded()
        #expect(bytes[0] == 0x89)
        #expect(try ServerMessage.decode(bytes) == message)
        guard case .state(let chunk) = message, case .file(let slice) = chunk.content else { return }
        let head = ServerMessage.encodedStateFileHead(chunk, slice: slice, count: 3)
        #expect(head + [1, 2, 3] == bytes, "the server appends the file's bytes to the head it encodes")
        #expect(chunk.byteCount == 3 && chunk.rows.isEmpty)
    }

    @Test func aSliceBeyondItsFileOrWhoseLastFlagDisagreesIsRefused() throws {
        for message in [
            Self.slice(offset: 6, bytes: [1, 2, 3], size: 7, last: true),  // past the end
            Self.slice(offset: 4, bytes: [1, 2, 3], size: 7, last: false),  // ends the file, not last
            Self.slice(offset: 0, bytes: [1, 2, 3], size: 7, last: true),  // last, does not end it
        ] {
            #expect(throws: WireDecodeError.self) { try ServerMessage.decode(message.encoded()) }
        }
    }

    static func deflated(offset: Int64, stream: [UInt8], fileBytes: Int, size: Int64, last: Bool) -> ServerMessage {
        .state(StateChunk(
            session: 1, serverVersion: ServerVersion(version: 9, salt: 3),
            progress: DownloadProgress(rowsDone: 0, rowsTotal: 10, bytesDone: offset + Int64(fileBytes), bytesTotal: size),
            isLast: last,
            content: .file(StateFileSlice(fileSize: size, offset: offset, digest: digest, encoding: .deflate(fileBytes: fileBytes), bytes: stream))))
    }

    @Test func aDeflatedSliceRoundTripsAndCountsTheFileBytesItHolds() throws {
        let message = Self.deflated(offset: 4, stream: [9, 9], fileBytes: 3, size: 7, last: true)
        let bytes = message.encoded()
        #expect(bytes[0] == 0x8a)
        #expect(try ServerMessage.decode(bytes) == message)
        guard case .state(let chunk) = message, case .file(let slice) = chunk.content else { return }
        #expect(ServerMessage.encodedStateFileHead(chunk, slice: slice, count: 2) + [9, 9] == bytes)
        #expect(chunk.byteCount == 3 && slice.fileBytes == 3 && slice.isLast)
    }

    @Test func aDeflatedSliceThatWouldInflatePastItsFileOrPastTheLimitIsRefused() throws {
        for message in [
            Self.deflated(offset: 6, stream: [1], fileBytes: 3, size: 7, last: true),  // past the end
            Self.deflated(offset: 4, stream: [1], fileBytes: 3, size: 7, last: false),  // ends the file, not last
            Self.deflated(offset: 0, stream: [1], fileBytes: ProtocolLimits.maxFileSliceBytes + 1, size: 1 << 30, last: false),
        ] {
            #expect(throws: WireDecodeError.self) { try ServerMessage.decode(message.encoded()) }
        }
        var empty = Self.deflated(offset: 0, stream: [1], fileBytes: 1, size: 7, last: false).encoded()
        let at = empty.count - 3  // the inflated size, before the stream's length and byte
        #expect(empty[at] == 1)
        empty[at] = 0
        #expect(throws: WireDecodeError.self) { try ServerMessage.decode(empty) }
    }

    @Test func aDigestSpelledInHexReadsBackAndAnythingElseIsNone() {
        let text = StateFileSlice.hex(Self.digest)
        #expect(text == "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        #expect(StateFileSlice.digest(hex: text) == Self.digest)
        #expect(StateFileSlice.digest(hex: String(text.dropLast(2))) == nil, "too short")
        #expect(StateFileSlice.digest(hex: String(text.dropLast(2)) + "zz") == nil, "not hex: never a shorter digest")
    }
}
