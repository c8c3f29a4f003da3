import Foundation
import Logging
import TetherProtocol
import TetherStore

/// Opens a partition's store file and checks its health (docs/client-reset.md, "Damaged and
/// altered stores"): `PRAGMA quick_check` at open, an application's change of the tables at
/// each commit. Holds no store: what it opens it hands back, and the ``PartitionController``
/// owns it from then on (a store given up on is closed here before the error is thrown).
struct PartitionStoreOpener: Sendable {
    /// What opening the store file found.
    enum Opening: Sendable {
        /// The store, or nil when there is no file or an empty one (the bootstrap creates it).
        /// An altered store is opened as it is; its ``PartitionStore/alteration`` says what differs.
        case opened(PartitionStore?)
        /// The file is corrupt or not SQLite: it must be quarantined.
        case damaged(StoreError)
    }

    let settings: PartitionSettings
    let log: Logger

    /// Opens the store file if there is one: a corrupt one is reported `damaged`, an altered
    /// one is opened as it is (a manual reset follows).
    func open() async throws -> Opening {
        guard FileManager.default.fileExists(atPath: settings.storePath) else { return .opened(nil) }
        do {
            return .opened(try await openChecked())
        } catch let error where error.isCorruption {
            return .damaged(error)
        } catch let error where error.isSchemaAlteration {
            guard let schema = try PartitionStore.recordedSchema(path: settings.storePath) else { throw error }
            return .opened(
                try await PartitionStore.open(
                    path: settings.storePath, partition: settings.name, schema: schema, tolerateAlteredTables: true))
        }
    }

    /// Opens the store and runs `PRAGMA quick_check`; logs capture triggers recreated at open.
    /// Nil for an empty database file.
    private func openChecked() async throws(StoreError) -> PartitionStore? {
        // An empty file (an application opened the path before the first bootstrap): the
        // bootstrap creates the store in it.
        if try PartitionStore.isEmptyDatabase(path: settings.storePath) { return nil }
        guard let schema = try PartitionStore.recordedSchema(path: settings.storePath) else {
            throw StoreError.notAStore(path: settings.storePath)
        }
        let opened = try await PartitionStore.open(path: settings.storePath, partition: settings.name, schema: schema)
        let problems: [String]
        do {
            problems = try await opened.quickCheck()
        } catch {
            try? opened.close()  // given up on: the check's error says why
            throw error
        }
        guard problems.isEmpty else {
            try? opened.close()  // given up on: it is quarantined
            throw StoreError.corrupt(path: settings.storePath, problems: problems)
        }
        warnAboutRecreatedTriggers(opened.triggersRecreatedAtOpen)
        return opened
    }

    /// How a session ends when the store could not be opened before its bind (logged here);
    /// `shown`: the error the partition then shows as its last one.
    func sessionEnd(forOpenFailure error: any Error) -> (end: PartitionStateMachine.SessionEnd, shown: SyncError?) {
        if let error = error as? StoreError, error.isTransient {
            // A full disk, an I/O error, a lock: it may pass, so try again with backoff.
            log.error("cannot open the store \(settings.storePath), retrying: \(error)")
            return (.retry(nil), nil)
        }
        log.error("cannot open the store \(settings.storePath); syncing of \(settings.name) stops until a reload: \(error)")
        return (
            .stop(reason: "the store cannot be opened: \(error)"),
            SyncError(.badClientFile, "the store \(settings.storePath) cannot be opened: \(error)", action: .fatal)
        )
    }

    /// After every commit: an application's schema change is noticed here (`PRAGMA
    /// schema_version` moved). Returns the alteration when the tables no longer match.
    func checkSchema(of store: PartitionStore) async -> StoreError? {
        do {
            if case .triggersRecreated(let names) = try await store.checkSchema() { warnAboutRecreatedTriggers(names) }
            return nil
        } catch let error where error.isSchemaAlteration {
            return error
        } catch {
            log.debug("schema check of \(settings.storePath) failed: \(error)")
            return nil
        }
    }

    private func warnAboutRecreatedTriggers(_ names: [String]) {
        guard !names.isEmpty else { return }
        log.warning(
            "store \(settings.storePath): capture triggers \(names.joined(separator: ", ")) had been dropped or changed by an application and were recreated; application writes made while they were missing were not captured and will not sync (docs/contract.md: Partitions and stores: applications must not change a store's schema)")
    }

    /// True for a store a delete-store action emptied: no identity and nothing unsynced. When
    /// the store cannot be read, false: the reset that follows says why in the journal.
    func isAlreadyEmptied(_ store: PartitionStore) async -> Bool {
        do {
            guard try await store.metadata().clientFile == nil else { return false }
            return try await store.pendingChangeCount() == 0
        } catch {
            log.warning("cannot read whether the store \(settings.storePath) was already emptied by a delete-store action: \(error)")
            return false
        }
    }

    /// Closes a damaged store before it is moved aside; a failure is logged (it is moved anyway).
    func closeDamaged(_ store: PartitionStore) {
        do { try store.close() } catch {
            log.warning("closing the damaged store \(settings.storePath) failed (it is moved aside anyway): \(error)")
        }
    }
}
