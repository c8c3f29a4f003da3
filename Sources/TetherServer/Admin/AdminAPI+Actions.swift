import Foundation
import TetherProtocol

extension AdminAPI {
    /// `POST /admin/actions`: what to ask of which devices (docs/server.md, "Remote actions").
    /// Exactly one of `device` and `selection`.
    package struct ActionOrder: Codable, Sendable, Hashable {
        /// `initiate-reset`, `retry-now`, `pause`, `resume` or `diagnostics`.
        package var action: String
        /// The partition: needed by `initiate-reset`, `pause` and `resume` for one device; for a
        /// selection, each matching entry's own partition is taken unless this names one.
        package var partition: String?
        /// A device's id or name.
        package var device: String?
        package var selection: Selection?

        package init(action: String, partition: String? = nil, device: String? = nil, selection: Selection? = nil) {
            self.action = action
            self.partition = partition
            self.device = device
            self.selection = selection
        }
    }

    /// A selection of ledger entries, as `admin devices` filters them.
    package struct Selection: Codable, Sendable, Hashable {
        /// A partition name or a glob (`store-*`).
        package var partition: String?
        /// A ledger state (`reset-pending`, …) or `unhealthy`, `wedged`, `erroring`, `stale`.
        package var state: String?
        /// Not reported for this long (`90s`, `30m`, `24h`, `7d`).
        package var stale: String?
        /// Device name or id contains this.
        package var text: String?

        package init(partition: String? = nil, state: String? = nil, stale: String? = nil, text: String? = nil) {
            self.partition = partition
            self.state = state
            self.stale = stale
            self.text = text
        }

        /// For the audit record and logs: `state=reset-pending partition=store-*`.
        package var summary: String {
            [("partition", partition), ("state", state), ("stale", stale), ("text", text)]
                .compactMap { key, value in value.map { "\(key)=\($0)" } }.joined(separator: " ")
        }
    }

    /// The answer to an ``ActionOrder``: how many devices and actions were queued, and the
    /// actions (the first 100).
    package struct ActionRequest: Codable, Sendable, Hashable {
        package var action: String
        package var devices: Int
        package var queued: Int
        /// Sent at once to devices connected to this instance (the rest when they connect, or by
        /// the instance they are connected to).
        package var sentNow: Int
        package var actions: [DeviceAction]

        enum CodingKeys: String, CodingKey {
            case action, devices, queued, actions
            case sentNow = "sent_now"
        }
    }

    /// `GET /admin/actions?device=ID` and one of ``ActionRequest/actions``.
    package struct DeviceAction: Codable, Sendable, Hashable {
        package var id: Int64
        package var deviceID: String
        package var deviceName: String
        package var user: String
        package var action: String
        package var partition: String?
        package var requestedBy: String
        package var requestedAt: String
        package var expiresAt: String
        /// `queued`, `sent`, `done`, `refused`, `failed`, `expired`.
        package var state: String
        package var sentAt: String?
        package var finishedAt: String?
        package var message: String?
        package var hasDiagnostics: Bool
        /// `GET /admin/actions/ID`: the diagnostics report, a JSON object as text (the device's
        /// words: show it escaped).
        package var diagnostics: String?

        enum CodingKeys: String, CodingKey {
            case id, user, action, partition, state, message, diagnostics
            case deviceID = "device_id"
            case deviceName = "device_name"
            case requestedBy = "requested_by"
            case requestedAt = "requested_at"
            case expiresAt = "expires_at"
            case sentAt = "sent_at"
            case finishedAt = "finished_at"
            case hasDiagnostics = "has_diagnostics"
        }

        package init(_ record: DeviceActionRecord) {
            id = record.id
            deviceID = record.device.deviceID
            deviceName = record.deviceName
            user = record.device.user
            action = record.kind.rawValue
            partition = record.partition
            requestedBy = record.requestedBy
            requestedAt = Device.timestamp(record.requestedAt)
            expiresAt = Device.timestamp(record.expiresAt)
            state = record.state.rawValue
            sentAt = record.sentAt.map(Device.timestamp)
            finishedAt = record.finishedAt.map(Device.timestamp)
            message = record.message
            hasDiagnostics = record.hasReport
            diagnostics = record.report
        }
    }

    /// `GET /admin/actions?device=ID`: a device's actions, newest first, and what it accepts.
    package struct DeviceActions: Codable, Sendable, Hashable {
        package var deviceID: String
        /// The kinds the device's reports say it accepts (nil: it never said; an older agent).
        package var accepts: [String]?
        package var actions: [DeviceAction]

        enum CodingKeys: String, CodingKey {
            case accepts, actions
            case deviceID = "device_id"
        }
    }
}
