import Foundation
import TetherProtocol

/// Remote actions (docs/server.md, "Remote actions"): what operators asked devices to do, kept
/// by both storages and shared by the instances of one PostgreSQL, from the request until the
/// device answers or the action expires; then kept as a record for
/// ``DeviceActionRecord/keptFor`` and pruned. Every request, outcome and expiry writes its audit
/// record in the same transaction.
package protocol DeviceActionStorage: Sendable {
    /// Queues `actions`, all or none, with `audit` (the request): throws
    /// ``DeviceActionError/tooManyPending(device:limit:)`` when a device would have more than
    /// `maxPendingPerDevice` pending. `audit` makes the request's record from them with their
    /// ids. Returns them with their ids, in order.
    func queueActions(
        _ actions: [DeviceActionRecord], maxPendingPerDevice: Int, audit: @Sendable ([DeviceActionRecord]) -> AuditRecord
    ) async throws -> [DeviceActionRecord]
    /// The pending actions (queued or sent, not expired at `now`) of `devices`, oldest first.
    func pendingActions(for devices: [DeviceKey], now: Date) async throws -> [DeviceActionRecord]
    /// The devices with pending actions at `now` (at most `limit`), for a sweep.
    func devicesWithPendingActions(now: Date, limit: Int) async throws -> [DeviceKey]
    /// Marks actions sent (a connection wrote them); an answered or expired one stays as it is.
    func markActionsSent(ids: [Int64], at: Date) async throws
    /// Keeps a device's answer to a pending action of its own (`key`), with `audit`; false when
    /// the action is not pending for that device any more (answered, expired, or another's).
    func finishAction(_ outcome: DeviceActionOutcome, key: DeviceKey, audit: AuditRecord) async throws -> Bool
    /// A device's actions, newest first, without their reports (at most `limit`).
    func deviceActions(deviceID: String, limit: Int) async throws -> [DeviceActionRecord]
    /// One action with its report.
    func deviceAction(id: Int64) async throws -> DeviceActionRecord?
    /// Marks the pending actions whose time ran out at `now` expired, each with an audit record
    /// by `actor`; removes the ended ones that ended before `pruneBefore`. Returns those expired.
    func expireActions(now: Date, pruneBefore: Date, actor: String) async throws -> [DeviceActionRecord]
    /// What a device's reports say it accepts (`[device] remote_actions`), kept per device.
    func recordAcceptedActions(_ key: DeviceKey, kinds: [RemoteActionKind], at: Date) async throws
    /// The kinds each of the device id's users last said it accepts (nil: never said, an agent
    /// older than protocol 8).
    func acceptedActions(deviceID: String) async throws -> [RemoteActionKind]?
}

/// A device as the ledger keys it: the user its token named and the id it reports (an enrolled
/// device's user is its name).
package struct DeviceKey: Sendable, Hashable, Codable, Comparable {
    package var user: String
    package var deviceID: String

    package init(user: String, deviceID: String) {
        self.user = user
        self.deviceID = deviceID
    }

    package static func < (a: Self, b: Self) -> Bool { (a.user, a.deviceID) < (b.user, b.deviceID) }
}

/// Where an action stands: pending (``queued``, ``sent``) or ended.
package enum DeviceActionState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Waiting for the device to connect (or for a connection here to send it).
    case queued
    /// Written to a connection of the device; sent again on its next connection until answered.
    case sent
    case done
    case refused
    case failed
    /// Not answered before its expiry (`[devices] action_expire_after_seconds`).
    case expired

    package var isPending: Bool { self == .queued || self == .sent }

    package init(_ outcome: RemoteActionResult.Outcome) {
        switch outcome {
        case .done: self = .done
        case .refused: self = .refused
        case .failed: self = .failed
        }
    }

    /// The states as an SQL list, for both storages' check constraint.
    static var sqlList: String { allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ") }
}

/// One action for one device.
package struct DeviceActionRecord: Sendable, Hashable {
    /// Assigned by the storage (0 before it is queued).
    package var id: Int64
    package var device: DeviceKey
    /// The device's name when it was asked (as the ledger showed it).
    package var deviceName: String
    package var kind: RemoteActionKind
    package var partition: String?
    /// Who asked: `admin` (the API's token), `console`.
    package var requestedBy: String
    package var requestedAt: Date
    package var expiresAt: Date
    package var state: DeviceActionState
    package var sentAt: Date?
    package var finishedAt: Date?
    /// The device's message (or why it expired).
    package var message: String?
    /// A diagnostics report (JSON text; only read by ``DeviceActionStorage/deviceAction(id:)``).
    package var report: String?
    /// Whether it has a report (also when the report itself was not read).
    package var hasReport: Bool

    /// How long ended actions are kept (then pruned): 30 days.
    package static let keptFor: TimeInterval = 30 * 86400

    package init(
        id: Int64 = 0, device: DeviceKey, deviceName: String, kind: RemoteActionKind, partition: String?, requestedBy: String,
        requestedAt: Date, expiresAt: Date, state: DeviceActionState = .queued, sentAt: Date? = nil, finishedAt: Date? = nil,
        message: String? = nil, report: String? = nil, hasReport: Bool = false
    ) {
        self.id = id
        self.device = device
        self.deviceName = deviceName
        self.kind = kind
        self.partition = partition
        self.requestedBy = requestedBy
        self.requestedAt = requestedAt
        self.expiresAt = expiresAt
        self.state = state
        self.sentAt = sentAt
        self.finishedAt = finishedAt
        self.message = message
        self.report = report
        self.hasReport = hasReport || report != nil
    }

    /// As it travels to the device.
    package var action: RemoteAction { RemoteAction(id: id, kind: kind, partition: partition) }
}

/// A device's answer as the storage keeps it.
package struct DeviceActionOutcome: Sendable, Hashable {
    package var id: Int64
    package var state: DeviceActionState
    package var message: String
    package var report: String?
    package var at: Date

    package init(id: Int64, state: DeviceActionState, message: String, report: String?, at: Date) {
        self.id = id
        self.state = state
        self.message = message
        self.report = report
        self.at = at
    }
}

/// Why actions were not queued.
package enum DeviceActionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The device has `limit` pending actions already.
    case tooManyPending(device: String, limit: Int)

    package var description: String {
        switch self {
        case .tooManyPending(let device, let limit):
            "device \(device) has \(limit) actions pending already; wait for them to be answered or to expire"
        }
    }
}
