import TetherTestSupport
import TetherProtocol

/// Sample values for codec and state machine tests.
enum Fixtures {
    static let schema = Schema(version: 3, tables: [
        TableSchema(name: "orders", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .text),
            ColumnSchema(name: "customer", type: .text),
            ColumnSchema(name: "total", type: .real),
            ColumnSchema(name: "note", type: .text, nullable: true),
            ColumnSchema(name: "paid", type: .boolean),
        ]),
        TableSchema(name: "items", primaryKey: "n", columns: [
            ColumnSchema(name: "n", type: .integer),
            ColumnSchema(name: "image", type: .blob, nullable: true),
        ]),
    ])

    static let changeset = Changeset([
        .insert("orders", .text("o-1"), ["customer": .text("Ada"), "total": .real(12.5), "note": .null, "paid": .integer(1)]),
        .update("orders", .text("o-1"), ["total": .real(-3)]),
        .insert("items", .integer(-42), ["image": .blob([0, 1, 2, 255])]),
        .delete("items", .integer(Int64.max)),
        .insert("orders", .text("ü-2"), ["customer": .text(""), "total": .real(.infinity)]),
    ])

    static let identity = ClientFileIdentity(id: 17, salt: 0x1234_5678_9ABC)
    static let version = ServerVersion(version: 42, salt: 0x7FFF_FFFF_FFFF_FFFF)

    static let bind = BindRequest(
        session: 7, partition: "store-17", token: "secret", identity: identity, lastServerVersion: version, schemaVersion: 3)
    static let newDeviceBind = BindRequest(session: 8, partition: "catalog-eu", token: "t", identity: nil)
    static let upload = Upload(session: 7, changesets: [
        UploadChangeset(firstSeq: 1, lastSeq: 3, changeset: changeset),
        UploadChangeset(afterSeq: 3, firstSeq: 5, lastSeq: 5, changeset: Changeset([.delete("orders", .text("o-1"))])),
    ])
    static func reply(session: SessionID = 7, stateFollows: Bool = false, access: PartitionAccess = .readwrite) -> BindReply {
        BindReply(
            session: session, identity: identity, isNewIdentity: stateFollows, stateFollows: stateFollows,
            access: access, latestServerVersion: version, integratedClientSeq: stateFollows ? 0 : 12, schema: schema)
    }
    static func chunk(session: SessionID = 7, isLast: Bool) -> StateChunk {
        StateChunk(
            session: session, serverVersion: version,
            progress: DownloadProgress(rowsDone: 3, rowsTotal: 9, bytesDone: 100, bytesTotal: 300), isLast: isLast,
            rows: Changeset([.insert("items", .integer(1), ["image": .null])]))
    }
    static func download(session: SessionID = 7) -> Download {
        Download(session: session, latestServerVersion: 44, entries: [
            DownloadEntry(serverVersion: ServerVersion(version: 43, salt: 5), integratedClientSeq: 0, changeset: changeset),
            DownloadEntry(serverVersion: ServerVersion(version: 44, salt: 6), integratedClientSeq: 4, changeset: Changeset()),
        ])
    }
    static let error = SyncError(.divergingHistories, "version 42 is not in this history", retryAfterMilliseconds: 1500)

    /// A final heal chunk with an unknown key and both kinds of view row.
    static let healChunk = HealChunk(
        session: 7, contribution: UInt64.max, view: ServerVersion(version: 40, salt: 0x1234), base: 44, isFinal: true,
        unknown: ChangeRows(Changeset([.delete("orders", .text("o-9"))])),
        rows: ChangeRows(Changeset([
            .insert("orders", .text("o-1"), ["customer": .text("Ada"), "total": .real(12.5), "note": .null, "paid": .integer(1)]),
            .delete("items", .integer(-42)),
        ])))
    static let healOffer = HealChunk.offer(session: 7, contribution: 3, view: ServerVersion(version: 40, salt: 0x1234), base: 44)
    static func healReply(session: SessionID = 7, outcome: HealReply.Outcome = .accepted) -> HealReply {
        HealReply(session: session, contribution: 3, outcome: outcome, healedChanges: 2, reason: outcome == .rebase ? "healed after 44" : "")
    }

    static let clientMessages: [ClientMessage] = [
        .hello(Hello(software: "tetherd 0.1.0")),
        .bind(bind), .bind(newDeviceBind), .upload(upload), .unbind(7), .ping(UInt64.max),
        .upload(Upload(session: 0, changesets: [])), .credit(7, messages: 1), .credit(UInt32.max, messages: ProtocolLimits.maxCreditGrant),
        .heal(healChunk), .heal(healOffer), .credentialAccepted(digest: [UInt8](repeating: 0x5a, count: 32)),
        .actionResult(RemoteActionResult(id: 9, outcome: .done, message: "reset 3 of store-1 initiated")),
        .actionResult(RemoteActionResult(id: Int64.max, outcome: .failed, message: "", report: Array("{\"a\":1}".utf8))),
    ]

    static let serverMessages: [ServerMessage] = [
        .welcome(Welcome(software: "tether-server 0.1.0")),
        .bound(reply()), .bound(reply(stateFollows: true, access: .read)),
        .state(chunk(isLast: false)), .state(chunk(isLast: true)),
        .download(download()), .unbound(7), .pong(0),
        .error(ErrorMessage(session: 7, error: error)),
        .error(ErrorMessage(session: nil, error: SyncError(.wrongProtocolVersion, "client 2, server 1"))),
        .credential(DeviceCredential(deviceID: "0123456789abcdef0123456789abcdef", secret: String(repeating: "s", count: 43))),
        .action(RemoteAction(id: 1, kind: .initiateReset, partition: "store-1")), .action(RemoteAction(id: 2, kind: .diagnostics)),
    ] + HealReply.Outcome.allCases.map { .healed(healReply(outcome: $0)) }
}

