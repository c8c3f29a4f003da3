import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// The device ledger, the same on both storages.
extension StorageConformanceTests {
    static func entry(_ device: String, _ partition: String, state: String = "synced", user: String = "alice", at: Date) -> DeviceLedgerEntry {
        DeviceLedgerEntry(
            deviceID: device, deviceName: "name of \(device)", user: user, release: "0.1.0", partition: partition, state: state,
            reportedAt: at)
    }

    /// The key is (user, device id, partition): a report under one user's token never
    /// replaces another user's entry, even for the same device id (issue 46).
    @Test(arguments: StorageBackend.allCases)
    func theLedgerIsKeyedByUserDeviceAndPartition(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let victim = Self.entry("d1", "p", state: "synced", user: "bob", at: now.addingTimeInterval(-60))
            try await storage.recordDeviceReports([victim])
            var forged = Self.entry("d1", "p", state: "syncing", user: "mallory", at: now)
            forged.unsyncedChanges = 9
            try await storage.recordDeviceReports([forged])
            #expect(try await storage.devices(DeviceQuery()) == [forged, victim])
            // Each user's own report replaces only its own entry.
            let again = Self.entry("d1", "p", state: "offline", user: "bob", at: now.addingTimeInterval(1))
            try await storage.recordDeviceReports([again])
            #expect(try await storage.devices(DeviceQuery()) == [again, forged])
            // The same device id under two users is two devices for the stale count.
            let counts = try await storage.deviceCounts(staleBefore: now.addingTimeInterval(10), wedgedBefore: now.addingTimeInterval(-900))
            #expect(counts.staleDevices == 2)
        }
    }

    /// Over `max_entries` after the age cutoff, housekeeping takes from the identities holding
    /// the most entries, oldest first, never from one under its fair share: here the small
    /// user's entries are the oldest of all and are kept.
    @Test(arguments: StorageBackend.allCases)
    func expiryOverTheBoundNeverTakesAnUnderShareIdentitysEntries(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let small = (0..<2).map { Self.entry("s\($0)", "p", user: "small", at: now.addingTimeInterval(-3600 - Double($0))) }
            let fleet = (0..<6).map { Self.entry("f\($0)", "p", user: "fleet", at: now.addingTimeInterval(-Double($0))) }
            try await storage.recordDeviceReports(small + fleet)
            // 8 entries, 6 at most: each user keeps at most 4 (4 + 2 = 6); fleet loses f4 and f5.
            #expect(try await storage.expireDevices(reportedBefore: now.addingTimeInterval(-86400), maxEntries: 6) == 2)
            let kept = try await storage.devices(DeviceQuery())
            #expect(kept.map(\.deviceID) == ["f0", "f1", "f2", "f3", "s0", "s1"])
            #expect(try await storage.expireDevices(reportedBefore: now.addingTimeInterval(-86400), maxEntries: 6) == 0)
            // The age cutoff goes first, for everyone.
            #expect(try await storage.expireDevices(reportedBefore: now.addingTimeInterval(-60), maxEntries: 6) == 2)
            #expect(try await storage.devices(DeviceQuery()).map(\.user) == ["fleet", "fleet", "fleet", "fleet"])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func theLedgerKeepsTheLastReportPerDeviceAndPartition(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            #expect(try await storage.devices(DeviceQuery()).isEmpty)
            var first = Self.entry("d1", "p", state: "syncing", at: now.addingTimeInterval(-60))
            first.unsyncedChanges = 3
            first.unsyncedSince = Date(timeIntervalSince1970: 1_800_000_000.5)
            first.lastErrorCode = 211
            first.lastErrorAt = Date(timeIntervalSince1970: 1_800_000_100)
            first.resets = ["recovered": 2, "discarded": 1]
            first.pendingReset = "manual mode"
            try await storage.recordDeviceReports([first, Self.entry("d2", "p", at: now.addingTimeInterval(-7200))])
            #expect(try await storage.devices(DeviceQuery()) == [first, Self.entry("d2", "p", at: now.addingTimeInterval(-7200))])
            // A later report replaces the device's entry for that partition only.
            let second = Self.entry("d1", "p", state: "reset-pending", at: now)
            try await storage.recordDeviceReports([second, Self.entry("d1", "q", at: now)])
            #expect(try await storage.devices(DeviceQuery(partition: "p")).map(\.deviceID) == ["d1", "d2"])
            #expect(try await storage.devices(DeviceQuery(partition: "p")).first == second)
            #expect(try await storage.devices(DeviceQuery(state: "reset-pending")) == [second])
            #expect(try await storage.devices(DeviceQuery(reportedBefore: now.addingTimeInterval(-3600))).map(\.deviceID) == ["d2"])
            #expect(try await storage.devices(DeviceQuery(limit: 1)).count == 1)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func theLedgerCountsStatesStaleDevicesAndWedgedEntries(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            var wedged = Self.entry("d1", "p", state: "syncing", at: now)
            wedged.unsyncedChanges = 4
            wedged.unsyncedSince = now.addingTimeInterval(-3600)
            var moving = wedged
            moving.partition = "q"
            moving.lastUploadAt = now.addingTimeInterval(-60)
            try await storage.recordDeviceReports([
                wedged, moving, Self.entry("d2", "p", at: now.addingTimeInterval(-2 * 86400)),
                Self.entry("d2", "q", state: "reset-pending", at: now.addingTimeInterval(-3 * 86400)),
            ])
            let counts = try await storage.deviceCounts(staleBefore: now.addingTimeInterval(-86400), wedgedBefore: now.addingTimeInterval(-900))
            #expect(counts == DeviceCounts(byState: ["syncing": 2, "synced": 1, "reset-pending": 1], staleDevices: 1, wedged: 1))
            #expect(wedged.isWedged(before: now.addingTimeInterval(-900)) && !moving.isWedged(before: now.addingTimeInterval(-900)))
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func theLedgerExpiresOldEntriesAndKeepsToItsBound(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            try await storage.recordDeviceReports((0..<5).map { Self.entry("d\($0)", "p", at: now.addingTimeInterval(-Double($0) * 86400)) })
            // d4 is older than the cutoff; of the rest, the three most recent are kept.
            #expect(try await storage.expireDevices(reportedBefore: now.addingTimeInterval(-3.5 * 86400), maxEntries: 3) == 2)
            #expect(try await storage.devices(DeviceQuery()).map(\.deviceID) == ["d0", "d1", "d2"])
            #expect(try await storage.expireDevices(reportedBefore: now.addingTimeInterval(-3.5 * 86400), maxEntries: 3) == 0)
        }
    }
}
