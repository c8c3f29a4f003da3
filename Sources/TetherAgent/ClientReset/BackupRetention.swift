/// Which reset backups may go: a partition keeps the backups of its `keep` newest resets, and
/// an older one is removed only once its own reset finished (docs/contract.md, "Reset steps": kept until
/// `keep_backups` newer ones exist). A repeated reset of an unchanged store shares the backup
/// of the reset it repeats: a file counts once, and goes only when no kept reset names it.
/// A quarantined store is not a backup: it is never removed and does not count.
package enum BackupRetention {
    /// The records (of one partition) whose backup file should be removed now.
    package static func expired(_ records: [ResetRecord], keep: Int) -> [ResetRecord] {
        let newestFirst = records.filter { !$0.isQuarantine }.sorted { ($0.startedAt, $0.id) > ($1.startedAt, $1.id) }
        var kept: Set<String> = []
        var expired: [ResetRecord] = []
        for record in newestFirst {
            if kept.contains(record.backupPath) { continue }
            if kept.count < max(keep, 0) {
                kept.insert(record.backupPath)
            } else if record.phase == .done && !record.backupRemoved {
                expired.append(record)
            }
        }
        return expired
    }
}
