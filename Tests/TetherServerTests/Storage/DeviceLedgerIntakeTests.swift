import Foundation
import Testing
@testable import TetherServer

/// Which entries of a report the ledger keeps (``DeviceLedgerIntake``), every rule in its order.
@Suite struct DeviceLedgerIntakeTests {
    static let at = Date(timeIntervalSince1970: 1_700_000_000)
    static let limits = DeviceLedgerIntake.Limits(maxEntries: 10, maxDevicesPerUser: 2)

    static func entries(_ partitions: String...) -> [DeviceLedgerEntry] {
        partitions.map { DeviceLedgerEntry(deviceID: "d", deviceName: "n", user: "u", release: "r", partition: $0, state: "synced", reportedAt: at) }
    }

    static func decide(
        _ entries: [DeviceLedgerEntry], granted: Set<String>, held: Set<String> = [], known: Set<String>? = nil, devices: Int = 0, total: Int = 0,
        limits: DeviceLedgerIntake.Limits = limits
    ) -> (kept: [String], refused: [DeviceLedgerIntake.Refusal: Int]) {
        let facts = DeviceLedgerIntake.Facts(
            heldPartitions: held, knownPartitions: known ?? Set(entries.map(\.partition)), userDevices: devices, totalEntries: total)
        let outcome = DeviceLedgerIntake.decide(entries, granted: granted, facts: facts, limits: limits)
        return (outcome.kept.map(\.partition), outcome.refused)
    }

    @Test func grantedPartitionsTheServerHasAreKept() {
        let outcome = Self.decide(Self.entries("a", "b", "c"), granted: ["a", "c"], known: ["a", "b"])
        #expect(outcome.kept == ["a"])
        #expect(outcome.refused == [.notGranted: 1, .unknownPartition: 1])
    }

    @Test func anEntryTheDeviceHoldsIsUpdatedWhateverItsGrantsAndTheLimits() {
        let outcome = Self.decide(
            Self.entries("a", "b"), granted: [], held: ["a"], known: [], devices: 2, total: 10)
        #expect(outcome.kept == ["a"] && outcome.refused == [.notGranted: 1])
    }

    @Test func aNewDeviceBeyondTheQuotaIsRefusedWhole() {
        #expect(Self.decide(Self.entries("a", "b"), granted: ["a", "b"], devices: 2) == ([], [.quota: 2]))
        #expect(Self.decide(Self.entries("a", "b"), granted: ["a", "b"], devices: 1).kept == ["a", "b"])
        // A device the user holds already is not a new one.
        #expect(Self.decide(Self.entries("a", "b"), granted: ["a", "b"], held: ["a"], devices: 2).kept == ["a", "b"])
    }

    @Test func aFullLedgerRefusesNewEntriesBeyondItsRoom() {
        #expect(Self.decide(Self.entries("a", "b", "c"), granted: ["a", "b", "c"], total: 8) == (["a", "b"], [.full: 1]))
        #expect(Self.decide(Self.entries("a", "b"), granted: ["a", "b"], held: ["b"], total: 10) == (["b"], [.full: 1]))
        // Over the bound (other instances wrote meanwhile): still no room.
        #expect(Self.decide(Self.entries("a"), granted: ["a"], total: 12) == ([], [.full: 1]))
    }

    @Test func theReasonsAreCheckedInOrder() {
        // Not granted before unknown, unknown before quota, quota before full.
        #expect(Self.decide(Self.entries("a"), granted: [], known: [], devices: 2, total: 10).refused == [.notGranted: 1])
        #expect(Self.decide(Self.entries("a"), granted: ["a"], known: [], devices: 2, total: 10).refused == [.unknownPartition: 1])
        #expect(Self.decide(Self.entries("a"), granted: ["a"], devices: 2, total: 10).refused == [.quota: 1])
    }

    @Test func aPartitionNamedTwiceCountsOnceTheLastWins() {
        var entries = Self.entries("a", "b", "a")
        entries[2].state = "offline"
        let distinct = DeviceLedgerIntake.distinct(entries)
        #expect(distinct.map(\.partition) == ["a", "b"] && distinct[0].state == "offline")
        #expect(DeviceLedgerIntake.addsEntries(distinct, held: ["a"]) && !DeviceLedgerIntake.addsEntries(distinct, held: ["a", "b"]))
    }
}
