import Foundation
import Logging
import TetherProtocol

extension SyncService {
    /// A store bound at a version the history does not hold, or with an identity the server
    /// does not know: performs ``HealDetection``'s verdict. A failure is logged, never the
    /// bind's answer: the device resets either way, and the next one tries again.
    func noteStoreAhead(
        reported: ServerVersion, saltInHistory: Int64?, in partition: PartitionName, head: PartitionHead, clientFile: ClientFileRecord?,
        clientFileID: Int64
    ) async {
        do {
            // A store whose identity `terminateSync` forgot still tells when it last bound.
            let lastSeen: Date? =
                if let clientFile { clientFile.lastSeen } else { try await storage.heal.forgottenClientFileLastSeen(clientFileID, of: partition) }
            let record = try await storage.heal.heal(of: partition)
            let lostSalt = record == nil ? nil : try await storage.heal.lostSalt(of: partition, version: reported.version)
            let lostByRecord = lostSalt == reported.salt
            let lostByARestore =
                record == nil ? false : try await storage.heal.lostByARestore(of: partition, version: reported.version, salt: reported.salt)
            switch HealDetection.verdict(
                reported: reported.version, inHistory: reported.version <= head.latest.version && saltInHistory == reported.salt,
                head: head, record: record, lostByRecord: lostByRecord, lostByARestore: lostByARestore, headAtStart: headsAtStart.version(of: partition),
                startedAt: headsAtStart.startedAt, clientFileLastSeen: lastSeen)
            {
            case .nothing:
                return
            case .raise(let version):
                try await storage.heal.noteLostVersion(version, of: partition)
            case .open(let window):
                let mode = await policy.snapshot.devicesAhead
                let opened = try await storage.heal.openHeal(partition, window: window, mode: mode, origin: .devicesAhead, now: now())
                metrics.healOpened()
                logger.warning(
                    "partition \(partition): a device synced up to version \(reported.version), which this server did not issue (its history ended at \(opened.restoredTo) when it started): the database was restored without the server being told; \(mode == .heal ? "devices give the lost versions back as they reset (`tether-server admin heal-done` ends it)" : "the lost versions stay lost ([history] devices_ahead = \"rollback\")")",
                    metadata: [
                        "partition": "\(partition)", "restored_to": "\(opened.restoredTo)", "lost_until": "\(opened.lostUntil)",
                        "mode": "\(mode.rawValue)",
                    ])
            }
        } catch {
            logger.error("could not record a device bound ahead of the history", metadata: ["partition": "\(partition)", "error": "\(error)"])
        }
    }
}
