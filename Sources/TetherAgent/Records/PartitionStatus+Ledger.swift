import Foundation
import TetherProtocol

/// What the device ledger learns of a partition (docs/server.md, "Device ledger").
extension PartitionStatus {
    /// Keeps ``unsyncedSince`` and ``lastUploadAt`` after the count of unsynced changes went
    /// from `before` to what it is now, at `now`.
    mutating func noteUnsyncedChange(from before: Int, at now: Double) {
        let after = unsyncedChanges
        if after == 0 {
            unsyncedSince = nil
        } else if before == 0 || unsyncedSince == nil {
            unsyncedSince = now
        }
        if after < before { lastUploadAt = now }
    }

    /// The partition's entry of a device report as of `now` (seconds since the epoch):
    /// absolute times become ages, as the protocol carries them. `resets`: by outcome.
    func ledgerEntry(resets: [String: Int64], at now: Double) -> DeviceReport.Entry {
        func age(_ time: Double) -> Int64 { Int64(max(0, now - time).rounded()) }
        return DeviceReport.Entry(
            partition: name.rawValue, state: state.rawValue, serverVersion: serverVersion, clientFile: clientFile,
            unsyncedChanges: Int64(unsyncedChanges), unsyncedFor: unsyncedSince.map(age), lastUploadAgo: lastUploadAt.map(age),
            lastError: lastError.map { DeviceReport.LastError(code: Int64($0.code), ago: age($0.at)) }, resets: resets,
            pendingReset: pendingReset.map { _ in pendingResetReason ?? "waiting" })
    }

    /// What the ledger is told changed when it differs (times, not ages: an age grows by itself).
    var ledgerFingerprint: LedgerFingerprint {
        LedgerFingerprint(
            state: state.rawValue, serverVersion: serverVersion, clientFile: clientFile, unsyncedChanges: unsyncedChanges,
            unsyncedSince: unsyncedSince, lastUploadAt: lastUploadAt, lastErrorCode: lastError?.code, lastErrorAt: lastError?.at,
            pendingReset: pendingReset, pendingResetReason: pendingResetReason)
    }

    struct LedgerFingerprint: Sendable, Hashable {
        var state: String
        var serverVersion: Int64
        var clientFile: Int64
        var unsyncedChanges: Int
        var unsyncedSince: Double?
        var lastUploadAt: Double?
        var lastErrorCode: Int?
        var lastErrorAt: Double?
        var pendingReset: String?
        var pendingResetReason: String?
    }
}
