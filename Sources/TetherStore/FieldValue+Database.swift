import Foundation
import GRDB
import TetherProtocol

extension FieldValue {
    /// The SQLite value, storage class preserved.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let v): v.databaseValue
        case .real(let v): v.databaseValue
        case .text(let v): v.databaseValue
        case .blob(let v): Data(v).databaseValue
        }
    }

    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let v): self = .integer(v)
        case .double(let v): self = .real(v)
        case .string(let v): self = .text(v)
        case .blob(let v): self = .blob([UInt8](v))
        }
    }
}

extension RowKey {
    var databaseValue: DatabaseValue { fieldValue.databaseValue }

    init?(_ value: DatabaseValue) {
        switch value.storage {
        case .int64(let v): self = .integer(v)
        case .string(let v): self = .text(v)
        default: return nil
        }
    }
}

extension StoreError {
    /// Maps any error thrown inside a database access to a `StoreError` naming `path`.
    static func wrap(_ error: any Error, path: String) -> StoreError {
        switch error {
        case let error as StoreError:
            return error
        case let error as DatabaseError:
            let message = error.message ?? "\(error.resultCode)"
            if let partition = readOnlyPartition(in: message) { return .readOnly(partition: partition) }
            return .sqlite(path: path, code: error.extendedResultCode.rawValue, message: message)
        case is CancellationError:
            return .sqlite(path: path, code: 9, message: "interrupted: the task was cancelled")
        case let error as WireDecodeError:
            // Bytes the agent itself stored (kept values, staged rows) that no longer decode:
            // the file is damaged, as SQLITE_CORRUPT says.
            return .sqlite(path: path, code: 11, message: "values stored in the file do not decode: \(error)")
        default:
            return .sqlite(path: path, code: 1, message: String(describing: type(of: error)))
        }
    }

    /// The partition named by a read-only trigger's message, if `message` is one.
    private static func readOnlyPartition(in message: String) -> String? {
        let prefix = "partition ", suffix = " is read-only"
        guard message.hasPrefix(prefix), message.hasSuffix(suffix),
            message.count > prefix.count + suffix.count
        else { return nil }
        return String(message.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
