import Foundation
import HTTPTypes
import Logging
import TetherProtocol

/// Which devices an action request takes.
package enum RemoteActionTarget: Sendable, Hashable {
    /// One device, by its id or its name (the ledger's, or an enrolled device's).
    case device(String)
    /// Every device with a ledger entry the filter matches.
    case selection(AdminAPI.Selection)
}

/// Remote actions from the operator's side (docs/server.md, "Remote actions"): a request
/// queues one action per device (per matching entry, for the kinds that take a partition), all
/// or none, with its audit record; it is sent at once to the devices connected here and
/// announced to the other instances; each device runs it under its own rules and answers.
extension ServerControl {
    /// Queues `kind` for the devices `target` takes, asked by `actor` (`admin`, `console`).
    package func requestActions(
        _ kind: RemoteActionKind, partition: String?, target: RemoteActionTarget, actor: String
    ) async throws -> AdminAPI.ActionRequest {
        guard kind.isKnown else {
            throw AdminError(
                .badRequest, "unknown action \(kind.rawValue.debugDescription)",
                hint: "one of \(RemoteActionKind.all.map(\.rawValue).joined(separator: ", "))")
        }
        if let partition, PartitionName(partition) == nil { throw AdminError.illegalPartition(partition) }
        let at = now()
        let settings = configuration.devices
        var targets: [(key: DeviceKey, name: String, partition: String?)] = []
        var selectionText: String? = nil
        switch target {
        case .device(let text):
            if kind.needsPartition && partition == nil {
                throw AdminError(.badRequest, "\(kind) needs a partition", hint: "name it with --partition (the API's \"partition\")")
            }
            let device = try await resolveActionDevice(text)
            targets = [(device.key, device.name, partition)]
        case .selection(let selection):
            selectionText = selection.summary.isEmpty ? "every device" : selection.summary
            let entries = try await selectionEntries(selection, limit: settings.maxDevicesPerAction)
            var seen: Set<String> = []
            for entry in entries {
                let actionPartition = kind.needsPartition ? partition ?? entry.partition : partition
                // One action per device, or per device and partition for the kinds that take one.
                guard seen.insert("\(entry.user)\u{0}\(entry.deviceID)\u{0}\(actionPartition ?? "")").inserted else { continue }
                targets.append((DeviceKey(user: entry.user, deviceID: entry.deviceID), entry.deviceName, actionPartition))
            }
            guard !targets.isEmpty else {
                throw AdminError(.notFound, "no device matches the selection (\(selectionText ?? ""))", hint: "`tether-server admin devices` with the same filter lists what it matches")
            }
        }
        let records = targets.map { target in
            DeviceActionRecord(
                device: target.key, deviceName: target.name, kind: kind, partition: target.partition, requestedBy: actor, requestedAt: at,
                expiresAt: at.addingTimeInterval(TimeInterval(settings.actionExpireAfterSeconds)))
        }
        let queued: [DeviceActionRecord]
        do {
            // The audit record names the ids the storage assigns; both are written in one transaction.
            queued = try await storage.actions.queueActions(
                records, maxPendingPerDevice: DeviceLedgerSettings.maxPendingActionsPerDevice,
                audit: { [selectionText] in DeviceActionAudit.requested($0, selection: selectionText, actor: actor, at: at) })
        } catch let error as DeviceActionError {
            throw AdminError(.conflict, error.description, hint: "`tether-server admin device actions NAME` shows what it has pending")
        }
        let deviceIDs = Set(queued.map(\.device.deviceID))
        let sent = await service.deliverPendingActions(toDeviceIDs: deviceIDs)
        if deviceIDs.count <= 50 {
            for id in deviceIDs.sorted() { await bus?.announce(.actionsQueued(id)) }
        } else {
            await bus?.announce(.actionsQueued(nil))
        }
        logger.notice("remote action requested", metadata: [
            "action": "\(kind)", "partition": "\(partition ?? "-")", "devices": "\(deviceIDs.count)", "actions": "\(queued.count)",
            "actor": "\(actor)", "selection": "\(selectionText ?? "-")",
        ])
        return AdminAPI.ActionRequest(
            action: kind.rawValue, devices: deviceIDs.count, queued: queued.count, sentNow: sent,
            actions: queued.prefix(100).map(AdminAPI.DeviceAction.init))
    }

