import TetherProtocol

extension BindRules {
    /// Whether a known store's own history agrees with what the server recorded for its
    /// identity (docs/sync-model.md, "Store lineage"); nil when it does. Checked after the
    /// version checks of ``verify(_:clientFile:head:saltAtVersion:)``, so a restored server
    /// still answers 211, and only for binds that carry a lineage (protocol 3).
    ///
    /// - 210 when the server integrated changes of this identity that the store has no record
    ///   of sending: the last integration is past the store's acknowledged seq, and no range the
    ///   store recorded before sending holds it under its salt. Either the store went back in
    ///   time after it uploaded them (an older image), or another device with a copy of the
    ///   store uploaded them (a clone), which the store's own seqs tell apart as well as they can.
    /// - 209 when the store binds at a server version older than one it reported at an earlier
    ///   bind: the store file went back in time.
    package static func verifyLineage(_ request: BindRequest, clientFile: ClientFileRecord) -> SyncError? {
        guard let lineage = request.lineage else { return nil }
        let integrated = clientFile.integratedSeq
        // Salt 0: integrated from an agent that did not record salts (before protocol 3).
        if integrated > lineage.integratedSeq, clientFile.integratedSalt != 0,
            !lineage.sent.contains(where: { $0.salt == clientFile.integratedSalt && $0.firstSeq <= integrated && integrated <= $0.lastSeq })
        {
            if lineage.lastSeq >= integrated {
                return SyncError(
                    .badClientVersion,
                    "\(LineageCause.cloned.prefix): the server integrated changes of client file \(clientFile.identity.id) through seq \(integrated) that this store never sent, while the store has its own changes up to seq \(lineage.lastSeq) (a copy of the store, or of its device, syncs under the same identity)",
                    hint: "the store takes a new identity by a client reset, keeping its unsynced changes in the recover modes; check for cloned devices (docs/client-reset.md)")
            }
            return SyncError(
                .badClientVersion,
                "\(LineageCause.regressed.prefix): the server integrated changes of client file \(clientFile.identity.id) through seq \(integrated), but the store's changes end at seq \(lineage.lastSeq) (restored from an older copy or disk image)",
                hint: "the store resets to the server's state, which holds the changes it lost; unsynced changes are kept in the recover modes (docs/client-reset.md)")
        }
        if request.lastServerVersion.version < clientFile.confirmedVersion {
            return SyncError(
                .badServerVersion,
                "\(LineageCause.regressed.prefix): client file \(clientFile.identity.id) had synced to server version \(clientFile.confirmedVersion), but the store binds at version \(request.lastServerVersion.version) (restored from an older copy or disk image)",
                hint: "the store resets to the server's state; unsynced changes are kept in the recover modes (docs/client-reset.md)")
        }
        return nil
    }
}
