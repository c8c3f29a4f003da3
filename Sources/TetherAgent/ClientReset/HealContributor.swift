import TetherProtocol
import TetherStore

/// What became of a device's offer to heal a restored server.
package enum HealContributionResult: Sendable, Hashable {
    /// The server took the view: `healed` changes it wrote from it (0: the view held nothing
    /// the server lacked).
    case contributed(healed: Int)
    /// The server does not want the view (no heal open, a rollback, a view outside the lost
    /// window): the reset goes on as without healing.
    case notWanted(reason: String)
    /// A heal is open but the view adds nothing (newer views cover it, or it is of the history
    /// since the restore): the reset contributes nothing, and its recovery keeps unsynced
    /// updates and deletes of rows the server lacks, which another view may bring back.
    case covered(reason: String)
    /// Another device's view was healed after the state was fetched: the view was compared
    /// with a state that is no longer the server's. Fetch it again and contribute again.
    case rebase(reason: String)
}

/// Why a contribution did not get an answer.
package enum HealContributionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// It may pass (the server unreachable, the connection cut, the server restarted, a busy
    /// file): the healing phase runs again after a backoff, with the same contribution id.
    case transient(String)
    /// Retrying cannot fix it (the partition is read-only for this device, the rows do not fit
    /// the server's schema — error 225 —, a fatal error, a backup that cannot be read): the
    /// reset goes on without healing, the reason logged.
    case refused(String)

    /// A failure reading the view: transient when the same read may succeed later.
    package init(reading error: StoreError) {
        self = error.isTransient ? .transient("reading the view: \(error)") : .refused("reading the view: \(error)")
    }

    package var description: String {
        switch self {
        case .transient(let reason): "transient: \(reason)"
        case .refused(let reason): "refused: \(reason)"
        }
    }
}

/// The healing step of a reset caused by a restored server (211 or 208): offers the device's
/// view — its backup without its unsynced changes, as ``HealViewReader`` reads it against the
/// fetched state — to the server, which puts back what the restore lost of it
/// (docs/client-reset.md "Healing a restored server"). The agent implements it over its
/// server connection (a session bound with the fetched identity, offer and chunks one at a
/// time, each answered); tests fake it.
package protocol HealContributor: Sendable {
    /// Sends the contribution `contribution` (the same id every time this reset sends it: a
    /// re-send after a restart or a rebase is recognised by the server) of the view `view`,
    /// compared with `fetched` (its server version is the chunks' base), and returns the
    /// server's answer.
    func contribute(
        partition: PartitionName, contribution: UInt64, view: ServerVersion, fetched: FetchedState, chunks: HealViewChunks
    ) async throws(HealContributionError) -> HealContributionResult
}
