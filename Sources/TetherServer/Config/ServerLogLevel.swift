/// Log levels as every Tether program names them (docs/contract.md: Agent configuration, Logging).
package enum ServerLogLevel: String, Sendable, Hashable, CaseIterable {
    case fatal, error, warn, info, detail, debug, trace
}
