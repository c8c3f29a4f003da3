import Foundation
import Testing
import TetherProtocol
import TetherTestTraits
@testable import TetherServer

/// Remote actions, the same on both storages (issue 49; docs/server.md "Remote actions"):
/// queued all or none with their audit record, pending per device until answered or expired,
/// answered only by their own device, pruned after they ended.
extension StorageConformanceTests {
    static let till = DeviceKey(user: "shop-1", deviceID: "d1")
    static let other = DeviceKey(user: "shop-1", deviceID: "d2")

    func pendingAction(_ key: DeviceKey, _ kind: RemoteActionKind = .diagnostics, partition: String? = nil, expiresIn: TimeInterval = 3600) -> DeviceActionRecord {
        DeviceActionRecord(
            device: key, deviceName: "name of \(key.deviceID)", kind: kind, partition: partition, requestedBy: "admin", requestedAt: now,
            expiresAt: now.addingTimeInterval(expiresIn))
    }

    /// The request's audit record, as ``ServerControl`` makes it.
    static func audit(_ records: [DeviceActionRecord]) -> AuditRecord {
        DeviceActionAudit.requested(records, selection: nil, actor: "admin", at: Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test(arguments: StorageBackend.allCases)
    func actionsAreQueuedWithTheirAuditAndPendingUntilAnswered(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let queued = try await storage.queueActions(
                [pendingAction(Self.till, .initiateReset, partition: "store-1"), pendingAction(Self.other), pendingAction(Self.till, .retryNow)],
                maxPendingPerDevice: 32, audit: Self.audit)
            #expect(queued.map(\.state) == [.queued, .queued, .queued])
            #expect(queued[0].id < queued[1].id && queued[1].id < queued[2].id)
            let pending = try await storage.pendingActions(for: [Self.till], now: now)
            #expect(pending.map(\.id) == [queued[0].id, queued[2].id])
            #expect(pending[0].action == RemoteAction(id: queued[0].id, kind: .initiateReset, partition: "store-1"))
            #expect(try await storage.devicesWithPendingActions(now: now, limit: 10) == [Self.till, Self.other])
            let audit = try await storage.auditRecords(afterID: 0, limit: 10)
            #expect(audit.count == 1 && audit[0].action == "device.action" && audit[0].subject == "2 devices", "\(audit)")
            #expect(audit[0].detail.contains("#\(queued[0].id)"), "the ids the storage gave: \(audit[0].detail)")

            try await storage.markActionsSent(ids: [queued[0].id], at: now)
            #expect(try await storage.pendingActions(for: [Self.till], now: now).first?.state == .sent)
            // Answered by another device: not kept.
            let answer = DeviceActionOutcome(id: queued[0].id, state: .done, message: "initiated", report: nil, at: now)
            let record = queued[0]
            #expect(try await !storage.finishAction(answer, key: Self.other, audit: DeviceActionAudit.answered(record, outcome: answer)))
            #expect(try await storage.finishAction(answer, key: Self.till, audit: DeviceActionAudit.answered(record, outcome: answer)))
            #expect(try await !storage.finishAction(answer, key: Self.till, audit: DeviceActionAudit.answered(record, outcome: answer)), "answered once")
            #expect(try await storage.pendingActions(for: [Self.till], now: now).map(\.id) == [queued[2].id])
            let listed = try await storage.deviceActions(deviceID: "d1", limit: 10)
            #expect(listed.map(\.id) == [queued[2].id, queued[0].id])
            #expect(listed[1].state == .done && listed[1].message == "initiated" && listed[1].finishedAt != nil)
            #expect(try await storage.auditRecords(afterID: 0, limit: 10).map(\.action) == ["device.action", "device.action-result"])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aRequestOverADevicesPendingLimitQueuesNothing(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            _ = try await storage.queueActions([pendingAction(Self.till), pendingAction(Self.till)], maxPendingPerDevice: 3, audit: Self.audit)
            await #expect(throws: DeviceActionError.tooManyPending(device: "name of d1", limit: 3)) {
                _ = try await storage.queueActions([pendingAction(Self.other), pendingAction(Self.till), pendingAction(Self.till)], maxPendingPerDevice: 3, audit: Self.audit)
            }
            #expect(try await storage.pendingActions(for: [Self.other], now: now).isEmpty, "all or none")
            #expect(try await storage.auditRecords(afterID: 0, limit: 10).count == 1)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func diagnosticsAreKeptAndReadOnlyByTheirId(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let queued = try await storage.queueActions([pendingAction(Self.till)], maxPendingPerDevice: 32, audit: Self.audit)
            let report = "{\"status\":\"<script>alert(1)</script>\"}"
            let answer = DeviceActionOutcome(id: queued[0].id, state: .done, message: "report sent", report: report, at: now)
            #expect(try await storage.finishAction(answer, key: Self.till, audit: DeviceActionAudit.answered(queued[0], outcome: answer)))
            let listed = try #require(try await storage.deviceActions(deviceID: "d1", limit: 1).first)
            #expect(listed.hasReport && listed.report == nil, "a list does not carry the reports")
            #expect(try await storage.deviceAction(id: queued[0].id)?.report == report)
            #expect(try await storage.deviceAction(id: queued[0].id + 1000) == nil)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func unansweredActionsExpireWithAnAuditRecordAndEndedOnesArePruned(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            let queued = try await storage.queueActions(
                [pendingAction(Self.till, expiresIn: 10), pendingAction(Self.other, expiresIn: 10), pendingAction(Self.till, .retryNow, expiresIn: 3600)],
                maxPendingPerDevice: 32, audit: Self.audit)
            try await storage.markActionsSent(ids: [queued[1].id], at: now)
            #expect(try await storage.pendingActions(for: [Self.till, Self.other], now: now.addingTimeInterval(20)).map(\.id) == [queued[2].id])
            let expired = try await storage.expireActions(now: now.addingTimeInterval(20), pruneBefore: now.addingTimeInterval(-86400), actor: "server")
            #expect(expired.map(\.id) == [queued[0].id, queued[1].id] && expired.allSatisfy { $0.state == .expired })
            #expect(expired[0].message?.contains("did not connect") == true && expired[1].message?.contains("never answered") == true)
            #expect(try await storage.expireActions(now: now.addingTimeInterval(20), pruneBefore: now.addingTimeInterval(-86400), actor: "server").isEmpty)
            let answer = DeviceActionOutcome(id: queued[0].id, state: .done, message: "late", report: nil, at: now.addingTimeInterval(30))
            #expect(try await !storage.finishAction(answer, key: Self.till, audit: DeviceActionAudit.answered(queued[0], outcome: answer)), "too late")
            #expect(try await storage.auditRecords(afterID: 0, limit: 10).filter { $0.action == "device.action-expired" }.count == 2)
            // Ended ones go once older than the cutoff; pending ones never.
            _ = try await storage.expireActions(now: now.addingTimeInterval(40), pruneBefore: now.addingTimeInterval(30), actor: "server")
            #expect(try await storage.deviceActions(deviceID: "d1", limit: 10).map(\.id) == [queued[2].id])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func whatADeviceAcceptsIsKeptPerDevice(_ backend: StorageBackend) async throws {
        try await withStorage(backend) { storage, _ in
            #expect(try await storage.acceptedActions(deviceID: "d1") == nil)
            try await storage.recordAcceptedActions(Self.till, kinds: [.initiateReset, .diagnostics], at: now)
            #expect(try await storage.acceptedActions(deviceID: "d1") == [.initiateReset, .diagnostics])
            try await storage.recordAcceptedActions(Self.till, kinds: [], at: now.addingTimeInterval(1))
            #expect(try await storage.acceptedActions(deviceID: "d1") == [])
        }
    }
}
