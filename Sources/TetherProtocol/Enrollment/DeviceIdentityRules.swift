/// What a device's name and tags may be. Names and tag values use partition-name characters,
/// so a grant template (`store-{tag:store}`, `device-{name}`) always yields partition-name
/// characters; only its length can still make an illegal name, which the server checks.
package enum DeviceIdentityRules {
    package static let maxNameBytes = 64
    package static let maxTagKeyBytes = 32
    package static let maxTagValueBytes = 64
    package static let maxTags = 16

    /// 1 to 64 of `[A-Za-z0-9._-]`, starting with a letter or digit.
    package static func isValidName(_ name: String) -> Bool {
        name.utf8.count <= maxNameBytes && PartitionName.isValid(name)
    }

    /// 1 to 32 of `[a-z0-9_-]`, starting with a letter.
    package static func isValidTagKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard (1...maxTagKeyBytes).contains(bytes.count), (0x61...0x7a).contains(bytes[0]) else { return false }
        return bytes.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5f || $0 == 0x2d }
    }

    /// 1 to 64 of `[A-Za-z0-9._-]`, starting with a letter or digit.
    package static func isValidTagValue(_ value: String) -> Bool {
        value.utf8.count <= maxTagValueBytes && PartitionName.isValid(value)
    }

    /// `K=V` as the command line and the admin API take a tag; nil when either side is invalid.
    package static func parseTag(_ text: String) -> (key: String, value: String)? {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let key = String(text[..<equals]), value = String(text[text.index(after: equals)...])
        guard isValidTagKey(key), isValidTagValue(value) else { return nil }
        return (key, value)
    }
}
