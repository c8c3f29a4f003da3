import Foundation
import TetherProtocol

/// The keys the filter index finds for a state read (``StateSelection``), as both storages
/// collect them: a plan's ranges may find a row twice, so several ranges' keys are sorted and
/// made unique; a change's (``StateSelection/Table/changed(from:to:)``) are the keys one plan
/// finds and the other does not. Keys sort in memcmp order (SQLite's for BLOBs, PostgreSQL's
/// for `bytea`), without iterating their bytes one by one.
enum CandidateKeys {
    /// The keys of `selected` (candidates or a change), `find` giving one plan's keys. One
    /// range's keys come in the order of the indexed value unless `inKeyOrder`; several ranges'
    /// and a change's are sorted.
    static func of<Key: ContiguousBytes & Equatable & Sendable>(
        _ selected: StateSelection.Table, inKeyOrder: Bool = false, find: (IndexPlan) throws -> [Key]
    ) rethrows -> [Key] {
        switch selected {
        case .all: return []
        case .candidates(let plan):
            let keys = try find(plan)
            return plan.ranges.count > 1 || inKeyOrder ? sortedUnique(keys) : keys
        case .changed(let from, let to):
            return symmetricDifference(sortedUnique(try find(from)), sortedUnique(try find(to)))
        }
    }

    /// ``of(_:inKeyOrder:find:)`` with an asynchronous `find`.
    static func of<Key: ContiguousBytes & Equatable & Sendable>(
        _ selected: StateSelection.Table, inKeyOrder: Bool = false, find: (IndexPlan) async throws -> [Key]
    ) async rethrows -> [Key] {
        switch selected {
        case .all: return []
        case .candidates(let plan):
            let keys = try await find(plan)
            return plan.ranges.count > 1 || inKeyOrder ? sortedUnique(keys) : keys
        case .changed(let from, let to):
            return symmetricDifference(sortedUnique(try await find(from)), sortedUnique(try await find(to)))
        }
    }

    static func sortedUnique<Key: ContiguousBytes & Equatable & Sendable>(_ keys: [Key]) -> [Key] {
        let sorted = keys.sorted(by: precedes)
        var unique: [Key] = []
        unique.reserveCapacity(sorted.count)
        for key in sorted where unique.last != key { unique.append(key) }
        return unique
    }

    /// The keys in exactly one of two sorted, unique lists, sorted.
    static func symmetricDifference<Key: ContiguousBytes & Equatable & Sendable>(_ a: [Key], _ b: [Key]) -> [Key] {
        var result: [Key] = []
        var (i, j) = (0, 0)
        while i < a.count, j < b.count {
            if a[i] == b[j] {
                i += 1
                j += 1
            } else if precedes(a[i], b[j]) {
                result.append(a[i])
                i += 1
            } else {
                result.append(b[j])
                j += 1
            }
        }
        result += a[i...]
        result += b[j...]
        return result
    }

    /// memcmp order, a shorter key before a longer one it begins.
    static func precedes<Key: ContiguousBytes>(_ a: Key, _ b: Key) -> Bool {
        let order = a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                memcmp(x.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, y.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, min(x.count, y.count))
            }
        }
        return order != 0 ? order < 0 : a.withUnsafeBytes(\.count) < b.withUnsafeBytes(\.count)
    }
}
