import Testing
import TetherProtocol

@Suite struct WireCodecTests {
    @Test func everyClientMessageRoundTrips() throws {
        for message in Fixtures.clientMessages {
            #expect(try ClientMessage.decode(message.encoded()) == message)
        }
    }

    @Test func everyServerMessageRoundTrips() throws {
        for message in Fixtures.serverMessages {
            #expect(try ServerMessage.decode(message.encoded()) == message)
        }
    }

    @Test func encodingIsDeterministic() {
        for message in Fixtures.clientMessages { #expect(message.encoded() == message.encoded()) }
    }

    @Test func helloMatchesTheDocumentedBytes() {
        let bytes = ClientMessage.hello(Hello(protocolVersion: 1, software: "tetherd 0.1.0")).encoded()
        #expect(hex(bytes) == "01 54 54 48 52 01 0d 74 65 74 68 65 72 64 20 30 2e 31 2e 30")
    }

    @Test func bindMatchesTheDocumentedBytes() {
        let bind = BindRequest(
            session: 1, partition: "store-17", token: "tok", identity: ClientFileIdentity(id: 5, salt: 300),
            lastServerVersion: ServerVersion(version: 2, salt: 9), schemaVersion: 1)
        #expect(hex(ClientMessage.bind(bind).encoded())
            == "02 01 08 73 74 6f 72 65 2d 31 37 03 74 6f 6b 01 05 ac 02 02 09 01")
    }

    /// Protocol 3: the lineage follows the schema version; without it the bind is protocol 2's.
    @Test func bindWithLineageMatchesTheDocumentedBytesAndRoundTrips() throws {
        let lineage = StoreLineage(
            uploadSalt: 7, integratedSeq: 3, lastSeq: 9, sent: [StoreLineage.SentRange(salt: 6, firstSeq: 4, lastSeq: 9)])
        let bind = BindRequest(
            session: 1, partition: "store-17", token: "tok", identity: ClientFileIdentity(id: 5, salt: 300),
            lastServerVersion: ServerVersion(version: 2, salt: 9), schemaVersion: 1, lineage: lineage)
        let bytes = ClientMessage.bind(bind).encoded()
        #expect(hex(bytes) == "02 01 08 73 74 6f 72 65 2d 31 37 03 74 6f 6b 01 05 ac 02 02 09 01 07 03 09 01 06 04 09")
        #expect(try ClientMessage.decode(bytes) == .bind(bind))
        var older = bind
        older.lineage = nil
        #expect(try ClientMessage.decode(ClientMessage.bind(older).encoded()) == .bind(older))
    }

    @Test func aBadLineageIsRefused() {
        let prefix: [UInt8] = [0x02, 0x01, 0x01, 0x70, 0x01, 0x74, 0x00, 0x00, 0x00, 0x01]
        // Salt 0, a range that ends before it starts, a truncated range, more ranges than allowed.
        for tail: [UInt8] in [[0x00, 0x00, 0x00, 0x00], [0x01, 0x00, 0x00, 0x01, 0x05, 0x09, 0x04], [0x01, 0x00, 0x00, 0x01, 0x05, 0x09],
                              [0x01, 0x00, 0x00, 0x81, 0x08] + [UInt8](repeating: 0x01, count: 3 * 1025)] {
            #expect(throws: WireDecodeError.self) { try ClientMessage.decode(prefix + tail) }
        }
        #expect((try? ClientMessage.decode(prefix + [0x01, 0x00, 0x00, 0x00])) != nil)
    }

