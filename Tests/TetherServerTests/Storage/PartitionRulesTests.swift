import Testing
import TetherProtocol
@testable import TetherServer

/// The rules both server storages follow for partition rows, versions, salts and flags
/// (``PartitionRules``, ``ServerFlags/metaRows``); the conformance tests run them through both.
@Suite struct PartitionRulesTests {
    let partition = StoredPartition(
        id: 7, head: PartitionHead(latest: ServerVersion(version: 9, salt: 90), base: ServerVersion(version: 4, salt: 40)))

    @Test func aCreatedPartitionHasVersionZeroWithSaltZeroAndNoHistory() {
        let head = PartitionRules.createdHead
        #expect(head.latest == ServerVersion(version: 0, salt: 0))
        #expect(head.base == head.latest)
        #expect(HistoryInvariant.violations(head: head, history: []).isEmpty)
    }

    @Test func freshSaltsAreNeverTheSaltOfVersionZero() {
        for _ in 0..<10_000 { #expect(PartitionRules.freshSalt() > 0) }
    }

    @Test func theNextVersionFollowsTheLatestWithAFreshSalt() {
        let next = PartitionRules.version(after: partition.head.latest)
        #expect(next.version == 10)
        #expect(next.salt > 0)
    }

    @Test func aSaltIsKnownForVersionZeroAndTheBaseAndReadFromTheHistoryOtherwise() {
        #expect(PartitionRules.salt(of: 0, in: partition) == .known(0))
        #expect(PartitionRules.salt(of: 0, in: nil) == .known(0), "version 0 exists before the partition does")
        #expect(PartitionRules.salt(of: 3, in: nil) == .known(nil), "no partition, no other version")
        #expect(PartitionRules.salt(of: 4, in: partition) == .known(40))
        #expect(PartitionRules.salt(of: 9, in: partition) == .history(partitionID: 7))
        #expect(PartitionRules.salt(of: 2, in: partition) == .history(partitionID: 7), "compacted away: the history says it is gone")
    }

    @Test func aClientFileAnswersForVersionsFromItsLastIntegrationOnly() {
        #expect(PartitionRules.integratedSeq(12, integratedVersion: 5, atOrBefore: 5) == .known(12))
        #expect(PartitionRules.integratedSeq(12, integratedVersion: 5, atOrBefore: 8) == .known(12))
        #expect(PartitionRules.integratedSeq(12, integratedVersion: 5, atOrBefore: 4) == .history)
    }

    @Test func snapshotIDsAreSixteenHexDigits() {
        for _ in 0..<100 {
            let id = PartitionRules.snapshotID()
            #expect(id.count == 16)
            #expect(id.allSatisfy { $0.isHexDigit })
        }
    }

    @Test func flagsRoundTripThroughTheirMetaRows() {
        let all: [ServerFlags] = [
            ServerFlags(),
            ServerFlags(syncTerminated: true),
            ServerFlags(recoveryOverride: false, recoveryOverrideConfigValue: true),
            ServerFlags(syncTerminated: true, recoveryOverride: true, recoveryOverrideConfigValue: false),
        ]
        for flags in all {
            let meta = Dictionary(uniqueKeysWithValues: flags.metaRows.map { ($0.key, $0.value) })
            #expect(ServerFlags(meta: meta) == flags)
        }
    }

    @Test func missingMetaRowsAreUnsetFlags() {
        #expect(ServerFlags(meta: [:]) == ServerFlags())
        #expect(ServerFlags(meta: ["recovery_override": nil, "other": 5]) == ServerFlags())
        #expect(ServerFlags(meta: ["sync_terminated": 0]).syncTerminated == false)
        #expect(ServerFlags(meta: ["sync_terminated": 1]).syncTerminated == true)
    }
}
