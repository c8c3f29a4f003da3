import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// The ledger's intake (``DeviceLedgerIntake``), the same on both storages: grants, partitions
/// the server has, the per-user device quota, and a full ledger that refuses new entries but
/// keeps updating the ones it has (issue 46).
extension StorageConformanceTests {
    static let roomy = DeviceLedgerIntake.Limits(maxEntries: 1000, maxDevicesPerUser: 100)

    /// Makes the partitions exist, as a device's bind does.
    func makePartitions(_ storage: any ServerStorage, _ names: String...) async throws {
        for name in names { _ = try await storage.registerClientFile(in: PartitionName(name)!, now: now) }
    }

    @Test(arguments: StorageBackend.allCases)
    func theIntakeKeepsGrantedPartitionsTheServerHasAndUpdatesWhatAUserHolds(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            try await makePartitions(storage, "p", "q")
            let report = ["p", "q", "x", "nope"].map { Self.entry("d1", $0, user: "u", at: now) }
            let outcome = try await storage.admitDeviceReport(report, granted: ["p", "x"], limits: Self.roomy)
            #expect(outcome.kept == [report[0]])
            #expect(outcome.refused == [.notGranted: 2, .unknownPartition: 1])
            #expect(try await storage.devices(DeviceQuery()) == [report[0]])
            // Its grant revoked, the device's entry is still updated (an operator sees it), and
            // nothing is added.
            let later = ["p", "q"].map { Self.entry("d1", $0, state: "reset-pending", user: "u", at: now.addingTimeInterval(1)) }
            let revoked = try await storage.admitDeviceReport(later, granted: [], limits: Self.roomy)
            #expect(revoked.kept == [later[0]] && revoked.refused == [.notGranted: 1])
            #expect(try await storage.devices(DeviceQuery()) == [later[0]])
            // A report naming a partition twice keeps the last.
            let twice = [Self.entry("d1", "q", state: "syncing", user: "u", at: now), Self.entry("d1", "q", user: "u", at: now)]
            #expect(try await storage.admitDeviceReport(twice, granted: ["q"], limits: Self.roomy).kept == [twice[1]])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aUserHoldsAtMostItsQuotaOfDevices(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            try await makePartitions(storage, "p", "q")
            let limits = DeviceLedgerIntake.Limits(maxEntries: 1000, maxDevicesPerUser: 2)
            for device in ["d1", "d2"] {
                #expect(try await storage.admitDeviceReport([Self.entry(device, "p", user: "u", at: now)], granted: ["p"], limits: limits).refused.isEmpty)
            }
            // A third device of the same user is refused, whole.
            let third = try await storage.admitDeviceReport(
                ["p", "q"].map { Self.entry("d3", $0, user: "u", at: now) }, granted: ["p", "q"], limits: limits)
            #expect(third.kept.isEmpty && third.refused == [.quota: 2])
            // A device it holds may add a partition; another user has a quota of its own.
            #expect(try await storage.admitDeviceReport([Self.entry("d1", "q", user: "u", at: now)], granted: ["q"], limits: limits).kept.count == 1)
            #expect(try await storage.admitDeviceReport([Self.entry("d3", "p", user: "v", at: now)], granted: ["p"], limits: limits).kept.count == 1)
            #expect(try await storage.devices(DeviceQuery()).count == 4)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aFullLedgerRefusesNewEntriesAndKeepsUpdatingItsOwn(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            try await makePartitions(storage, "p", "q", "r")
            let limits = DeviceLedgerIntake.Limits(maxEntries: 3, maxDevicesPerUser: 3)
            let first = try await storage.admitDeviceReport(
                ["p", "q"].map { Self.entry("d1", $0, user: "u", at: now) }, granted: ["p", "q", "r"], limits: limits)
            #expect(first.kept.count == 2)
            // Room for one more: the first new entry is kept, the next refused.
            let second = try await storage.admitDeviceReport(
                ["p", "q"].map { Self.entry("d2", $0, user: "v", at: now) }, granted: ["p", "q"], limits: limits)
            #expect(second.kept.map(\.partition) == ["p"] && second.refused == [.full: 1])
            // Full: nothing new, from anyone; nothing evicted; updates go on.
            let third = try await storage.admitDeviceReport(
                ["p", "r"].map { Self.entry("d1", $0, state: "offline", user: "u", at: now.addingTimeInterval(1)) },
                granted: ["p", "r"], limits: limits)
            #expect(third.kept.map(\.partition) == ["p"] && third.refused == [.full: 1])
            let kept = try await storage.devices(DeviceQuery())
            #expect(kept.count == 3)
            #expect(kept.first { $0.user == "u" && $0.partition == "p" }?.state == "offline")
            #expect(kept.contains { $0.user == "v" && $0.deviceID == "d2" })
        }
    }
}
