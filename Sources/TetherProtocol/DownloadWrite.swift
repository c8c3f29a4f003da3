/// What a downloaded change does to its row in a store that holds unsynced local changes of
/// the same row (docs/sync-model.md, "Integrating downloads with unsynced local changes"). The
/// local changes will come after the download in server order, so they win; what is left of
/// the change is written by the row-apply rules (``RowChange/write(rowExists:)``). Pure: the
/// store looks up the row and its pending changes, asks the change, performs ``write``.
package struct DownloadWrite: Sendable, Hashable {
    /// The write to make; ``RowWrite/unchanged`` when the change is skipped.
    package var write: RowWrite
    /// Whether the pending local change overrides the whole change.
    package var isSkipped: Bool
    /// Fields the change carried that keep their pending local value.
    package var fieldsKeptLocal: Int

    package init(write: RowWrite, isSkipped: Bool = false, fieldsKeptLocal: Int = 0) {
        self.write = write
        self.isSkipped = isSkipped
        self.fieldsKeptLocal = fieldsKeptLocal
    }

    static func skipped(keepingLocal fields: Int = 0) -> Self {
        Self(write: .unchanged, isSkipped: true, fieldsKeptLocal: fields)
    }
}

extension RowChange {
    /// The write this downloaded change makes to its row, `pending` being the net effect of
    /// the store's unsynced local changes of the row (nil: none):
    /// - a delete of a row with a pending local insert is skipped (the insert re-creates it later);
    /// - an insert or update of a row with a pending local delete is skipped (the delete comes later);
    /// - an insert or update of a row with a pending local insert is skipped (the insert sets
    ///   every field later);
    /// - otherwise the fields a pending local update carries keep their local values, and the
    ///   rest of the change is written by ``write(rowExists:)``; when that creates the row (the
    ///   server deleted it before, and re-creates it), the pending local fields go with it.
    package func write(rowExists: Bool, pending: RowChange?) -> DownloadWrite {
        switch (kind, pending?.kind) {
        case (.delete, .insert?), (.insert, .delete?), (.update, .delete?):
            return .skipped()
        case (.insert, .insert?), (.update, .insert?):
            return .skipped(keepingLocal: fields.count)
        case (.insert, .update?), (.update, .update?):
            let local = pending?.fields ?? [:]
            var remaining = self
            var kept = 0
            for name in local.keys where remaining.fields.removeValue(forKey: name) != nil { kept += 1 }
            var write = remaining.write(rowExists: rowExists)
            if case .insert(let fields) = write { write = .insert(fields.merging(local) { _, local in local }) }
            return DownloadWrite(write: write, fieldsKeptLocal: kept)
        case (_, nil), (.delete, .update?), (.delete, .delete?):
            return DownloadWrite(write: write(rowExists: rowExists))
        }
    }
}
