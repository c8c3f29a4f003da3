import TetherProtocol

/// Whom a grant is for (`admin grant SUBJECT PATTERN ACCESS`, the admin API's `user`): a
/// `[[user]]` of the config file or an enrolled device by name (`pos-17`), every device with a
/// tag (`tag:store=17`), or every enrolled device (`device:*`). The text is what
/// ``RuntimeGrant/user`` keeps; ``AccessPolicy`` decides what a subject matches at bind.
package enum GrantSubject: Sendable, Hashable, CustomStringConvertible {
    case user(String)
    case tag(key: String, value: String)
    case everyDevice

    package static let tagPrefix = "tag:"
    package static let devicePrefix = "device:"

    /// Parses a subject; a text starting with `tag:` or `device:` must be one of those forms.
    package static func parse(_ text: String) throws(GrantSubjectProblem) -> GrantSubject {
        if text.hasPrefix(tagPrefix) {
            guard let (key, value) = DeviceIdentityRules.parseTag(String(text.dropFirst(tagPrefix.count))) else {
                throw GrantSubjectProblem("\(text.debugDescription) is not tag:K=V", hint: "a tag is K=V: K is 1 to 32 of a-z 0-9 _ - starting with a letter, V 1 to 64 of A-Z a-z 0-9 . _ - starting with a letter or digit")
            }
            return .tag(key: key, value: value)
        }
        if text.hasPrefix(devicePrefix) {
            guard text == devicePrefix + "*" else {
                throw GrantSubjectProblem("\(text.debugDescription) is not a subject: the device subject is device:* (every enrolled device)",
                    hint: "to grant one device, name it (its device name is its user)")
            }
            return .everyDevice
        }
        guard !text.isEmpty, text.utf8.count <= 256, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw GrantSubjectProblem("\(text.debugDescription) is not a user name", hint: "a subject is a user or device name, tag:K=V or device:*")
        }
        return .user(text)
    }

    package var description: String {
        switch self {
        case .user(let name): name
        case .tag(let key, let value): "\(Self.tagPrefix)\(key)=\(value)"
        case .everyDevice: "\(Self.devicePrefix)*"
        }
    }
}

/// Why a grant's subject was refused.
package struct GrantSubjectProblem: Error, Sendable, Hashable, CustomStringConvertible {
    package var description: String
    package var hint: String

    init(_ description: String, hint: String) {
        self.description = description
        self.hint = hint
    }
}
