import TetherControl
import TetherProtocol

/// Why a subscription change made at run time (`set-subscriptions`) was refused. Nothing was
/// changed: the partition keeps the set it wanted before. Each says what the operator can do.
package enum SubscriptionChangeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Neither a list nor `clear`, both, or an empty list.
    case badRequest(String)
    /// A subscription that is not valid on its own (its table's name, its filter's syntax, too many).
    case invalid(String)
    /// A subscription the store's schema cannot serve (a table or column it lacks, a type mismatch).
    case notInSchema(String, schemaVersion: Int)
    /// A client reset holds the partition.
    case inReset(partition: PartitionName, resetID: String?)
    /// The store's schema could not be read to check the subscriptions against it.
    case storeUnreadable(String)
    /// The change could not be recorded in the state database.
    case stateDatabase(AgentStateError)

    package var description: String {
        switch self {
        case .badRequest(let message): message
        case .invalid(let message): message
        case .notInSchema(let message, let version): "\(message) (the store's schema, version \(version))"
        case .inReset(let partition, let id):
            "\(partition) is in a client reset\(id.map { " (\($0))" } ?? ""): its subscriptions cannot change until the reset is done"
        case .storeUnreadable(let message): "the store's schema cannot be read to check the subscriptions: \(message)"
        case .stateDatabase(let error): "the subscriptions cannot be recorded: \(error)"
        }
    }

    package var hint: String {
        switch self {
        case .badRequest: "give at least one subscription (--table, with --where for a filter), or clear"
        case .invalid: "fix the subscription (docs/subscriptions.md \"The filter language\"); nothing was changed"
        case .notInSchema: "name a table and columns the partition's schema has; nothing was changed"
        case .inReset: "wait for the reset to finish (`tetherctl resets`, `tetherctl wait-synced`), then change them"
        case .storeUnreadable: "check the store file (`tetherctl status`, the journal); nothing was changed"
        case .stateDatabase(let error): error.hint
        }
    }

    /// The refusal on the control socket: bad input is a usage error (exit status 2).
    package var response: ControlResponse {
        let message = "\(description); \(hint)"
        switch self {
        case .badRequest, .invalid, .notInSchema: return .failure(message, exitCode: 2)
        case .inReset, .storeUnreadable, .stateDatabase: return .failure(message, exitCode: 1)
        }
    }
}
