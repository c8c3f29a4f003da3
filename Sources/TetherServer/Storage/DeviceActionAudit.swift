import Foundation
import TetherProtocol

/// The audit records of remote actions (docs/server.md, "Audit"): `device.action` for a
/// request (who, what, which devices), `device.action-result` for a device's answer and
/// `device.action-expired` for one that was never answered. Never a report's contents.
package enum DeviceActionAudit {
    /// One request, of `actions` (one per device and partition): the subject names the device,
    /// or how many devices a selection took; the detail says what and, for a selection, which.
    package static func requested(_ actions: [DeviceActionRecord], selection: String?, actor: String, at: Date) -> AuditRecord {
        let devices = Set(actions.map(\.device))
        let first = actions.first
        let subject = devices.count == 1 ? first?.deviceName ?? "-" : "\(devices.count) devices"
        var detail = "\(first?.kind.rawValue ?? "-")"
        let partitions = Set(actions.compactMap(\.partition)).sorted()
        if partitions.count == 1 { detail += " of \(partitions[0])" } else if partitions.count > 1 { detail += " of \(partitions.count) partitions" }
        if let ids = actions.map(\.id).minAndMax { detail += ids.0 == ids.1 ? " (#\(ids.0))" : " (#\(ids.0)–#\(ids.1))" }
        if let selection { detail += "; selection: \(selection)" }
        if devices.count > 1 { detail += "; devices: " + Self.list(actions.map(\.deviceName)) }
        return AuditRecord(at: at, actor: actor, action: "device.action", subject: subject, detail: detail)
    }

    /// A device's answer.
    package static func answered(_ record: DeviceActionRecord, outcome: DeviceActionOutcome) -> AuditRecord {
        AuditRecord(
            at: outcome.at, actor: "device", action: "device.action-result", subject: record.deviceName,
            detail: "#\(record.id) \(Self.what(record)): \(outcome.state.rawValue): \(outcome.message)")
    }

    /// An action nobody answered in time.
    package static func expired(_ record: DeviceActionRecord, actor: String, at: Date) -> AuditRecord {
        AuditRecord(
            at: at, actor: actor, action: "device.action-expired", subject: record.deviceName,
            detail: "#\(record.id) \(Self.what(record)): \(record.message ?? "expired")")
    }

    /// `initiate-reset of store-1`, `diagnostics`.
    static func what(_ record: DeviceActionRecord) -> String {
        record.partition.map { "\(record.kind.rawValue) of \($0)" } ?? record.kind.rawValue
    }

    /// Names, at most 20, then how many more (an audit detail stays short).
    static func list(_ names: [String]) -> String {
        let unique = Array(Set(names)).sorted()
        let shown = unique.prefix(20).joined(separator: ", ")
        return unique.count > 20 ? shown + " and \(unique.count - 20) more" : shown
    }
}

extension DeviceActionRecord {
    /// Why an action expired, for its record and the audit.
    static func expiredMessage(_ record: DeviceActionRecord) -> String {
        record.state == .sent || record.sentAt != nil
            ? "expired: sent, but the device never answered" : "expired: the device did not connect before the action expired"
    }

    /// The accepted kinds as stored: names joined by spaces.
    static func kindsText(_ kinds: [RemoteActionKind]) -> String { kinds.map(\.rawValue).joined(separator: " ") }

    static func kinds(fromText text: String) -> [RemoteActionKind] {
        text.split(separator: " ").map { RemoteActionKind(rawValue: String($0)) }
    }
}

extension Sequence where Element: Comparable {
    /// The least and the greatest element, nil when empty.
    var minAndMax: (Element, Element)? {
        var iterator = makeIterator()
        guard let first = iterator.next() else { return nil }
        var low = first
        var high = first
        while let next = iterator.next() {
            low = Swift.min(low, next)
            high = Swift.max(high, next)
        }
        return (low, high)
    }
}
