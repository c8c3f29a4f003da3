import Logging
import TetherProtocol
import TetherStore

extension PartitionSession {
    /// What a bind needs of the partition it runs for (``PartitionController`` in
    /// production): its settings and store, the lifecycle's steps of a bind, the figures and
    /// the last error. The session's control flow runs on the host's actor
    /// (``PartitionSession/run(on:host:)``, which takes the host as an `isolated` parameter), so each call is a plain call there.
    protocol Host: Actor {
        var settings: PartitionSettings { get }
        var context: any AgentContext { get }
        var log: Logger { get }
        /// The partition's store, if it has one open.
        var store: PartitionStore? { get }
        /// The figures `tetherctl status` shows beside the state.
        var figures: PartitionStatus { get }
        /// Pause, removal and a forced reset end the session at once.
        var shouldEndSession: Bool { get }
        /// The session is ready and not ending: uploads may flow.
        var uploadsMayFlow: Bool { get }
        /// Returns at the next wake (an operator's command, a reload).
        func waitForWake() async

        /// Opens the store file if there is one and none is open (a damaged one is quarantined).
        func openStoreIfPresent() async throws
        /// The store a bootstrap left (kept even when its adoption failed).
        func adopt(_ store: PartitionStore?)

        // The lifecycle's steps of a bind.
        func bindSent()
        /// The server accepted the bind: the figures show its version and the store's identity.
        func bound(_ reply: BindReply)
        /// The store is bootstrapped or checked: the machine learns the session is ready.
        func sessionReady()
        /// A bind succeeded: the last reset, if it still waited for one, is confirmed.
        func confirmLastReset() throws

        // The figures and the last error.
        /// A download was applied (`latestServerVersion`: the server's latest when it was sent).
        func applied(_ report: ApplyReport, latestServerVersion: Int64) async throws
        func downloadProgress(_ progress: DownloadProgress)
        func downloadEnded(complete: Bool)
        func refreshCounts() async throws
        func recount() async
        /// The reset-causing error a 108 stands for once it has lasted too long (``BoundElsewhereWatch``).
        func identityTakenElsewhere(_ error: SyncError) -> SyncError?
        /// Records and announces `error` as the partition's last error.
        func show(_ error: SyncError, heldForItsReset: Bool)

        // Subscriptions (protocol 9).
        /// Whether the store's subscriptions are still to be changed to the wanted set (the
        /// partition is not synced until they are).
        func subscriptionsPending(_ pending: Bool)
        /// Compensating writes the server made, recorded once: counted, announced, hooked.
        func compensated(_ notice: CompensatingWrites)
    }
}
