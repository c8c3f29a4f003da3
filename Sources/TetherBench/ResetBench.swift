import Foundation
import TetherControl
import TetherTestSupport

/// Client reset of a synced store after a server restore, with 1 % of its rows changed offline
/// (one field each). Timed from the reset's start to its end as the agent records them
/// (`tetherctl resets`: backup, fetch of the server's state, in-place rewrite, replay), and
/// from `tetherctl resume` until synced again. Floor: SQLite backup API copy of the store
/// (`sqlite3 .backup`) plus an in-place rewrite of the same rows in one transaction of a plain file.
struct ResetBench {
    let options: BenchOptions
    let cluster: Cluster
    let agent: ClusterAgent
    let partition: String
    let rows: Int
    /// A plain SQLite file holding the same rows (the bootstrap floor's), rewritten by the floor.
    let plainCopy: String

    /// `heal`: the server is restored with `--heal` (the default of a real restore) instead of
    /// `--rollback`: the reset passes through `healing` (its view compared with the fetched
    /// state and offered) and, when the view healed rows, fetches the state again.
    func run(mode: String, heal: Bool = false) async throws -> BenchFigure {
        let discard = mode == "discard_unsynced_changes"
        let unsynced = options.unsyncedChanges(rows)
        var times: [Double] = []
        var totals: [Double] = []
        var floors: [Double] = []
        var phaseTimes: [String: [Double]] = [:]
        var peak = 0
        for run in 1...options.scaleRuns(rows) {
            // Negative: the workload's totals are row numbers, which reach any positive marker at
            // 1M rows and more (at 5M rows row 1,000,001 has total 1000001).
            let marker = -Double(1_000_000 + run) - (discard ? 0.5 : 0)
            let snapshot = try await cluster.admin(["snapshot", partition])
            try await SQLWorkload.run(
                agent.store(partition), "UPDATE orders SET customer = 'past snapshot \(mode) \(run)' WHERE id = '\(partition)-000000000';")
            try await agent.waitSynced(partition)
            try await agent.ctl(["pause", partition])
            try await SQLWorkload.run(
                agent.store(partition), SQLWorkload.updateScript(prefix: partition, count: unsynced, stride: rows / unsynced, total: marker))
            // A rollback: the reset's own cost, as before restores healed by default. A heal adds
            // the healing phase and a second fetch when the view healed rows (here one: the
            // update synced after the snapshot).
            try await cluster.admin(["restore", partition, snapshot, heal ? "--heal" : "--rollback"])
            let before = try await agent.resets().count
            agent.probe?.resetPeak()
            let clock = ContinuousClock()
            let started = clock.now
            try await agent.ctl(["resume", partition])
            let reset = try await eventually("reset of \(partition) done", timeout: .seconds(1800), pollInterval: .milliseconds(50)) {
                () async throws -> JSONValue? in
                let resets = try await agent.resets()
                guard resets.count > before, let last = resets.last, last["finished_at"]?.stringValue != nil else { return nil }
                return last
            }
            try await agent.waitSynced(partition, timeout: 1800)
            totals.append(started.duration(to: clock.now).seconds)
            peak = max(peak, agent.probe?.peakResidentBytes ?? 0)
            let outcome = reset["outcome"]?.stringValue ?? "?"
            guard outcome == (discard ? "discarded" : "recovered") else {
                throw TestSupportError("reset of \(partition) in \(mode) ended \(outcome): \(reset)")
            }
            guard let start = Self.time(reset["started_at"]), let end = Self.time(reset["finished_at"]) else {
                throw TestSupportError("reset without times: \(reset)")
            }
            times.append(end - start)
            for (phase, seconds) in try await phaseSeconds(of: reset, finishedAt: end) { phaseTimes[phase, default: []].append(seconds) }
            if let id = reset["id"]?.stringValue, let seconds = Self.backupSeconds(in: agent.log, reset: id) {
                phaseTimes["backup_alone", default: []].append(seconds)
            }
            let kept = try await SQLWorkload.count(agent.store(partition), where: "total = \(marker)")
            guard kept == (discard ? 0 : unsynced) else {
                throw TestSupportError("reset of \(partition) in \(mode): \(kept) of \(unsynced) offline changes in the store")
            }
            floors.append(try await floor())
        }
        let median = Statistics.median(times) ?? 0
        return BenchFigure(
            name: "client reset, \(discard ? "discard" : "recover")\(heal ? " with heal" : "") \(rows) rows",
            workload: "\(rows)-row store, \(unsynced) unsynced changes, server restored (\(heal ? "--heal" : "--rollback")); \(mode)",
            value: median, unit: "s", runs: times, seconds: median, floorSeconds: Statistics.median(floors), peakResidentBytes: peak,
            target: heal ? "≤ 2× floor, peak RSS ≤ 48 MB" : discard ? "≤ 1.2× floor, peak RSS ≤ 48 MB" : "≤ 1.5× floor, peak RSS ≤ 48 MB",
            extra: phaseTimes.reduce(into: ["resume_to_synced_s": Statistics.median(totals) ?? 0]) { extra, phase in
                extra["\(phase.key)_s"] = Statistics.median(phase.value) ?? 0
            },
            notes: [
                "seconds: the reset's started_at → finished_at (tetherctl resets); <phase>_s: from the phase's reset-phase event to the next (tetherctl events); backup_alone_s: the backup itself, from the agent's log (backing_up_s also holds the overlapped state download)"
            ])
    }

    /// How long each phase of `reset` took: from its `reset-phase` event to the next one (the
    /// last to the reset's end), phases with the same name summed; names with `-` as `_`.
    private func phaseSeconds(of reset: JSONValue, finishedAt end: Double) async throws -> [String: Double] {
        let id = reset["id"]?.stringValue
        let events = try await agent.events("reset-phase", partition: partition).filter { $0["reset_id"]?.stringValue == id }
        let starts = events.compactMap { event -> (String, Double)? in
            guard let phase = event["phase"]?.stringValue, let at = Self.time(event["at"]) else { return nil }
            return (phase.replacingOccurrences(of: "-", with: "_"), at)
        }
        var seconds: [String: Double] = [:]
        for (index, (phase, at)) in starts.enumerated() {
            let next = index + 1 < starts.count ? starts[index + 1].1 : end
            seconds[phase, default: 0] += max(0, next - at)
        }
        return seconds
    }

    /// Backup API copy of the live store plus an in-place rewrite of the same rows (one transaction).
    private func floor() async throws -> Double {
        let copy = cluster.dir.appending("floor-store-copy.sqlite")
        let backup = try await SQLWorkload.backup(agent.store(partition), to: copy)
        let rewrite = try await SQLWorkload.run(plainCopy, """
            ATTACH '\(copy)' AS src;
            BEGIN;
            DELETE FROM main.orders;
            INSERT INTO main.orders (id, customer, total, note) SELECT id, customer, total, note FROM src.orders;
            COMMIT;
            """)
        SQLWorkload.removeDatabase(copy)
        return backup + rewrite
    }

    /// The backup's own time, from the agent's log line `client reset ID: store backed up to
    /// PATH in S s (…)`: the backing-up phase also holds the overlapped state download.
    static func backupSeconds(in log: String, reset id: String) -> Double? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("client reset \(id): store backed up to") }),
            let range = line.range(of: #" in ([0-9.]+) s "#, options: .regularExpression)
        else { return nil }
        return Double(line[range].dropFirst(4).dropLast(3))
    }

    static func time(_ value: JSONValue?) -> Double? {
        guard let text = value?.stringValue else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)?.timeIntervalSince1970
    }
}
