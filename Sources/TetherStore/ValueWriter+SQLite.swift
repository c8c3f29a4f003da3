import GRDB
import GRDBSQLite
import TetherProtocol

/// Reading a row straight from a stepped SQLite statement into the wire's encoding, and binding
/// a key: what the readers that turn store rows into ``ChangeRows`` share (uploads, a heal's view).
extension ValueWriter {
    /// Appends the value of `column` of the row `statement` is on, in its wire form (no
    /// ``FieldValue`` or `String` made of it).
    mutating func column(_ statement: SQLiteStatement, _ column: Int32) {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            let text = sqlite3_column_text(statement, column)
            self.text(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column))))
        case SQLITE_BLOB:
            let blob = sqlite3_column_blob(statement, column)?.assumingMemoryBound(to: UInt8.self)
            self.blob(UnsafeBufferPointer(start: blob, count: Int(sqlite3_column_bytes(statement, column))))
        default: null()
        }
    }
}

extension RowKey {
    /// Binds the key to parameter `index` (a text copied by SQLite); the SQLite result code.
    func bind(to statement: SQLiteStatement, at index: Int32) -> Int32 {
        switch self {
        case .integer(let v): sqlite3_bind_int64(statement, index, v)
        case .text(let text): sqlite3_bind_text(statement, index, text, -1, ChangeRowsWriter.transient)
        }
    }

    /// The key in `column` of the row `statement` is on; nil when it is neither an integer nor
    /// a text (no key of a store that fits its schema).
    init?(_ statement: SQLiteStatement, column: Int32) {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: self = .integer(sqlite3_column_int64(statement, column))
        case SQLITE_TEXT:
            let text = sqlite3_column_text(statement, column)
            self = .text(String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self))
        default: return nil
        }
    }
}
