import Foundation
import Testing
import TetherProtocol
import TetherServer

/// ``BindRules/verifyLineage(_:clientFile:)`` case by case: what the server recorded for a
/// store identity against what the store says of its history (docs/sync-model.md, "Store
/// lineage").
@Suite struct BindRulesLineageTests {
    static let identity = ClientFileIdentity(id: 5, salt: 50)

    static func record(integrated: Int64, salt: Int64, confirmed: Int64 = 0) -> ClientFileRecord {
        ClientFileRecord(
            identity: identity, integratedSeq: integrated, integratedVersion: 0, integratedSalt: salt, confirmedVersion: confirmed,
            lastSeen: Date())
    }

    static func bind(
        acknowledged: Int64, last: Int64, sent: [StoreLineage.SentRange] = [], version: Int64 = 10, lineage: Bool = true
    ) -> BindRequest {
        BindRequest(
            session: 1, partition: "store-1", token: "t", identity: identity,
            lastServerVersion: ServerVersion(version: version, salt: 1), schemaVersion: 1,
            lineage: lineage ? StoreLineage(uploadSalt: 99, integratedSeq: acknowledged, lastSeq: last, sent: sent) : nil)
    }

    static func code(_ request: BindRequest, _ record: ClientFileRecord) -> SyncErrorCode? {
        BindRules.verifyLineage(request, clientFile: record)?.code
    }

    @Test func aStoreThatAgreesBinds() {
        // Everything acknowledged.
        #expect(Self.code(Self.bind(acknowledged: 8, last: 8), Self.record(integrated: 8, salt: 7)) == nil)
        // Unsynced changes beyond what the server has.
        #expect(Self.code(Self.bind(acknowledged: 8, last: 20), Self.record(integrated: 8, salt: 7)) == nil)
        // The acknowledgement was lost (or the agent killed before recording it): the range holds it.
        let sent = [StoreLineage.SentRange(salt: 7, firstSeq: 9, lastSeq: 15)]
        #expect(Self.code(Self.bind(acknowledged: 8, last: 15, sent: sent), Self.record(integrated: 12, salt: 7)) == nil)
        #expect(Self.code(Self.bind(acknowledged: 8, last: 15, sent: sent), Self.record(integrated: 15, salt: 7)) == nil)
        // Several unacknowledged sessions: the last integration's range is found among them.
        let two = [StoreLineage.SentRange(salt: 6, firstSeq: 9, lastSeq: 12), StoreLineage.SentRange(salt: 7, firstSeq: 13, lastSeq: 20)]
        #expect(Self.code(Self.bind(acknowledged: 8, last: 20, sent: two), Self.record(integrated: 12, salt: 6)) == nil)
        #expect(Self.code(Self.bind(acknowledged: 8, last: 20, sent: two), Self.record(integrated: 20, salt: 7)) == nil)
        // A new identity's first bind after a reset: the store's acknowledged seq is the old one's.
        #expect(Self.code(Self.bind(acknowledged: 40, last: 55), Self.record(integrated: 0, salt: 0)) == nil)
    }

    @Test func aStoreBehindItsOwnHistoryGets210Regressed() {
        // Restored from an image taken before seqs 9…12 were uploaded and acknowledged.
        let error = BindRules.verifyLineage(Self.bind(acknowledged: 8, last: 8), clientFile: Self.record(integrated: 12, salt: 7))
        #expect(error?.code == .badClientVersion)
        #expect(error?.message.hasPrefix("store regressed: ") == true)
        #expect(error.map { LineageCause($0) } == .regressed)
        // An image with a range recorded, but the server went further under another session.
        let sent = [StoreLineage.SentRange(salt: 7, firstSeq: 9, lastSeq: 12)]
        #expect(Self.code(Self.bind(acknowledged: 8, last: 12, sent: sent), Self.record(integrated: 18, salt: 3)) == .badClientVersion)
        // The salt matches but the seq is outside the range.
        #expect(Self.code(Self.bind(acknowledged: 8, last: 12, sent: sent), Self.record(integrated: 18, salt: 7)) == .badClientVersion)
    }

    @Test func aCopyThatWroteItselfGets210Cloned() {
        // Another copy uploaded seqs 9…12; this one has its own 9…14.
        let error = BindRules.verifyLineage(
            Self.bind(acknowledged: 8, last: 14, sent: [StoreLineage.SentRange(salt: 4, firstSeq: 9, lastSeq: 14)]),
            clientFile: Self.record(integrated: 12, salt: 7))
        #expect(error?.code == .badClientVersion)
        #expect(error?.message.hasPrefix("store identity used by another device: ") == true)
        #expect(error.map { LineageCause($0) } == .cloned)
    }

    @Test func anOlderServerVersionThanReportedGets209() {
        let error = BindRules.verifyLineage(Self.bind(acknowledged: 8, last: 8, version: 10), clientFile: Self.record(integrated: 8, salt: 7, confirmed: 14))
        #expect(error?.code == .badServerVersion)
        #expect(error.map { LineageCause($0) } == .regressed)
        #expect(Self.code(Self.bind(acknowledged: 8, last: 8, version: 14), Self.record(integrated: 8, salt: 7, confirmed: 14)) == nil)
        #expect(Self.code(Self.bind(acknowledged: 8, last: 8, version: 20), Self.record(integrated: 8, salt: 7, confirmed: 14)) == nil)
    }

    @Test func olderAgentsAndUnsaltedUploadsAreNotChecked() {
        // A protocol-2 bind carries no lineage.
        #expect(Self.code(Self.bind(acknowledged: 0, last: 0, version: 1, lineage: false), Self.record(integrated: 12, salt: 7, confirmed: 9)) == nil)
        // Uploads integrated from a protocol-2 agent carry no salt: nothing to compare.
        #expect(Self.code(Self.bind(acknowledged: 8, last: 8), Self.record(integrated: 12, salt: 0)) == nil)
    }

    @Test func theCauseComesFromTheCodeAndTheMessage() {
        #expect(LineageCause(SyncError(.divergingHistories, "store regressed: no")) == nil)
        #expect(LineageCause(SyncError(.badServerVersion, "anything")) == .regressed)
        #expect(LineageCause(SyncError(.badClientVersion, "store identity used by another device: x")) == .cloned)
    }
}
