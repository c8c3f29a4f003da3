import Foundation
import Logging
import TetherProtocol
import TetherSyncClient

/// Device reports for the server's ledger (docs/server.md, "Device ledger"), sent on the
/// agent's connection as ``DeviceReportSchedule`` says.
extension SyncAgent {
    /// Runs while `connection` is up (its task group cancels it when the connection ends).
    func reportLoop(_ connection: SyncConnection) async {
        let deviceID: String
        do {
            deviceID = try stateDatabase.deviceID()
        } catch {
            logger.warning("cannot read or make the device id in \(stateDatabase.path): the server's device ledger does not hear from this device: \(error)")
            return
        }
        // A round trip first: the server's welcome (which says whether it keeps a ledger) has
        // then arrived, as it comes before any answer.
        do { try await connection.ping() } catch { return }
        var schedule = DeviceReportSchedule(interval: .seconds(await partitions.configuration().device.reportIntervalSeconds))
        while !Task.isCancelled, !(await connection.isClosed) {
            let statuses = await statuses()
            let current = Dictionary(statuses.map { ($0.name.rawValue, $0.ledgerFingerprint) }, uniquingKeysWith: { a, _ in a })
            let now = ContinuousClock.now
            switch schedule.decide(current, at: now) {
            case .wait(let until, orChange: true):
                await reportWake.sleep(for: until - now)
            case .wait(let until, orChange: false):
                // The changes wait for the interval; statuses are not read again before it ends.
                try? await Task.sleep(for: until - now)  // cancelled: the loop checks and ends
            case .send(let names):
                let chosen = Set(names)
                let reported = statuses.filter { chosen.contains($0.name.rawValue) }
                do {
                    guard try await sendReports(reported, deviceID: deviceID, on: connection) else {
                        logger.info("the server speaks a sync protocol without device reports: it keeps no device ledger")
                        return
                    }
                } catch {
                    // The connection is going (its loop reports why) or the token cannot be read
                    // (the binds say so): the next connection reports everything again.
                    logger.debug("device report not sent: \(error)")
                    return
                }
                schedule.didSend(current.filter { chosen.contains($0.key) }, of: current, at: now)
            }
        }
    }

    /// Sends `statuses` as one or more reports (at most ``ProtocolLimits/maxReportEntries`` each);
    /// false when the connection's protocol has no reports.
    private func sendReports(_ statuses: [PartitionStatus], deviceID: String, on connection: SyncConnection) async throws -> Bool {
        let token = try await partitions.readToken()
        let device = await partitions.configuration().device
        // Protocol 8: what `[device] remote_actions` accepts, read now (a reload changes it).
        let accepted = Self.acceptedActions(device, serverProtocol: await connection.welcome?.protocolVersion)
        let at = Date().timeIntervalSince1970
        let entries = statuses.map { $0.ledgerEntry(resets: resetCounts($0.name), at: at) }
        var start = 0
        repeat {
            let end = min(entries.count, start + ProtocolLimits.maxReportEntries)
            let sent = try await connection.report(DeviceReport(
                token: token, deviceID: deviceID, deviceName: device.name, release: TetherVersion.release,
                entries: Array(entries[start..<end]), acceptedActions: accepted))
            guard sent else { return false }
            start = end
        } while start < entries.count
        return true
    }

    /// The accepted remote actions a report carries: `[device] remote_actions` on a connection
    /// whose server speaks protocol 8 or later; nil (not sent) to an older one, whose reports
    /// end after the entries.
    static func acceptedActions(_ device: DeviceSettings, serverProtocol: Int?) -> [RemoteActionKind]? {
        guard let serverProtocol, serverProtocol >= TetherVersion.remoteActions else { return nil }
        return device.remoteActions
    }

    /// The partition's finished resets by outcome (none when the state database cannot say).
    private func resetCounts(_ partition: PartitionName) -> [String: Int64] {
        // Unreadable: this report counts no resets (the resets' own reads report the error).
        guard let records = try? stateDatabase.resets(partition: partition) else { return [:] }
        var counts: [String: Int64] = [:]
        for record in records where record.outcome != .inProgress { counts[record.outcome.rawValue, default: 0] += 1 }
        return counts
    }
}
