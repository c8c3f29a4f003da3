import TetherProtocol

/// Background builds (docs/server.md, "Ready files", `settle_seconds`): a partition written
/// here gets its file built once its writes settle, so that the first new device after a bulk
/// write finds it ready, and brought up to date once it is a tenth behind. A partition too
/// small for a file is looked at again only once enough changes came to reach `min_rows`; one
/// whose file would not fit the cache is left to binds.
extension ReadyFileCache {
    /// Why a partition has no file, and at which version that was found.
    enum NoFile: Sendable, Equatable {
        /// Fewer rows than `min_rows`; `changesSince`: changes committed here since (an upper
        /// bound on the rows they added).
        case tooSmall(version: Int64, rows: Int64, changesSince: Int64)
        /// Its file was larger than `max_cache_bytes`.
        case tooLarge(version: Int64)

        var version: Int64 {
            switch self {
            case .tooSmall(let version, _, _), .tooLarge(let version): version
            }
        }
    }

    /// A commit of `changes` changes to `partition` (nil: another instance's, not counted).
    func committed(_ partition: PartitionName, changes: Int64?, at now: ContinuousClock.Instant = .now) {
        guard var settling else { return }
        let wasIdle = settling.pending.isEmpty
        settling.committed(partition, changes: changes, at: now)
        self.settling = settling
        if wasIdle { settleContinuation.yield() }
    }

    /// When the next written partition settles; nil when none waits (or builds in the background are off).
    var settleDeadline: ContinuousClock.Instant? { settling?.nextDeadline }

    /// Queues the builds of the partitions whose writes settled by `now`.
    func settle(at now: ContinuousClock.Instant = .now) {
        guard var settling else { return }
        let due = settling.takeDue(at: now)
        self.settling = settling
        for item in due where worthBuilding(item) { enqueueBuild(item.partition) }
    }

    /// Whether a settled partition is worth a build: one without a file when it may hold
    /// `min_rows`; one with a file once the changes committed here since it was built reach a
    /// tenth of its rows (and `min_rows`) — a device served an older file downloads the history
    /// after it, and bringing a file up to date copies, hashes and compares all of it; one found
    /// too small only once the changes since could have brought it to `min_rows`. Another
    /// instance's versions (not counted) start nothing: binds there ask, as before.
    private func worthBuilding(_ due: ReadyFileSettling<ContinuousClock.Instant>.Due) -> Bool {
        guard isLoaded else { return false }
        if let file = current(due.partition) {
            guard let changes = due.changes else { return false }
            let since = (changesSinceFile[due.partition] ?? 0) + changes
            changesSinceFile[due.partition] = since
            return since >= max(Int64(settings.minRows), file.rows / 10)
        }
        switch withoutFile[due.partition] {
        case nil:
            return due.changes != nil  // never looked at: counted once (another instance's writes: left to binds)
        case .tooLarge:
            return false
        case .tooSmall(let version, let rows, let changesSince):
            guard let changes = due.changes else { return false }
            let since = changesSince + changes
            withoutFile[due.partition] = .tooSmall(version: version, rows: rows, changesSince: since)
            return rows + since >= Int64(settings.minRows)
        }
    }
}
