import TetherStore

/// The quarantine could not move the damaged store: the partition stays stopped.
struct StoreQuarantineError: Error, Sendable, Hashable, CustomStringConvertible {
    var path: String
    var destination: String
    var reason: String
    /// The file at `path` (or at the destination) is a symbolic link: refused, not followed.
    var isSymbolicLink = false

    static func cannotMove(path: String, destination: String, reason: String) -> StoreQuarantineError {
        StoreQuarantineError(path: path, destination: destination, reason: reason)
    }

    /// `path` is a symbolic link (``NoFollow``): nothing is moved, nothing is followed.
    static func symbolicLink(path: String, destination: String) -> StoreQuarantineError {
        StoreQuarantineError(
            path: path, destination: destination,
            reason: "\(StoreError.symbolicLink(path: path, place: StoreFilePlace.quarantine.rawValue))", isSymbolicLink: true)
    }

    var description: String { "cannot move \(path) to \(destination): \(reason)" }
    var hint: String {
        isSymbolicLink
            ? StoreError.symbolicLink(path: path, place: StoreFilePlace.quarantine.rawValue).hint
            : "check that recovery_dir exists, is writable by the agent and that the disk is not full"
    }
}
