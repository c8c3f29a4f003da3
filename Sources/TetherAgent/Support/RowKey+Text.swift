import TetherProtocol

extension RowKey {
    /// The key as events, logs and hooks carry it (a compensating write's `key`): an integer's
    /// digits, a text as it is. Only the key, never a row's values.
    var text: String {
        switch self {
        case .integer(let value): String(value)
        case .text(let value): value
        }
    }
}
