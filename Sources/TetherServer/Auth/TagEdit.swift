import TetherProtocol

/// A change to a device's tags as an operator writes it (`admin device tag NAME K=V…`, the
/// admin API's `set` and `remove`, the console's form): `K=V` sets `K`, `K=` removes it. Keys
/// and values follow ``DeviceIdentityRules``; a device has at most
/// ``DeviceIdentityRules/maxTags`` tags.
package struct TagEdit: Sendable, Hashable {
    package var set: [String: String]
    package var remove: Set<String>

    package init(set: [String: String] = [:], remove: Set<String> = []) {
        self.set = set
        self.remove = remove
    }

    /// `K=V` and `K=` items; refuses an item without `=`, an invalid key or value, and a key
    /// named twice.
    package static func parse(_ items: [String]) throws(TagProblem) -> TagEdit {
        var edit = TagEdit()
        for item in items {
            guard let equals = item.firstIndex(of: "=") else {
                throw TagProblem("\(item.debugDescription) is not K=V (or K= to remove the tag)")
            }
            let key = String(item[..<equals]), value = String(item[item.index(after: equals)...])
            guard edit.set[key] == nil, !edit.remove.contains(key) else { throw TagProblem("tag \(key.debugDescription) is named twice") }
            if value.isEmpty { edit.remove.insert(key) } else { edit.set[key] = value }
        }
        return try edit.validated()
    }

    /// The edit when every key and value is valid and no key is both set and removed.
    package func validated() throws(TagProblem) -> TagEdit {
        for key in set.keys.sorted() + remove.sorted() where !DeviceIdentityRules.isValidTagKey(key) {
            throw TagProblem("\(key.debugDescription) is not a tag key")
        }
        for (key, value) in set.sorted(by: { $0.key < $1.key }) where !DeviceIdentityRules.isValidTagValue(value) {
            throw TagProblem("\(value.debugDescription) is not a value for tag \(key)")
        }
        if let both = remove.sorted().first(where: { set[$0] != nil }) {
            throw TagProblem("tag \(both.debugDescription) is both set and removed")
        }
        if set.count > DeviceIdentityRules.maxTags {
            throw TagProblem("\(set.count) tags: at most \(DeviceIdentityRules.maxTags)")
        }
        return self
    }

    /// `tags` with the edit applied; refuses a result of more than the tags allowed.
    package func applied(to tags: [String: String]) throws(TagProblem) -> [String: String] {
        var result = tags
        for key in remove { result[key] = nil }
        result.merge(set) { _, new in new }
        guard result.count <= DeviceIdentityRules.maxTags else {
            throw TagProblem("the device would have \(result.count) tags: at most \(DeviceIdentityRules.maxTags)")
        }
        return result
    }

    /// Tags as one line, sorted by key: `region=north,store=17` (`-` for none).
    package static func describe(_ tags: [String: String]) -> String {
        tags.isEmpty ? "-" : tags.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }
}

/// Why a tag edit was refused, with what a tag may be.
package struct TagProblem: Error, Sendable, Hashable, CustomStringConvertible {
    package var description: String
    package static let hint =
        "a tag is K=V: K is 1 to 32 of a-z 0-9 _ - starting with a letter, V 1 to 64 of A-Z a-z 0-9 . _ - starting with a letter or digit"

    package init(_ description: String) { self.description = description }
}
