import TetherProtocol

/// One bind of a partition, from the bind request to the session's end: the server's side of
/// it, what the server granted, where this session's uploads stand, when it was bound, whether
/// its uploads may start, and the watchdog's clocks. ``PartitionController`` creates one for
/// each bind and drops it when the session ends, so nothing of a session outlives it and nothing
/// is reset by hand at the next bind. Its control flow (``run(on:host:)``) runs on its host's
/// actor; its racing tasks (events, uploads, the wake watch) share the state here, one
/// ``AwaitableValue`` (uploads wait on it for the session to be ready).
struct PartitionSession: Sendable {
    private let state = AwaitableValue(State())

    private struct State: Sendable {
        /// The bound partition on the agent's connection, once the bind is sent.
        var link: (any LinkSession)?
        var uploads: Uploads?
        /// What the bind said of subscriptions: the set the store held and the set wanted.
        var subscriptions = SubscriptionRequest.whole
        /// The token the bind was sent with (the server's answer to it goes to
        /// ``CredentialFallback``); never logged.
        var token: String?
        var access = PartitionAccess.readwrite
        var boundAt: ContinuousClock.Instant?
        var readyForUploads = false
        var uploadRun = UploadRun.idle
        var busySince: ContinuousClock.Instant?
        var lastProgress = ContinuousClock.now
    }

    /// Where uploads stand in one session (``StoreLineage``).
    struct Uploads: Sendable, Hashable {
        /// The salt this session's uploads go under, chosen anew at each bind: with the store's
        /// lineage it lets the server tell an older image or a copy of the store from a store
        /// that missed an acknowledgement.
        let salt: Int64
        /// Uploads resume after this local seq (the server's integrated seq, or what this
        /// session sent).
        var cursor: Int64 = 0
        /// The last seq recorded under ``salt`` in the store before sending.
        var recordedThrough: Int64 = 0
    }

    /// Commits ask for uploads while a run of them may be under way: one run at a time, which
    /// goes round once more when asked meanwhile.
    private enum UploadRun: Sendable, Hashable {
        case idle
        case running
        case runAgain
    }

    // MARK: The bind

    /// The bind was sent on `link` with `token`; this session's uploads go under `uploadSalt`,
    /// and it asked for `subscriptions`.
    func opened(_ link: any LinkSession, uploadSalt: Int64, subscriptions: SubscriptionRequest = .whole, token: String? = nil) {
        state.update {
            $0.link = link
            $0.uploads = Uploads(salt: uploadSalt)
            $0.subscriptions = subscriptions
            $0.token = token
        }
    }

    /// The token the bind was sent with (nil until it is sent).
    var token: String? { state.value.token }

    /// What the bind said of subscriptions (``SubscriptionRequest/whole`` until it is sent).
    var subscriptions: SubscriptionRequest { state.value.subscriptions }

    /// The bound partition on the agent's connection (nil until the bind is sent).
    var link: (any LinkSession)? { state.value.link }

    /// What the server granted at the bind (read: nothing is uploaded).
    var access: PartitionAccess { state.value.access }

    /// How long the session has been bound (nil: it never became ready).
    var boundFor: Duration? { state.value.boundAt.map { ContinuousClock.now - $0 } }

    /// The server accepted the bind: it is the authority on what it integrated for this
    /// identity (after a reset the store's own counter belongs to the previous identity).
    func accepted(_ reply: BindReply) {
        state.update { $0.uploads?.cursor = reply.integratedClientSeq }
    }

    /// The store is bootstrapped or checked: the session is bound, with `access`.
    func becameReady(access: PartitionAccess) {
        state.update {
            $0.access = access
            $0.boundAt = .now
        }
    }

    /// The lifecycle knows the session is ready: its uploads start (``waitUntilReadyForUploads()``).
    func startUploads() {
        state.update { $0.readyForUploads = true }
    }

    /// Returns once the uploads may start, or when the task is cancelled.
    func waitUntilReadyForUploads() async {
        await state.wait(until: { $0.readyForUploads })
    }

    // MARK: Uploads

    /// Where the uploads stand (nil until the bind is sent).
    var uploads: Uploads? { state.value.uploads }

    /// Where the uploads stand after a run (or what part of it went through).
    func record(_ uploads: Uploads) {
        state.update { $0.uploads = uploads }
    }

    /// Starts a run of uploads; false when one is under way (it goes round once more).
    func claimUploads() -> Bool {
        var claimed = false
        state.update {
            guard $0.uploadRun == .idle else {
                $0.uploadRun = .runAgain
                return
            }
            $0.uploadRun = .running
            claimed = true
        }
        return claimed
    }

    /// A round of the run ended: true when a commit asked for uploads meanwhile (go round again).
    func uploadRoundEnded() -> Bool {
        var again = false
        state.update {
            guard $0.uploadRun == .runAgain else { return }
            $0.uploadRun = .running
            again = true
        }
        return again
    }

    /// The run of uploads is over (done, failed, or its session ending).
    func uploadsStopped() {
        state.update { $0.uploadRun = .idle }
    }

    // MARK: The watchdog's clocks

    /// An event of the session is being handled (a wedged session stops the watchdog's pings).
    func eventStarted() {
        state.update {
            $0.busySince = .now
            $0.lastProgress = .now
        }
    }

    /// The event is handled.
    func eventHandled() {
        state.update { $0.busySince = nil }
    }

    /// A download or an upload moved on.
    func progressed() {
        state.update { $0.lastProgress = .now }
    }

    /// Healthy unless an event has been handled for longer than `limit` without progress.
    func isMakingProgress(limit: Duration) -> Bool {
        let state = state.value
        guard state.busySince != nil else { return true }
        return ContinuousClock.now - state.lastProgress < limit
    }
}
