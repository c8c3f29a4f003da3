/// Log levels as every Tether program names them (SPEC §7, §9).
public enum ServerLogLevel: String, Sendable, Hashable, CaseIterable {
    case fatal, error, warn, info, detail, debug, trace
}
