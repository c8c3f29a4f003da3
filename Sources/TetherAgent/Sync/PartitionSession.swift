import TetherProtocol

/// One bind of a partition, from the bind request to the session's end: the server's side of
/// it, what the server granted, where this session's uploads stand, and when it was bound.
/// ``PartitionController`` creates one for each bind and drops it when the session ends, so
/// nothing of a session outlives it and nothing is reset by hand at the next bind.
struct PartitionSession: Sendable {
    /// The bound partition on the agent's connection.
    let link: any LinkSession
    /// Where this session's uploads stand.
    private(set) var uploads: Uploads
    /// What the server granted at the bind (read: nothing is uploaded).
    private(set) var access: PartitionAccess = .readwrite
    /// When the session became ready (how long it lasted decides the next backoff).
    private(set) var boundAt: ContinuousClock.Instant?
    private var uploadRun = UploadRun.idle

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

    init(link: any LinkSession, uploadSalt: Int64) {
        self.link = link
        self.uploads = Uploads(salt: uploadSalt)
    }

    /// How long the session has been bound (nil: it never became ready).
    var boundFor: Duration? { boundAt.map { ContinuousClock.now - $0 } }

    /// The server accepted the bind: it is the authority on what it integrated for this
    /// identity (after a reset the store's own counter belongs to the previous identity).
    mutating func accepted(_ reply: BindReply) {
        uploads.cursor = reply.integratedClientSeq
    }

    /// The store is bootstrapped or checked: the session is bound, with `access`.
    mutating func becameReady(access: PartitionAccess) {
        self.access = access
        boundAt = .now
    }

    /// Where the uploads stand after a run (or what part of it went through).
    mutating func record(_ uploads: Uploads) {
        self.uploads = uploads
    }

    /// Starts a run of uploads; false when one is under way (it goes round once more).
    mutating func claimUploads() -> Bool {
        guard uploadRun == .idle else {
            uploadRun = .runAgain
            return false
        }
        uploadRun = .running
        return true
    }

    /// A round of the run ended: true when a commit asked for uploads meanwhile (go round again).
    mutating func uploadRoundEnded() -> Bool {
        guard uploadRun == .runAgain else { return false }
        uploadRun = .running
        return true
    }

    /// The run of uploads is over (done, failed, or its session ending).
    mutating func uploadsStopped() {
        uploadRun = .idle
    }
}
