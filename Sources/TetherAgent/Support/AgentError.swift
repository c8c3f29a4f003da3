/// Errors of the agent itself, each with a hint.
enum AgentError: Error, CustomStringConvertible {
    case token(String)
    case noConnection
    case nothingToInitiate(String)

    var description: String {
        switch self {
        case .token(let reason): "token file: \(reason)"
        case .noConnection: "not connected to the server"
        case .nothingToInitiate(let reason): "nothing to initiate: \(reason)"
        }
    }
}
