import Foundation
public import TetherProtocol

extension ResetRecord {
    /// A new stable reset id: 16 lowercase hex digits.
    public static func newID() -> String {
        String(format: "%016llx", UInt64.random(in: 1...UInt64.max))
    }

    /// `<recovery_dir>/<partition>/<UTC time>-<reset id>.sqlite` (docs/contract.md: Reset steps), e.g.
    /// `/var/lib/tether/recovery/store-17/20261122T162000Z-5f2c9a1b3d4e6f70.sqlite`.
    public static func backupPath(recoveryDir: String, partition: PartitionName, id: String, at time: Double) -> String {
        "\(recoveryDir)/\(partition)/\(utcStamp(time))-\(id).sqlite"
    }

    /// `<recovery_dir>/<partition>/<UTC time>-quarantine-<reset id>.sqlite`: where a corrupt
    /// store is moved (with its `-wal` and `-shm`), beside the partition's reset backups.
    public static func quarantinePath(recoveryDir: String, partition: PartitionName, id: String, at time: Double) -> String {
        "\(recoveryDir)/\(partition)/\(utcStamp(time))-quarantine-\(id).sqlite"
    }

    static func utcStamp(_ time: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: Date(timeIntervalSince1970: time))
    }
}