    @Test func uploadMatchesTheDocumentedBytes() {
        let upload = Upload(session: 1, changesets: [UploadChangeset(firstSeq: 1, lastSeq: 2, changeset: Changeset([
            .insert("orders", .text("a"), ["total": .real(1.5)]),
            .delete("orders", .integer(-1)),
        ]))])
        #expect(hex(ClientMessage.upload(upload).encoded())
            == "03 01 01 00 01 02 01 06 6f 72 64 65 72 73 01 05 74 6f 74 61 6c 02 00 00 03 01 61 01 00 02 00 00 00 00 00 00 f8 3f 02 00 01 01")
    }

    @Test func errorMatchesTheDocumentedBytes() {
        let error = ErrorMessage(session: 1, error: SyncError(.divergingHistories, "m", hint: "h"))
        #expect(hex(ServerMessage.error(error).encoded())
            == "87 01 01 d3 01 0c 63 6c 69 65 6e 74 5f 72 65 73 65 74 01 6d 01 68")
    }

    @Test func serverMessagesMatchTheDocumentedBytes() {
        #expect(hex(ServerMessage.welcome(Welcome(protocolVersion: 1, software: "tether-server 0.1.0")).encoded())
            == "81 01 13 74 65 74 68 65 72 2d 73 65 72 76 65 72 20 30 2e 31 2e 30")
        let schema = Schema(version: 1, tables: [TableSchema(name: "t", primaryKey: "id", columns: [ColumnSchema(name: "id", type: .integer)])])
        let bound = BindReply(
            session: 1, identity: ClientFileIdentity(id: 5, salt: 300), isNewIdentity: true, stateFollows: true,
            access: .readwrite, latestServerVersion: .none, schema: schema)
        #expect(hex(ServerMessage.bound(bound).encoded()) == "82 01 07 05 ac 02 00 00 00 01 01 01 74 02 69 64 01 02 69 64 00 00")
        let chunk = StateChunk(
            session: 1, serverVersion: ServerVersion(version: 1, salt: 9),
            progress: DownloadProgress(rowsDone: 1, rowsTotal: 1, bytesDone: 8, bytesTotal: 8), isLast: true,
            rows: Changeset([.insert("t", .integer(1), ["a": .text("x")])]))
        #expect(hex(ServerMessage.state(chunk).encoded()) == "83 01 01 09 01 01 08 08 01 01 01 74 01 01 61 01 00 00 01 02 01 00 03 01 78")
        let download = Download(session: 1, latestServerVersion: 5, entries: [
            DownloadEntry(serverVersion: ServerVersion(version: 5, salt: 9), integratedClientSeq: 2, changeset: Changeset()),
        ])
        #expect(hex(ServerMessage.download(download).encoded()) == "84 01 05 01 05 09 02 00 00 00")
        #expect(hex(ServerMessage.unbound(1).encoded()) == "85 01")
        #expect(hex(ServerMessage.pong(7).encoded()) == "86 07")
        #expect(hex(ClientMessage.unbind(1).encoded()) == "04 01")
        #expect(hex(ClientMessage.ping(7).encoded()) == "05 07")
        #expect(hex(ClientMessage.credit(1, messages: 2).encoded()) == "06 01 02")
        let connectionError = ErrorMessage(session: nil, error: SyncError(.wrongProtocolVersion, "v", hint: "h", retryAfterMilliseconds: 1000))
        #expect(hex(ServerMessage.error(connectionError).encoded()) == "87 02 69 05 66 61 74 61 6c 01 76 01 68 e8 07")
    }

    @Test func everyTruncationIsATypedError() {
        for message in Fixtures.clientMessages {
            let bytes = message.encoded()
            for length in 0..<bytes.count {
                #expect(throws: WireDecodeError.self) { try ClientMessage.decode(Array(bytes.prefix(length))) }
            }
        }
        for message in Fixtures.serverMessages {
            let bytes = message.encoded()
            for length in 0..<bytes.count {
                #expect(throws: WireDecodeError.self) { try ServerMessage.decode(Array(bytes.prefix(length))) }
            }
        }
    }

    @Test func unknownTypeIs102() {
        #expect(code { try ClientMessage.decode([0x7F]) } == .unknownMessage)
        #expect(code { try ClientMessage.decode([MessageType.welcome.rawValue]) } == .unknownMessage)
        #expect(code { try ServerMessage.decode([MessageType.hello.rawValue]) } == .unknownMessage)
    }

    @Test func emptyTrailingAndMalformedAre103() {
        #expect(code { try ClientMessage.decode([]) } == .badSyntax)
        #expect(code { try ClientMessage.decode(ClientMessage.ping(1).encoded() + [0]) } == .badSyntax)
        // Invalid UTF-8 in a string.
        #expect(code { try ClientMessage.decode([0x01, 0x54, 0x54, 0x48, 0x52, 0x01, 0x02, 0xC3, 0x28]) } == .badSyntax)
        // A varint longer than 10 bytes.
        #expect(code { try ClientMessage.decode([0x05] + Array(repeating: 0xFF, count: 11) + [0x01]) } == .badSyntax)
        // Wrong hello magic.
        #expect(code { try ClientMessage.decode([0x01, 0x47, 0x45, 0x54, 0x20, 0x01, 0x00]) } == .badSyntax)
        // Boolean byte other than 0 or 1.
        #expect(code { try ClientMessage.decode([0x02, 0x01, 0x00, 0x00, 0x02]) } == .badSyntax)
        // Seq range reversed, and a batch that does not start after afterSeq.
        #expect(code { try ClientMessage.decode([0x03, 0x01, 0x01, 0x00, 0x05, 0x02, 0x00, 0x00, 0x00]) } == .badSyntax)
        #expect(code { try ClientMessage.decode([0x03, 0x01, 0x01, 0x05, 0x05, 0x06, 0x00, 0x00, 0x00]) } == .badSyntax)
        // A credit of nothing, and one above the largest grant.
        #expect(code { try ClientMessage.decode([0x06, 0x01, 0x00]) } == .badSyntax)
        #expect(code { try ClientMessage.decode(ClientMessage.credit(1, messages: ProtocolLimits.maxCreditGrant + 1).encoded()) } == .badSyntax)
    }

    @Test func oversizeIs104() {
        let big = [UInt8](repeating: 0, count: 33)
        #expect(code { try ClientMessage.decode(big, limit: 32) } == .limitsExceeded)
        // A forged string length larger than the field's limit.
        var w = ByteWriter()
        w.byte(MessageType.bind.rawValue)
        w.varint(UInt32(1))
        w.varint(UInt64(ProtocolLimits.maxPartitionBytes + 1))
        #expect(code { try ClientMessage.decode(w.bytes) } == .limitsExceeded)
    }

    @Test func forgedCountsDoNotAllocate() {
        // Upload claiming 2^62 changesets in a 12-byte message: rejected before any allocation.
        var w = ByteWriter()
        w.byte(MessageType.upload.rawValue)
        w.varint(UInt32(1))
        w.varint(UInt64(1) << 40)
        #expect(code { try ClientMessage.decode(w.bytes) } == .badSyntax)
    }

    @Test func unknownActionFallsBackToTheCodesDefault() throws {
        var w = ByteWriter()
        w.byte(MessageType.error.rawValue)
        w.byte(1)
        w.varint(UInt32(3))
        w.varint(211)
        w.string("self_destruct")
        w.string("m")
        w.string("h")
        guard case .error(let message) = try ServerMessage.decode(w.bytes) else { Issue.record("not an error"); return }
        #expect(message.error.action == .clientReset)
    }

    @Test func fieldsAndKeysRoundTripForStorage() throws {
        let fields: [String: FieldValue] = ["a": .null, "b": .integer(Int64.min), "c": .real(-0.0), "d": .text("x"), "e": .blob([])]
        #expect(try FieldValue.decodeFields(FieldValue.encodedFields(fields)) == fields)
        for key in [RowKey.integer(0), .integer(-1), .text(""), .text("ключ")] {
            #expect(try RowKey.decode(key.encoded) == key)
        }
        #expect(try Schema.decode(Fixtures.schema.encoded) == Fixtures.schema)
        #expect(try Changeset.decode(Fixtures.changeset.encoded) == Fixtures.changeset)
    }
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined(separator: " ")
}

/// The protocol error code a decode failure maps to; nil when it decoded, 0 for an untyped error.
func code(_ body: () throws -> some Any) -> SyncErrorCode? {
    do {
        _ = try body()
        return nil
    } catch let error as WireDecodeError {
        return error.code
    } catch {
        return SyncErrorCode(0)
    }
}

/// A server sends stored changesets as they are: the same bytes as the download it would
/// encode from the decoded changesets.
@Test func anEncodedDownloadIsTheDownloadsBytes() throws {
    let download = Fixtures.download()
    let entries = download.entries.map {
        EncodedDownloadEntry(serverVersion: $0.serverVersion, integratedClientSeq: $0.integratedClientSeq, changeset: $0.changeset.encoded)
    }
    let bytes = ServerMessage.encodedDownload(session: download.session, latestServerVersion: download.latestServerVersion, entries: entries)
    #expect(bytes == ServerMessage.download(download).encoded())
    #expect(try ServerMessage.decode(bytes) == .download(download))
    #expect(EncodedDownloadEntry.emptyChangeset == Changeset().encoded)
}
