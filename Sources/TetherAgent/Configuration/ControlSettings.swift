/// The `[control]` table (docs/configuration.md "[control]"): who may use the control socket
/// beyond reading.
package struct ControlSettings: Sendable, Hashable {
    /// `operator_group`: a group name, resolved when the daemon starts, or a numeric gid.
    package enum OperatorGroup: Sendable, Hashable, CustomStringConvertible {
        case name(String)
        case id(UInt32)

        package var description: String {
            switch self {
            case .name(let name): "group \(name)"
            case .id(let gid): "gid \(gid)"
            }
        }
    }

    package static let defaultOperatorGroup = "tether-admin"

    /// Members of this group (besides root and the daemon's own user) may run the commands that
    /// change something: pause, resume, reset initiate, log-level.
    package var operatorGroup: OperatorGroup

    package init(operatorGroup: OperatorGroup = .name(defaultOperatorGroup)) {
        self.operatorGroup = operatorGroup
    }
}
