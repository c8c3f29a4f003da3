import Foundation
import Logging
import Synchronization
import TetherAgent
import TetherProtocol
import TetherStore
import TetherTestSupport

/// A partition store with synced rows and unsynced local edits, a staged "server", and an
/// executor wired to them — the I/O of a client reset without a network.
final class ResetFixture: Sendable {
    static let schema = Schema(version: 1, tables: [
        TableSchema(name: "orders", primaryKey: "id", columns: [
            ColumnSchema(name: "id", type: .text), ColumnSchema(name: "customer", type: .text),
            ColumnSchema(name: "total", type: .real), ColumnSchema(name: "note", type: .text, nullable: true),
        ])
    ])
    static let partition = PartitionName("store-17")!

    let dir: TemporaryDirectory
    let store: PartitionStore
    let stateDatabase: AgentStateDatabase
    let fetcher: StagedServer
    let healer = FakeHealer()
    let log = RecordingLog()

    /// - Parameter hooks: the hooks to install, each with the exit status it ends with; each
    ///   writes its environment to `<dir>/<event>.env`.
    init(mode: ResetMode = .recoverUnsyncedChanges, synced: [StateRow], hooks hookExits: [HookEvent: Int] = [:], keepBackups: Int = 5) async throws {
        dir = try TemporaryDirectory(prefix: "tether-reset")
        chmod(dir.path, 0o755)
        try FileManager.default.createDirectory(atPath: dir.appending("stores"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.appending("hooks"), withIntermediateDirectories: true)
        chmod(dir.appending("hooks"), 0o755)
        var hooks: [HookEvent: String] = [:]
        for (event, status) in hookExits {
            let path = dir.appending("hooks/\(event.rawValue)")
            try "#!/bin/sh\nenv | sort > \(dir.appending("\(event.rawValue).env"))\necho ran \(event.rawValue)\nexit \(status)\n"
                .write(toFile: path, atomically: false, encoding: .utf8)
            chmod(path, 0o755)
            hooks[event] = path
        }
        store = try await PartitionStore.open(path: dir.appending("stores/store-17.sqlite"), partition: Self.partition, schema: Self.schema)
        try await store.resetInPlace(
            to: ArrayStateSource(synced), serverVersion: ServerVersion(version: 10, salt: 1), clientFile: ClientFileIdentity(id: 1, salt: 1))
        stateDatabase = try AgentStateDatabase(path: dir.appending("state.sqlite"))
        fetcher = StagedServer(schema: Self.schema)
        self.mode = mode
        self.hooks = hooks
        self.keepBackups = keepBackups
    }

    let mode: ResetMode
    let hooks: [HookEvent: String]
    let keepBackups: Int

    var context: ResetContext {
        ResetContext(
            partition: PartitionSettings(
                name: Self.partition, storePath: store.path,
                reset: ResetSettings(
                    mode: mode, beforeHook: hooks[.beforeReset], afterHook: hooks[.afterReset], manualHook: hooks[.manualReset],
                    hookTimeoutSeconds: 10, recoveryDir: dir.appending("recovery"), keepBackups: keepBackups)),
            stateDir: dir.path, serverURL: "ws://127.0.0.1:1/sync")
    }

    func executor(pause: (@Sendable (Int) async throws -> Void)? = nil) -> ClientResetExecutor {
        ClientResetExecutor(
            stateDatabase: stateDatabase, fetcher: fetcher, healer: healer, logger: log.logger,
            pause: pause ?? { _ in })
    }

    /// An application write through the `sqlite3` CLI (captured by the store's triggers).
    func appWrite(_ sql: String) async throws {
        let result = try await ChildProcess.run("/usr/bin/sqlite3", [store.path, sql])
        guard result.succeeded else { throw TestSupportError("sqlite3 failed: \(result)") }
    }

    /// The environment the hook for `event` ran with, or nil if it did not run.
    func hookEnvironment(_ event: HookEvent) -> [String: String]? {
        guard let text = try? String(contentsOfFile: dir.appending("\(event.rawValue).env"), encoding: .utf8) else { return nil }
        return Dictionary(text.split(separator: "\n").compactMap { line in
            line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
        }, uniquingKeysWith: { $1 })
    }
}

/// Plays the server of step 4: the state it would send, with a fresh identity each fetch; a
/// catch-up (after a heal) stages the rows it serves then, keeping the identity, one version on.
final class StagedServer: ServerStateFetcher {
    private struct State {
        var rows: [StateRow] = []
        var fetches = 0
        var catchUps = 0
        var failuresLeft = 0
        var catchUpUnavailable: String?
    }

    let schema: Schema
    private let state = Mutex(State())

    init(schema: Schema) { self.schema = schema }

    private let observer = Mutex<(@Sendable () -> Void)?>(nil)

