import GRDB
import TetherProtocol

/// One entry of the change log as stored: which row changed and how. An update also names the
/// columns it changed; the values are never in the log, they are the row's own.
struct LogEntry: Sendable, Hashable {
    var seq: Int64
    var table: String
    var key: RowKey
    var kind: RowChange.Kind
    /// The columns an update changed (empty for inserts, which carry every column, and deletes).
    var columns: [String]

    var row: LoggedRow { LoggedRow(table: table, key: key) }

    /// Reads `seq, tbl, pk, kind, cols`; nil for an entry the triggers did not write.
    init?(_ row: Row) {
        let kindName: String? = row[3]
        guard let table: String = row[1], let key = RowKey(row[2] as DatabaseValue),
            let kindName, let kind = RowChange.Kind(rawValue: kindName)
        else { return nil }
        seq = row[0]
        self.table = table
        self.key = key
        self.kind = kind
        let list: String? = row[4]
        columns = kind == .update ? Self.columns(list) : []
    }

    /// The change to upload with the row's values now (`row`: its value columns, nil when it no
    /// longer exists; `held`: what ``HeldValues`` kept for it then): an insert carries every
    /// column, an update its changed ones. Nil for an insert or update of a row that no longer
    /// exists and left nothing held — the change that removed it is logged after this one.
    func change(row: [String: FieldValue]?, held: [String: FieldValue]? = nil) -> RowChange? {
        switch kind {
        case .delete: return .delete(table, key)
        case .insert: return row.map { .insert(table, key, $0) }
        case .update:
            guard let values = row ?? held else { return nil }
            var fields: [String: FieldValue] = [:]
            for column in columns { if let value = values[column] { fields[column] = value } }
            return .update(table, key, fields)
        }
    }

    /// The net effect of one row's entries (in seq order) by ``RowChange/followed(by:)``, with
    /// the row's values now: the kind, and for an update the union of the changed columns. A
    /// row that no longer exists gives a net update the values held for it (``HeldValues``),
    /// and a net insert none.
    static func net(_ entries: [LogEntry], row: [String: FieldValue]?, held: [String: FieldValue]? = nil) -> RowChange? {
        guard let net = fold(entries) else { return nil }
        switch net.kind {
        case .delete: return net
        case .insert: return RowChange(table: net.table, key: net.key, kind: .insert, fields: row ?? [:])
        case .update: return .update(net.table, net.key, (row ?? held ?? [:]).filter { net.fields[$0.key] != nil })
        }
    }

    /// The net kind of one row's entries (in seq order) by ``RowChange/followed(by:)``, its
    /// fields naming the columns of a net update (their values unknown: `null`); nil for none.
    static func fold(_ entries: [LogEntry]) -> RowChange? {
        guard var net = entries.first.map(\.placeholder) else { return nil }
        for entry in entries.dropFirst() { net = net.followed(by: entry.placeholder) }
        return net
    }

    /// The entry as a change whose fields name its columns (values unknown): what
    /// ``RowChange/followed(by:)`` needs to fold kinds and columns. An insert names none —
    /// followed by updates it stays an insert, which carries every column anyway.
    private var placeholder: RowChange {
        RowChange(table: table, key: key, kind: kind, fields: Dictionary(columns.map { ($0, FieldValue.null) }, uniquingKeysWith: { first, _ in first }))
    }

    /// `cols` as stored: the names separated by commas (column names never hold one).
    static func columnList(_ names: [String]) -> String { names.joined(separator: ",") }

    static func columns(_ list: String?) -> [String] {
        (list ?? "").split(separator: ",").map(String.init)
    }
}
