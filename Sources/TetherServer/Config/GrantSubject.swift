import TetherProtocol

/// Whom a grant is for: `NAME` (a user, or the device of that name), `tag:K=V` (every device
/// whose tag K is V) or `device:*` (every enrolled device). Stored as its text
/// (``RuntimeGrant/user``, ``AccessPolicy/Key/user``).
package enum GrantSubject: Sendable, Hashable, CustomStringConvertible {
    case named(String)
    case tag(key: String, value: String)
    case allDevices

    package static let allDevicesText = "device:*"

    /// Nil when `text` starts with `tag:` or `device:` and is not one of their forms, or is empty.
    package init?(_ text: String) {
        if text == Self.allDevicesText {
            self = .allDevices
        } else if text.hasPrefix("tag:") {
            guard let (key, value) = DeviceIdentityRules.parseTag(String(text.dropFirst(4))) else { return nil }
            self = .tag(key: key, value: value)
        } else if text.hasPrefix("device:") || text.isEmpty {
            return nil
        } else {
            self = .named(text)
        }
    }

    package var description: String {
        switch self {
        case .named(let name): name
        case .tag(let key, let value): "tag:\(key)=\(value)"
        case .allDevices: Self.allDevicesText
        }
    }
}
