import Foundation

/// What the server knows about the window of history a restore lost in one partition, and
/// how far devices have given it back (docs/client-reset.md, "Healing a restored server").
/// One per partition: a later restore replaces it.
package struct HealRecord: Sendable, Hashable, Codable {
    /// How the lost window is handled (``RestoreMode``).
    package typealias Mode = RestoreMode

    /// How the server learned of the lost window.
    package enum Origin: String, Sendable, Hashable, Codable, CaseIterable {
        /// `tether-server admin restore PARTITION SNAPSHOT`.
        case snapshotRestore = "restore"
        /// `tether-server restore-backup`.
        case backupRestore = "restore-backup"
        /// A device bound ahead of the history (a database put back while the server was stopped).
        case devicesAhead = "devices-ahead"
    }

    package var partition: String
    package var mode: Mode
    package var origin: Origin
    /// The version the partition was restored to (A): history after it is the window.
    package var restoredTo: Int64
    /// The highest version known lost (B): the history's end before the restore when the
    /// server knew it, else the highest version a device reported.
    package var lostUntil: Int64
    /// The highest view put back so far (``restoredTo`` until a device contributed).
    package var healedTo: Int64
    /// Contributions completed (one per device reset that contributed).
    package var devices: Int
    /// Rows changed on the server by heals.
    package var healedChanges: Int64
    /// Whether the server knows the salts of the lost versions (then a view must match one).
    package var windowKnown: Bool
    package var openedAt: Date
    /// When an operator closed it (`admin heal-done`) or a later restore replaced it; nil while open.
    package var closedAt: Date?

    package init(
        partition: String, mode: Mode, origin: Origin, restoredTo: Int64, lostUntil: Int64, healedTo: Int64,
        devices: Int, healedChanges: Int64, windowKnown: Bool, openedAt: Date, closedAt: Date?
    ) {
        self.partition = partition
        self.mode = mode
        self.origin = origin
        self.restoredTo = restoredTo
        self.lostUntil = lostUntil
        self.healedTo = healedTo
        self.devices = devices
        self.healedChanges = healedChanges
        self.windowKnown = windowKnown
        self.openedAt = openedAt
        self.closedAt = closedAt
    }

    /// Devices' views are wanted: a heal, not closed.
    package var isHealing: Bool { mode == .heal && closedAt == nil }
}

/// A lost window as a restore found it: the history's end before the restore, and the salts
/// of the lost versions it still had (empty when none were retained).
package struct LostWindow: Sendable, Hashable {
    package var restoredTo: Int64
    package var lostUntil: Int64
    package var salts: [Int64: Int64]

    package init(restoredTo: Int64, lostUntil: Int64, salts: [Int64: Int64]) {
        self.restoredTo = restoredTo
        self.lostUntil = lostUntil
        self.salts = salts
    }
}
