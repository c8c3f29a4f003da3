import TetherProtocol

/// The bookkeeping both storages do as they apply one changeset to the stored state: each
/// change's row images (``RowImages``, what filtered sessions' downloads are cut from) and, for
/// an uploading session with subscriptions or write rules, the write checks — a change that would touch a row
/// outside its scope is not applied but becomes a compensating write, reverted on the device
/// by the server's row (or its removal). The storages read and write rows; this decides.
struct StateChangeApplier {
    /// What the uploading session may write (``WriteScope/whole``: no checks, as for heal).
    let scope: WriteScope
    private var images: [RowImages.Image] = []
    private var refused: [Int] = []
    private var writes: [CompensatingWrite] = []
    /// The rows to revert on the device, once each, in the order of their first refusal.
    private var revertOrder: [(table: String, key: RowKey, encodedKey: [UInt8])] = []
    private var revertKeys: Set<RevertKey> = []
    private var index = 0

    private struct RevertKey: Hashable {
        var table: String
        var key: [UInt8]
    }

    init(scope: WriteScope) {
        self.scope = scope
    }

    /// Whether changes must be checked before they are written (the stored row is read first).
    var checksWrites: Bool { scope.checksWrites }

    /// The change at the next index, of `kind` to `table`'s row `key` (as encoded), turns the
    /// stored `before` (nil: absent) into `outcome`: true when it is to be written, false when
    /// it is refused (nothing is written and the change is left out of the history).
    mutating func admit(
        _ kind: RowChange.Kind, table: String, key: [UInt8], before: [UInt8]?, outcome: StoredFields.Outcome
    ) throws(StorageError) -> Bool {
        defer { index += 1 }
        let after: RowImages.After
        switch outcome {
        case .delete: after = .absent
        case .unchanged: after = before.map { .stored($0) } ?? .absent
        case .put(let row): after = kind == .insert && before == nil ? .changeFields : .stored(row)
        }
        if checksWrites {
            let rowKey: RowKey
            let beforeFields: [String: FieldValue]?
            let afterFields: [String: FieldValue]?
            do {
                rowKey = try RowKey.decode(key)
                beforeFields = try before.map { try FieldValue.decodeFields($0) }
                afterFields = switch outcome {
                case .delete: nil
                case .unchanged: beforeFields
                case .put(let row): try FieldValue.decodeFields(row)
                }
            } catch {
                throw .corrupt("state")
            }
            if let refusal = scope.refusal(of: kind, table: table, key: rowKey, before: beforeFields, after: afterFields) {
                refused.append(index)
                writes.append(refusal)
                if revertKeys.insert(RevertKey(table: table, key: key)).inserted { revertOrder.append((table, rowKey, key)) }
                return false
            }
        }
        images.append(RowImages.Image(before: before, after: after))
        return true
    }

    /// The changes to store in the history (without the refused ones), their images, and the
    /// compensation record (nil when nothing was refused). Each refused row is reverted to the
    /// server's row as the whole changeset left it (`finalRow`: its stored bytes, nil when
    /// absent), or removed when the session may not hold that row: the device then holds what
    /// the server holds, its accepted changes of the same upload included.
    func finish(
        _ changes: ChangeRows, finalRow: (_ table: String, _ key: [UInt8]) throws -> [UInt8]?
    ) throws -> (kept: ChangeRows, images: RowImages, compensation: CompensationRecord?) {
        guard !refused.isEmpty else { return (changes, RowImages(images), nil) }
        let skip = Set(refused)
        let kept = changes.changeset.changes.enumerated().filter { !skip.contains($0.offset) }.map(\.element)
        var reverts: [RowChange] = []
        for (table, key, encodedKey) in revertOrder {
            let fields: [String: FieldValue]?
            do {
                fields = try finalRow(table, encodedKey).map { try FieldValue.decodeFields($0) }
            } catch let error as StorageError {
                throw error
            } catch {
                throw StorageError.corrupt("state")
            }
            if let fields, scope.read.holds(table, key: key, fields) {
                reverts.append(.insert(table, key, fields))
            } else {
                reverts.append(.delete(table, key))
            }
        }
        return (ChangeRows(Changeset(kept)), RowImages(images), CompensationRecord(writes: writes, reverts: Changeset(reverts)))
    }
}
