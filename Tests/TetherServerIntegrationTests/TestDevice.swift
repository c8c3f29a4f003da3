import Foundation
import Logging
import TetherSyncClient
import TetherProtocol

/// One row of a store, by table and key.
struct RowRef: Hashable, Sendable, CustomStringConvertible {
    var table: String
    var key: RowKey
    var description: String {
        switch key {
        case .integer(let v): "\(table)/\(v)"
        case .text(let v): "\(table)/\(v)"
        }
    }
}

/// What a device keeps between connections: its identity, position and rows.
struct DeviceState: Sendable {
    var identity: ClientFileIdentity?
    var lastServerVersion: ServerVersion = .none
    var schemaVersion = 0
    var rows: [RowRef: [String: FieldValue]] = [:]
    var nextSeq: Int64 = 1
    var pending: [(seq: Int64, change: RowChange)] = []
    /// The last seq handed to the server: the next batch's `afterSeq`.
    var uploadCursor: Int64 = 0
    var access: PartitionAccess?
    /// Latest version the server announced.
    var latestKnown: Int64 = 0
    /// Entries received in downloads (to check what was re-sent).
    var receivedVersions: [Int64] = []
}

/// A small in-memory store that syncs like the agent does (docs/sync-model.md): it binds,
/// applies state chunks and downloads (keeping fields with pending local changes), uploads
/// its pending changes with their seq range, and drops them once acknowledged.
final class TestDevice {
    let partition: String
    let token: String
    var state: DeviceState
    private(set) var session: SyncSession?
    private var events: SessionEvents.AsyncIterator?
    private var bootstrapRows: [RowRef: [String: FieldValue]] = [:]

    init(partition: String = "store-17", user: String = "pos-17", state: DeviceState = DeviceState()) {
        self.partition = partition
        self.token = ServerProcess.tokens[user] ?? user
        self.state = state
    }

    init(partition: String, token: String, state: DeviceState = DeviceState()) {
        self.partition = partition
        self.token = token
        self.state = state
    }

    var bindRequest: BindRequest {
        BindRequest(
            session: 1, partition: partition, token: token, identity: state.identity,
            lastServerVersion: state.lastServerVersion, schemaVersion: state.schemaVersion)
    }

    /// Binds on `connection`; returns the bind reply, or throws the session error.
    @discardableResult
    func bind(on connection: SyncConnection, session id: SessionID = 1, request: BindRequest? = nil) async throws -> BindReply {
        var request = request ?? bindRequest
        request.session = id
        let session = try await connection.bind(request)
        self.session = session
        events = session.events.makeAsyncIterator()
        switch try await nextEvent() {
        case .bound(let reply):
            state.identity = reply.identity
            state.uploadCursor = reply.integratedClientSeq
            state.pending.removeAll { $0.seq <= reply.integratedClientSeq }
            state.access = reply.access
            state.latestKnown = reply.latestServerVersion.version
            if reply.stateFollows {
                try await receiveState()
            }
            state.schemaVersion = reply.schema.version
            return reply
        case .error(let error):
            throw error
        case let other:
            throw ServerFailure("expected bound, got \(other)")
        }
    }

    func nextEvent() async throws -> SessionEvent {
        guard var iterator = events else { throw ServerFailure("not bound") }
        defer { events = iterator }
        guard let event = await iterator.next() else { throw ServerFailure("session events ended") }
        return event
    }

    private func receiveState() async throws {
        bootstrapRows = [:]
        while true {
            guard case .state(let chunk) = try await nextEvent() else { throw ServerFailure("expected a state chunk") }
            for row in chunk.rows.changeset.changes { bootstrapRows[RowRef(table: row.table, key: row.key)] = row.fields }
            if chunk.isLast {
                state.rows = bootstrapRows
                state.lastServerVersion = chunk.serverVersion
                return
            }
        }
    }

