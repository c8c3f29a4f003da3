import Foundation
import Glibc
import Logging
import TetherProtocol
import TetherStore

/// Makes the live store the state downloaded at a bootstrap (creating it for a new device).
/// Holds no store: the store it opens is handed back whether or not the rest succeeded, so the
/// ``PartitionController`` that owns the store never loses one opened here (a replay that
/// failed once left an opened store behind).
struct StoreBootstrap: Sendable {
    /// The store after an adoption, and why the adoption failed, if it did.
    struct Adoption: Sendable {
        let store: PartitionStore?
        let failure: (any Error)?
    }

    let settings: PartitionSettings
    let log: Logger

    /// Where a bootstrap's state download is staged (and its ready file's part kept).
    static func stagingPath(stateDir: String, partition: PartitionName) -> String {
        stateDir + "/staging/\(partition)-bootstrap.sqlite"
    }

    /// Makes `store` (nil: none yet) the downloaded state; any local changes already in it are
    /// replayed on top (a store emptied by a delete-store action).
    func adopt(_ fetched: FetchedState, into store: PartitionStore?) async -> Adoption {
        defer { StoreMemory.releaseFreedMemory() }
        var store = store
        do {
            if store == nil {
                let directory = (settings.storePath as NSString).deletingLastPathComponent
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o770])
                // A new device: the downloaded store becomes the store, each row written once.
                if PartitionStore.installWithoutCopy(staging: fetched.path, at: settings.storePath) {
                    let installed = try await PartitionStore.open(path: settings.storePath, partition: settings.name, schema: fetched.schema)
                    log.notice("store \(settings.storePath) bootstrapped at server version \(fetched.serverVersion.version)")
                    return Adoption(store: installed, failure: nil)
                }
                Self.createStoreFile(settings.storePath)
                store = try await PartitionStore.open(path: settings.storePath, partition: settings.name, schema: fetched.schema)
            }
            guard let store else { return Adoption(store: nil, failure: nil) }
            let report = try await store.resetInPlace(
                to: try StoreStateSource(path: fetched.path, schema: fetched.schema), serverVersion: fetched.serverVersion,
                schema: fetched.schema, clientFile: fetched.identity, recovering: .pendingChanges, subscriptions: fetched.subscriptions)
            PartitionStore.removeFiles(at: fetched.path)
            log.notice("store \(settings.storePath) bootstrapped at server version \(fetched.serverVersion.version) (\(report.rewrite.inserted) rows)")
            return Adoption(store: store, failure: nil)
        } catch {
            return Adoption(store: store, failure: error)
        }
    }

    /// Creates the empty store file with mode 0660 before SQLite opens it: applications in the
    /// daemon's group write stores, others get nothing, and SQLite gives the `-wal` and `-shm`
    /// files the mode of the database file.
    static func createStoreFile(_ path: String) {
        // O_EXCL fails on a symbolic link too (never followed): the open that follows refuses it.
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o660)
        guard fd >= 0 else { return }  // already there: SQLite opens it as it is
        fchmod(fd, 0o660)  // whatever the umask
        Glibc.close(fd)
    }
}