    func serve(_ rows: [StateRow]) { state.withLock { $0.rows = rows } }
    /// Called as each fetch starts.
    func onFetch(_ body: @escaping @Sendable () -> Void) { observer.withLock { $0 = body } }
    func failNext(_ count: Int) { state.withLock { $0.failuresLeft = count } }
    /// Every catch-up from now on is refused as ``StateCatchUpUnavailable`` with `reason`.
    func refuseCatchUps(_ reason: String) { state.withLock { $0.catchUpUnavailable = reason } }
    var fetches: Int { state.withLock { $0.fetches } }
    var catchUps: Int { state.withLock { $0.catchUps } }

    func fetchState(of partition: PartitionName, into stagingPath: String) async throws -> FetchedState {
        observer.withLock { $0 }?()
        let (rows, fetch, fail) = state.withLock { s -> ([StateRow], Int, Bool) in
            s.fetches += 1
            let fail = s.failuresLeft > 0
            if fail { s.failuresLeft -= 1 }
            return (s.rows, s.fetches, fail)
        }
        if fail { throw TestSupportError("server unreachable") }
        PartitionStore.removeFiles(at: stagingPath)
        let identity = ClientFileIdentity(id: Int64(100 + fetch), salt: 7)
        return try await stage(rows, at: stagingPath, partition: partition, identity: identity, version: ServerVersion(version: 20, salt: 2))
    }

    func catchUp(_ fetched: FetchedState, of partition: PartitionName) async throws -> FetchedState {
        let (rows, unavailable) = state.withLock { s in
            s.catchUps += 1
            return (s.rows, s.catchUpUnavailable)
        }
        if let unavailable { throw StateCatchUpUnavailable(unavailable) }
        let version = ServerVersion(version: fetched.serverVersion.version + 1, salt: fetched.serverVersion.salt)
        return try await stage(rows, at: fetched.path, partition: partition, identity: fetched.identity, version: version)
    }

    private func stage(
        _ rows: [StateRow], at path: String, partition: PartitionName, identity: ClientFileIdentity, version: ServerVersion
    ) async throws -> FetchedState {
        let staging = try await PartitionStore.open(path: path, partition: partition, schema: schema)
        try await staging.resetInPlace(to: ArrayStateSource(rows.sorted { ($0.table, $0.key) < ($1.table, $1.key) }), serverVersion: version, clientFile: identity)
        try staging.close()
        return FetchedState(path: path, schema: schema, identity: identity, serverVersion: version)
    }
}

/// Plays the server's side of healing: answers each contribution with the next scripted answer
/// (`notWanted` when none is left) and keeps what it was sent, the chunks read in full.
final class FakeHealer: HealContributor {
    struct Contribution: Sendable {
        var partition: PartitionName
        var id: UInt64
        var view: ServerVersion
        var base: ServerVersion
        var chunks: [HealViewChunk]
    }

    private let state = Mutex<(answers: [Result<HealContributionResult, HealContributionError>], sent: [Contribution])>(([], []))

    /// The answers to the next contributions, in order.
    func answer(_ answers: Result<HealContributionResult, HealContributionError>...) { state.withLock { $0.answers += answers } }
    var contributions: [Contribution] { state.withLock { $0.sent } }

    func contribute(
        partition: PartitionName, contribution: UInt64, view: ServerVersion, fetched: FetchedState, chunks: HealViewChunks
    ) async throws(HealContributionError) -> HealContributionResult {
        var read: [HealViewChunk] = []
        do throws(StoreError) {
            for try await chunk in chunks { read.append(chunk) }
        } catch {
            throw HealContributionError(reading: error)
        }
        let sent = Contribution(partition: partition, id: contribution, view: view, base: fetched.serverVersion, chunks: read)
        let answer = state.withLock { s in
            s.sent.append(sent)
            return s.answers.isEmpty ? .success(.notWanted(reason: "no heal is open")) : s.answers.removeFirst()
        }
        return try answer.get()
    }
}

func order(_ id: String, _ customer: String, _ total: Double, note: String? = nil) -> StateRow {
    StateRow(table: "orders", key: .text(id), fields: [
        "customer": .text(customer), "total": .real(total), "note": note.map(FieldValue.text) ?? .null,
    ])
}

extension ClientResetExecutor {
    /// Records a new reset of `store` for `error` and drives it, as the partition's run loop does.
    func begin(
        error: SyncError, store: PartitionStore, context: ResetContext, forced: Bool = false, manualBecause: String? = nil,
        repeats: Int = 0
    ) async throws -> ResetRecord {
        let record = try await record(
            error: error, store: store, context: context, forced: forced, manualBecause: manualBecause, repeats: repeats)
        return try await drive(record, store: store, context: context)
    }
}
