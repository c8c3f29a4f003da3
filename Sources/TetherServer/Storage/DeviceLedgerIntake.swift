/// Which entries of one device report the ledger keeps (docs/server.md, "Device ledger"), as a
/// pure decision over facts the storage reads in the report's transaction. The entries are one
/// user's (the token's) and one device id's; the ledger's key is (user, device id, partition),
/// so a report can only ever write its own identity's entries. For each entry, in order:
///
/// 1. an entry already in the ledger (the same user, device and partition) is updated;
/// 2. a partition the user is not granted is refused (`not_granted`);
/// 3. a partition the server does not have is refused (`unknown_partition`): names a glob
///    grant matches are endless, partitions are not;
/// 4. a device id the user does not hold yet, when the user holds `maxDevicesPerUser`
///    already, is refused (`quota`);
/// 5. a new entry when the ledger holds `maxEntries` is refused (`full`): a report never
///    evicts anything.
package enum DeviceLedgerIntake {
    /// Why an entry of a report was not kept: a fixed set, the label values of
    /// `tether_server_device_reports_refused_total{reason}`.
    package enum Refusal: String, Sendable, Hashable, CaseIterable, Comparable {
        case notGranted = "not_granted"
        case unknownPartition = "unknown_partition"
        case quota
        case full

        package static func < (a: Refusal, b: Refusal) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

    /// `[devices] max_entries` and `max_devices_per_user`.
    package struct Limits: Sendable, Hashable {
        package var maxEntries: Int
        package var maxDevicesPerUser: Int
        package init(maxEntries: Int, maxDevicesPerUser: Int) {
            self.maxEntries = maxEntries
            self.maxDevicesPerUser = maxDevicesPerUser
        }
    }

    /// What the storage knows when the report arrives.
    package struct Facts: Sendable, Hashable {
        /// The partitions this user's device already has entries for.
        package var heldPartitions: Set<String>
        /// Of the report's partitions, those the server has.
        package var knownPartitions: Set<String>
        /// Device ids the user holds in the ledger (read only when the device holds none).
        package var userDevices: Int
        /// Entries in the whole ledger (read only when some entry is new).
        package var totalEntries: Int

        package init(heldPartitions: Set<String>, knownPartitions: Set<String>, userDevices: Int = 0, totalEntries: Int = 0) {
            self.heldPartitions = heldPartitions
            self.knownPartitions = knownPartitions
            self.userDevices = userDevices
            self.totalEntries = totalEntries
        }
    }

    /// What is kept and how many entries were refused, by reason.
    package struct Outcome: Sendable, Hashable {
        package var kept: [DeviceLedgerEntry] = []
        package var refused: [Refusal: Int] = [:]
        package init(kept: [DeviceLedgerEntry] = [], refused: [Refusal: Int] = [:]) {
            self.kept = kept
            self.refused = refused
        }
        package var refusedCount: Int { refused.values.reduce(0, +) }
    }

    /// The report's entries with one per partition (the last one a report names wins).
    package static func distinct(_ entries: [DeviceLedgerEntry]) -> [DeviceLedgerEntry] {
        var index: [String: Int] = [:]
        var result: [DeviceLedgerEntry] = []
        for entry in entries {
            if let at = index[entry.partition] {
                result[at] = entry
            } else {
                index[entry.partition] = result.count
                result.append(entry)
            }
        }
        return result
    }

    /// Whether ``Facts/totalEntries`` is needed: some entry would be new.
    package static func addsEntries(_ entries: [DeviceLedgerEntry], held: Set<String>) -> Bool {
        entries.contains { !held.contains($0.partition) }
    }

    /// Decides one report: `entries` (one user and device, one per partition: ``distinct(_:)``),
    /// `granted` the partitions of them the user has a grant on.
    package static func decide(_ entries: [DeviceLedgerEntry], granted: Set<String>, facts: Facts, limits: Limits) -> Outcome {
        var outcome = Outcome()
        let newDevice = facts.heldPartitions.isEmpty
        var room = max(0, limits.maxEntries - facts.totalEntries)
        for entry in entries {
            if facts.heldPartitions.contains(entry.partition) {
                outcome.kept.append(entry)
                continue
            }
            let refusal: Refusal? =
                if !granted.contains(entry.partition) { .notGranted }
                else if !facts.knownPartitions.contains(entry.partition) { .unknownPartition }
                else if newDevice && facts.userDevices >= limits.maxDevicesPerUser { .quota }
                else if room == 0 { .full }
                else { nil }
            if let refusal {
                outcome.refused[refusal, default: 0] += 1
            } else {
                room -= 1
                outcome.kept.append(entry)
            }
        }
        return outcome
    }
}