    /// How many devices a selection takes (a confirmation shows it before anything is queued).
    package func countSelection(_ selection: AdminAPI.Selection) async throws -> Int {
        let (filter, staleBefore, wedgedBefore) = try ledgerFilter(selection)
        return try await storage.ledger.countDevices(matching: filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
    }

    /// A device's actions, newest first, and what it accepts.
    package func deviceActions(deviceID: String, limit: Int = 50) async throws -> AdminAPI.DeviceActions {
        async let actions = storage.actions.deviceActions(deviceID: deviceID, limit: limit)
        async let accepts = storage.actions.acceptedActions(deviceID: deviceID)
        return AdminAPI.DeviceActions(
            deviceID: deviceID, accepts: try await accepts?.map(\.rawValue), actions: try await actions.map(AdminAPI.DeviceAction.init))
    }

    /// One action with its diagnostics report.
    package func deviceAction(id: Int64) async throws -> AdminAPI.DeviceAction {
        guard let record = try await storage.actions.deviceAction(id: id) else {
            throw AdminError(.notFound, "no remote action has the id \(id)", hint: "`tether-server admin device actions NAME` lists a device's actions")
        }
        return AdminAPI.DeviceAction(record)
    }

    /// Expires the actions whose time ran out (each with its audit record), prunes ended ones
    /// older than ``DeviceActionRecord/keptFor``, and sends pending ones to devices connected
    /// here that have not had them (a lost announcement). Returns how many expired.
    @discardableResult
    package func sweepActions() async throws -> Int {
        let at = now()
        let expired = try await storage.actions.expireActions(now: at, pruneBefore: at.addingTimeInterval(-DeviceActionRecord.keptFor), actor: "server")
        for record in expired {
            logger.notice("remote action expired", metadata: [
                "device": "\(record.deviceName)", "device_id": "\(record.device.deviceID)", "action_id": "\(record.id)",
                "action": "\(record.kind)", "reason": "\(record.message ?? "-")",
            ])
        }
        await service.deliverPendingActions()
        return expired.count
    }

    /// The device `text` names: a device id in the ledger, else a device name in the ledger,
    /// else an enrolled device's name or id (one that has not reported yet).
    func resolveActionDevice(_ text: String) async throws -> (key: DeviceKey, name: String) {
        let at = now()
        let (staleBefore, wedgedBefore) = cutoffs(at)
        var keys = try await storage.ledger.deviceKeys(
            matching: DeviceLedgerFilter(deviceID: text), staleBefore: staleBefore, wedgedBefore: wedgedBefore, limit: 1000)
        if keys.isEmpty {
            keys = try await storage.ledger.deviceKeys(
                matching: DeviceLedgerFilter(text: text), staleBefore: staleBefore, wedgedBefore: wedgedBefore, limit: 10_000
            ).filter { $0.deviceName == text }
        }
        let devices = Dictionary(keys.map { (DeviceKey(user: $0.user, deviceID: $0.deviceID), $0.deviceName) }, uniquingKeysWith: { a, _ in a })
        if devices.count > 1 {
            throw AdminError(
                .conflict, "\(text.debugDescription) names \(devices.count) devices: \(devices.keys.sorted().prefix(10).map { "\($0.deviceID) (user \($0.user))" }.joined(separator: ", "))",
                hint: "name the device by its id")
        }
        if let (key, name) = devices.first { return (key, name) }
        // An enrolled device that has not reported yet: its user is its name.
        let enrolled = try await enrolledDevice(id: text)
        let record: DeviceIdentityRecord?
        if let enrolled { record = enrolled } else { record = try? await storage.identity.device(named: text) }
        if let record {
            guard record.revokedAt == nil else { throw AdminError.deviceRevoked(record.name) }
            return (DeviceKey(user: record.name, deviceID: record.id), record.name)
        }
        throw AdminError(
            .notFound, "no device has the id or name \(text.debugDescription)",
            hint: "`tether-server admin devices` lists the devices that reported; an action waits for a device that is enrolled but never reported")
    }

    /// The ledger entries a selection takes: refused whole when they span more devices than
    /// `[devices] max_devices_per_action`.
    private func selectionEntries(_ selection: AdminAPI.Selection, limit: Int) async throws -> [DeviceLedgerKey] {
        let (filter, staleBefore, wedgedBefore) = try ledgerFilter(selection)
        let devices = try await storage.ledger.countDevices(matching: filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore)
        guard devices <= limit else {
            throw AdminError(
                .badRequest, "the selection takes \(devices) devices; one request may take at most \(limit) ([devices] max_devices_per_action)",
                hint: "narrow the selection (a partition glob, a state), or raise max_devices_per_action")
        }
        return try await storage.ledger.deviceKeys(matching: filter, staleBefore: staleBefore, wedgedBefore: wedgedBefore, limit: limit * 64)
    }

    /// The storage's filter for a selection, and the stale and wedged cutoffs now.
    private func ledgerFilter(_ selection: AdminAPI.Selection) throws -> (DeviceLedgerFilter, Date, Date) {
        let at = now()
        let (staleBefore, wedgedBefore) = cutoffs(at)
        var filter = DeviceLedgerFilter(partition: selection.partition.flatMap { $0.isEmpty ? nil : $0 }, text: selection.text.flatMap { $0.isEmpty ? nil : $0 })
        if let state = selection.state, !state.isEmpty {
            guard DeviceLedgerFilter.stateNames.contains(state) else {
                throw AdminError(.badRequest, "unknown state \(state.debugDescription)", hint: "one of \(DeviceLedgerFilter.stateNames.joined(separator: ", "))")
            }
            filter.state = state
        }
        if let stale = selection.stale, !stale.isEmpty {
            guard let seconds = DurationText.seconds(stale) else {
                throw AdminError(.badRequest, "“stale” takes a duration such as 90s, 30m, 24h or 7d, not \(stale.debugDescription)")
            }
            filter.reportedBefore = at.addingTimeInterval(-TimeInterval(seconds))
        }
        return (filter, staleBefore, wedgedBefore)
    }

    private func cutoffs(_ at: Date) -> (stale: Date, wedged: Date) {
        (at.addingTimeInterval(-TimeInterval(configuration.devices.staleAfterSeconds)),
         at.addingTimeInterval(-TimeInterval(configuration.devices.wedgedAfterSeconds)))
    }
}