    /// A local write: applied at once and queued for upload. Like SQLite, an update or
    /// delete of a row the store does not have changes nothing and is not captured.
    func write(_ change: RowChange) {
        let ref = RowRef(table: change.table, key: change.key)
        switch change.kind {
        case .insert: state.rows[ref] = (state.rows[ref] ?? [:]).merging(change.fields) { $1 }
        case .update:
            guard let row = state.rows[ref] else { return }
            state.rows[ref] = row.merging(change.fields) { $1 }
        case .delete:
            guard state.rows[ref] != nil else { return }
            state.rows[ref] = nil
        }
        state.pending.append((state.nextSeq, change))
        state.nextSeq += 1
    }

    /// Uploads the pending changes not handed to the server yet as one batch after the
    /// upload cursor (docs/sync-model.md: whole or not at all).
    func upload() async throws {
        let batch = state.pending.filter { $0.seq > state.uploadCursor }
        guard let session, let first = batch.first?.seq, let last = batch.last?.seq else { return }
        try await session.upload([
            UploadChangeset(afterSeq: state.uploadCursor, firstSeq: first, lastSeq: last, changeset: Changeset(batch.map(\.change)))
        ])
        state.uploadCursor = last
    }

    /// Processes events until no change is pending and the store holds the latest version
    /// the server announced. Throws the session error if one arrives.
    func syncUntilCaughtUp() async throws {
        while !state.pending.isEmpty || state.lastServerVersion.version < state.latestKnown {
            try await handle(nextEvent())
        }
    }

    /// Processes events until the store integrated `version`.
    func syncUntil(version: Int64) async throws {
        while state.lastServerVersion.version < version {
            try await handle(nextEvent())
        }
    }

    /// Waits for the next session error (processing downloads meanwhile).
    func nextError() async throws -> SyncError {
        while true {
            let event = try await nextEvent()
            if case .error(let error) = event { return error }
            try await handle(event)
        }
    }

    func handle(_ event: SessionEvent) async throws {
        switch event {
        case .download(let download):
            state.latestKnown = max(state.latestKnown, download.latestServerVersion)
            for entry in download.entries { apply(entry) }
        case .error(let error):
            throw error
        case .disconnected(let error):
            throw ServerFailure("disconnected: \(error.map { "\($0)" } ?? "no error")")
        case .bound, .state, .unbound, .healed, .compensatingWrites, .subscriptionChunk:
            throw ServerFailure("unexpected \(event)")
        }
    }

    private func apply(_ entry: DownloadEntry) {
        state.receivedVersions.append(entry.serverVersion.version)
        state.pending.removeAll { $0.seq <= entry.integratedClientSeq }
        for change in entry.changeset.changes {
            let ref = RowRef(table: change.table, key: change.key)
            let local = state.pending.filter { $0.change.table == change.table && $0.change.key == change.key }.map(\.change)
            if local.contains(where: { $0.kind == .delete }) && change.kind != .delete { continue }
            if change.kind == .delete && local.contains(where: { $0.kind == .insert }) { continue }
            let localFields = Set(local.flatMap { $0.fields.keys })
            let fields = change.fields.filter { !localFields.contains($0.key) }
            switch change.kind {
            case .insert: state.rows[ref] = (state.rows[ref] ?? [:]).merging(fields) { $1 }
            case .update: if let row = state.rows[ref] { state.rows[ref] = row.merging(fields) { $1 } }
            case .delete: state.rows[ref] = nil
            }
        }
        state.lastServerVersion = entry.serverVersion
    }
}

/// Opens a client connection to `server` for `body`, failing the test after `deadline`.
func withConnection<T: Sendable>(
    _ server: ServerProcess, deadline: Duration = .seconds(30), _ body: @escaping @Sendable (SyncConnection) async throws -> T
) async throws -> T {
    try await withDeadline(deadline) {
        try await SyncConnection.run(SyncClientConfiguration(url: server.syncURL, software: "tether-tests"), logger: testLogger, body)
    }
}

let testLogger: Logger = {
    var logger = Logger(label: "tether-tests")
    logger.logLevel = .warning
    return logger
}()

/// Runs `body`, cancelling it and failing after `timeout` (per-scenario deadline).
@discardableResult
func withDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw ServerFailure("scenario did not finish within \(timeout)")
        }
        return value
    }
}
