import TetherProtocol

/// The one rule that ties a partition's head to its retained history, and the only place
/// that decides how an operation that moves the head keeps it (docs/server.md, "History").
///
/// For a head `(latest, base)`:
/// 1. `base.version <= latest.version`;
/// 2. the retained history holds exactly the versions `base.version + 1 ... latest.version`,
///    one entry each, in one lineage;
/// 3. `latest.salt` is the salt of the newest entry, or `base.salt` when the history is empty;
///    version 0 has salt 0.
///
/// Together these say that the version and salt a state download carries (always `latest`)
/// bind, and that every version a device may resume from (`base ... latest`) has the salt a
/// store at that version carries. Integration appends `latest + 1` and compaction moves
/// `base` to a retained entry, so both keep it by construction; a restore is the operation
/// that needs a decision, made by ``restore(current:snapshot:saltInRetainedHistory:)``.
package enum HistoryInvariant {
    /// What a restore to a snapshot leaves.
    package struct RestorePlan: Sendable, Hashable {
        /// The partition's new head: always `latest == snapshot`.
        package var head: PartitionHead
        /// True: entries up to the snapshot's version stay (they are the snapshot's own
        /// lineage). False: every entry goes and the snapshot's version becomes the base.
        package var keepsHistory: Bool
    }

    /// A restore to a snapshot taken at `snapshot`.
    ///
    /// When the retained history still holds the snapshot's version with the snapshot's salt
    /// (`saltInRetainedHistory`, nil when that version is not retained), every entry up to it
    /// belongs to the snapshot's lineage: entries after it go, the base stays. Otherwise the
    /// history that led to the snapshot is gone — a restore forward to a snapshot taken after
    /// the point an earlier restore went back to, or history compacted past the snapshot — and
    /// the snapshot's version becomes the base: devices at that exact version bind, devices
    /// before it are told their history was compacted (222), devices elsewhere that their
    /// history diverged (211). Either way one reset brings a device to a version that binds.
    package static func restore(current: PartitionHead, snapshot: ServerVersion, saltInRetainedHistory: Int64?) -> RestorePlan {
        let sameLineage = snapshot.version >= current.base.version && saltInRetainedHistory == snapshot.salt
        if sameLineage {
            return RestorePlan(head: PartitionHead(latest: snapshot, base: current.base), keepsHistory: true)
        }
        return RestorePlan(head: PartitionHead(latest: snapshot, base: snapshot), keepsHistory: false)
    }

    /// What is wrong with `head` and the retained `history` (versions oldest first); empty
    /// when the invariant holds.
    package static func violations(head: PartitionHead, history: [ServerVersion]) -> [String] {
        var problems: [String] = []
        let (latest, base) = (head.latest, head.base)
        if base.version > latest.version {
            problems.append("base version \(base.version) is after the latest version \(latest.version)")
        }
        if base.version == 0 && base.salt != 0 { problems.append("version 0 has salt \(base.salt)") }
        let expected = base.version < latest.version ? Array((base.version + 1)...latest.version) : []
        let versions = history.map(\.version)
        if versions != expected {
            let shown = versions.count > 6 ? "\(versions.prefix(3))…\(versions.suffix(3))" : "\(versions)"
            problems.append("history holds versions \(shown), expected \(base.version + 1)...\(latest.version)")
        }
        let latestSalt = history.last(where: { $0.version == latest.version })?.salt ?? (latest.version == base.version ? base.salt : nil)
        if latestSalt != latest.salt {
            problems.append("the latest version \(latest.version) has salt \(latest.salt) but the history says \(latestSalt.map(String.init) ?? "nothing")")
        }
        return problems
    }

    /// The head of a partition whose history broke the invariant (a database written by a
    /// version that restored forward without it): the history is dropped and the latest
    /// version becomes the base, so the state a device downloads binds again.
    package static func repaired(_ head: PartitionHead) -> PartitionHead {
        PartitionHead(latest: head.latest, base: head.latest)
    }

    /// What repairing partition `name` means, with `head` and its retained `history`: nil when
    /// the invariant holds; else the problems found and the ``repaired(_:)`` head, which a
    /// storage writes after dropping the partition's history.
    package static func repair(_ name: String, head: PartitionHead, history: [ServerVersion]) -> HistoryRepair? {
        let problems = violations(head: head, history: history)
        guard !problems.isEmpty else { return nil }
        return HistoryRepair(partition: name, problems: problems, head: repaired(head))
    }
}
