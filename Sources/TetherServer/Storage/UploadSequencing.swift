import TetherProtocol

/// Which changesets of an upload a storage integrates (docs/sync-model.md): one rule for every
/// backend. Per changeset in order: one whose `lastSeq` is at or below the store's integrated
/// seq is a re-send and is skipped; one whose `afterSeq` is that seq follows it and is taken;
/// anything else is a gap, and the rest of the upload is not read.
package enum UploadSequencing {
    package struct Plan: Sendable, Hashable {
        package var accepted: [UploadChangeset]
        package var ignored: Int
        /// The store's integrated seq once the accepted changesets are in.
        package var integratedSeq: Int64
        package var gap: UploadGap?
    }

    package static func plan(_ uploads: [UploadChangeset], integratedSeq: Int64) -> Plan {
        var plan = Plan(accepted: [], ignored: 0, integratedSeq: integratedSeq, gap: nil)
        for upload in uploads {
            guard upload.lastSeq > plan.integratedSeq else {
                plan.ignored += 1
                continue
            }
            guard upload.afterSeq == plan.integratedSeq else {
                plan.gap = UploadGap(afterSeq: upload.afterSeq, integratedSeq: plan.integratedSeq)
                break
            }
            plan.accepted.append(upload)
            plan.integratedSeq = upload.lastSeq
        }
        return plan
    }
}
