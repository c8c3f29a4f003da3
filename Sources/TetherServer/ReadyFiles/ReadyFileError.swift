import Glibc

/// What goes wrong with a ready file on the server. None reaches a device: it gets rows.
enum ReadyFileError: Error, CustomStringConvertible {
    case shortRead(path: String, offset: Int64)
    case io(path: String, operation: String, errno: Int32)

    var description: String {
        switch self {
        case .shortRead(let path, let offset): "\(path) ended at byte \(offset), before its recorded size"
        case .io(let path, let operation, let code): "\(operation) \(path): \(String(cString: strerror(code)))"
        }
    }
}
