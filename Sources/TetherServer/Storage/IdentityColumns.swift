import Foundation
import TetherProtocol

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

    /// A device's pending credential digests as one column: their bytes one after the other
    /// (nil when there are none).
    static func pendingColumn(_ digests: [[UInt8]]) -> [UInt8]? {
        digests.isEmpty ? nil : digests.flatMap { $0 }
    }

    static func pendingDigests(fromColumn bytes: [UInt8]?) throws(StorageError) -> [[UInt8]] {
        guard let bytes else { return [] }
        let size = ProtocolLimits.credentialDigestBytes
        guard bytes.count % size == 0, bytes.count <= size * DeviceIdentityRecord.maxPendingDigests else {
            throw .corrupt("pending credential digests")
        }
        return stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<$0 + size]) }
    }
}
