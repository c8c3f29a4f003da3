/// The quarantine could not move the damaged store: the partition stays stopped.
struct StoreQuarantineError: Error, Sendable, Hashable, CustomStringConvertible {
    var path: String
    var destination: String
    var reason: String

    static func cannotMove(path: String, destination: String, reason: String) -> StoreQuarantineError {
        StoreQuarantineError(path: path, destination: destination, reason: reason)
    }

    var description: String { "cannot move \(path) to \(destination): \(reason)" }
    var hint: String { "check that recovery_dir exists, is writable by the agent and that the disk is not full" }
}
