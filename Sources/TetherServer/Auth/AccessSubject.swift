import TetherProtocol

/// Who binds, as grants see it: a `[[user]]` of the config file (a name), or an enrolled device
/// (its name, id and tags). Built at bind from the token (``UserDirectory``) or the device
/// credential (the device's identity record).
package struct AccessSubject: Sendable, Hashable, CustomStringConvertible {
    /// The user's name, or the device's (also its ledger user).
    package var name: String
    /// The device's id; nil for a `[[user]]`.
    package var deviceID: String?
    /// The device's tags (a user has none).
    package var tags: [String: String]

    package init(name: String, deviceID: String?, tags: [String: String]) {
        self.name = name
        self.deviceID = deviceID
        self.tags = tags
    }

    package static func user(_ name: String) -> AccessSubject { AccessSubject(name: name, deviceID: nil, tags: [:]) }

    package static func device(id: String, name: String, tags: [String: String]) -> AccessSubject {
        AccessSubject(name: name, deviceID: id, tags: tags)
    }

    package var isDevice: Bool { deviceID != nil }

    /// Its values for the parameters of subscription filters and write rules (`{name}`, `{id}`,
    /// `{tag:KEY}`).
    package var filterParameters: FilterParameters { FilterParameters(name: name, id: deviceID, tags: tags) }

    package var description: String { isDevice ? "device \(name)" : "user \(name)" }
}

extension GrantSubject {
    /// Whether the grant is for `subject`: a name grant for the user or device of that name, a
    /// tag grant for a device with that tag, `device:*` for every device.
    package func covers(_ subject: AccessSubject) -> Bool {
        switch self {
        case .user(let name): subject.name == name
        case .tag(let key, let value): subject.isDevice && subject.tags[key] == value
        case .everyDevice: subject.isDevice
        }
    }
}
