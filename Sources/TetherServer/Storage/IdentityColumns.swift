import Foundation

/// How both storages keep the parts of an identity that are not plain columns: tags as a JSON
/// object with sorted keys (so equal tags are equal text), and the audit records' actions.
enum IdentityColumns {
    static func tagsJSON(_ tags: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // A [String: String] always encodes.
        guard let data = try? encoder.encode(tags) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func tags(fromJSON text: String) throws(StorageError) -> [String: String] {
        do {
            return try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
        } catch {
            throw .corrupt("tags")
        }
    }

    static func date(_ seconds: Double?) -> Date? { seconds.map(Date.init(timeIntervalSince1970:)) }
}
