import TetherTOML

extension AgentConfiguration {
    /// `[control]`: `operator_group` is a group name (letters, digits, `.`, `_`, `-`; not all
    /// digits) or a numeric gid (an integer, or a string of digits).
    static func buildControl(_ table: ConfigTable) -> ControlSettings {
        var control = ControlSettings()
        guard let node = table.value("operator_group") else { return control }
        switch node {
        case .integer(let gid):
            guard (0...Int(UInt32.max - 1)).contains(gid) else {
                table.problem("operator_group", "gid \(gid) is out of range 0...\(UInt32.max - 1)")
                return control
            }
            control.operatorGroup = .id(UInt32(gid))
        case .string(let name):
            if let gid = UInt32(name), gid < UInt32.max {
                control.operatorGroup = .id(gid)
            } else if isGroupName(name) {
                control.operatorGroup = .name(name)
            } else {
                table.problem("operator_group", "\(name.debugDescription) is not a group name ([A-Za-z0-9._-], 1 to 32 characters, not starting with -) or a numeric gid")
            }
        default:
            table.problem("operator_group", "expected a group name or a numeric gid, found \(node.typeName)")
        }
        return control
    }

    static func isGroupName(_ name: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        return (1...32).contains(name.count) && !name.hasPrefix("-") && name.allSatisfy(allowed.contains)
    }
}
