/// What a store says at bind about its own history of local changes (protocol 3), so the server
/// can tell a store that went back in time (restored from an older image) or forked (copied to
/// another device) from one that merely missed an acknowledgement (docs/sync-model.md,
/// "Store lineage").
///
/// Every session picks a random ``uploadSalt``; the server records it with the client file
/// whenever it integrates an upload of that session. Before the store sends anything in a
/// session it records, durably in the store file, the salt with the range of seqs that session
/// may send (``SentRange``). A store whose history agrees with the server's can therefore
/// always show the salt of the server's last integration in its records, unless the server
/// integrated nothing it has not acknowledged.
package struct StoreLineage: Sendable, Hashable {
    /// Uploads a session sent (or was about to send) and the server has not acknowledged yet:
    /// the seqs `firstSeq ... lastSeq` under the session's salt.
    package struct SentRange: Sendable, Hashable {
        package var salt: Int64
        package var firstSeq: Int64
        package var lastSeq: Int64

        package init(salt: Int64, firstSeq: Int64, lastSeq: Int64) {
            self.salt = salt
            self.firstSeq = firstSeq
            self.lastSeq = lastSeq
        }
    }

    /// The salt this session's uploads are integrated under (never 0).
    package var uploadSalt: Int64
    /// The highest local seq the store knows the server integrated (its acknowledged seq).
    package var integratedSeq: Int64
    /// The highest local seq the store ever gave a change (seqs are never reused).
    package var lastSeq: Int64
    /// The unacknowledged uploads the store recorded, oldest first.
    package var sent: [SentRange]

    package init(uploadSalt: Int64, integratedSeq: Int64, lastSeq: Int64, sent: [SentRange]) {
        self.uploadSalt = uploadSalt
        self.integratedSeq = integratedSeq
        self.lastSeq = lastSeq
        self.sent = sent
    }

    /// A fresh salt for a session's uploads.
    package static func freshSalt() -> Int64 { Int64.random(in: 1...Int64.max) }
}
