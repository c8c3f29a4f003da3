/// Which reset backups may go: a partition keeps the `keep` newest backups, and an older one
/// is removed only once its own reset finished (docs/contract.md: Reset steps: kept until `keep_backups` newer
/// ones exist). A quarantined store is not a backup: it is never removed and does not count.
public enum BackupRetention {
    /// The records (of one partition) whose backup file should be removed now.
    public static func expired(_ records: [ResetRecord], keep: Int) -> [ResetRecord] {
        let newestFirst = records.filter { !$0.isQuarantine }.sorted { ($0.startedAt, $0.id) > ($1.startedAt, $1.id) }
        return newestFirst.dropFirst(max(keep, 0)).filter { $0.phase == .done && !$0.backupRemoved }
    }
}
