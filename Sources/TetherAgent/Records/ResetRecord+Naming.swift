import Foundation
import TetherProtocol

extension ResetRecord {
    /// A new stable reset id: 16 lowercase hex digits.
    package static func newID() -> String {
        String(format: "%016llx", UInt64.random(in: 1...UInt64.max))
    }

    /// `<recovery_dir>/<partition>/<UTC time>-<reset id>.sqlite` (docs/contract.md: Reset steps), e.g.
    /// `/var/lib/tether/recovery/store-17/20261122T162000Z-5f2c9a1b3d4e6f70.sqlite`.
    package static func backupPath(recoveryDir: String, partition: PartitionName, id: String, at time: Double) -> String {
        "\(recoveryDir)/\(partition)/\(utcStamp(time))-\(id).sqlite"
    }

    /// `<recovery_dir>/<partition>/<UTC time>-quarantine-<reset id>.sqlite`: where a corrupt
    /// store is moved (with its `-wal` and `-shm`), beside the partition's reset backups.
    package static func quarantinePath(recoveryDir: String, partition: PartitionName, id: String, at time: Double) -> String {
        "\(recoveryDir)/\(partition)/\(utcStamp(time))-quarantine-\(id).sqlite"
    }

    /// `20261126T205301Z`: UTC to the second (with `gmtime_r`, not a `DateFormatter`, which
    /// would load ICU's data for a file name).
    static func utcStamp(_ time: Double) -> String {
        var seconds = time_t(time.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}
