import Glibc
import TetherProtocol

/// One ready file in the cache: a partition's state at a version as a complete store file, with
/// what its name records (version, salt, schema version, rows) and its SHA-256.
package struct ReadyFile: Sendable, Hashable {
    package var partition: PartitionName
    package var version: ServerVersion
    package var schemaVersion: Int
    package var rows: Int64
    package var size: Int64
    package var digest: [UInt8]
    package var path: String
    /// Its slices compressed, when the cache keeps them (`compress`).
    package var slices: ReadyFileSlices?

    /// The bytes the file and its slices take on disk.
    package var diskBytes: Int64 { size + (slices?.size ?? 0) }

    /// Removes the file and its slices.
    func remove() {
        unlink(path)
        unlink(ReadyFileSlices.path(for: path))
    }

    /// `v<version>-s<salt>-k<schema>-r<rows>-<sha256 hex>.db`, in a directory per partition.
    var fileName: String {
        "v\(version.version)-s\(version.salt)-k\(schemaVersion)-r\(rows)-\(StateFileSlice.hex(digest)).db"
    }

    /// The file named `name` in `directory`, or nil when the name is not one the cache gives.
    static func parse(name: String, partition: PartitionName, directory: String, size: Int64) -> ReadyFile? {
        guard name.hasSuffix(".db") else { return nil }
        let parts = name.dropLast(3).split(separator: "-")
        guard parts.count == 5, parts[0].first == "v", parts[1].first == "s", parts[2].first == "k", parts[3].first == "r",
            let version = Int64(parts[0].dropFirst()), let salt = Int64(parts[1].dropFirst()),
            let schema = Int(parts[2].dropFirst()), let rows = Int64(parts[3].dropFirst()),
            let digest = StateFileSlice.digest(hex: String(parts[4]))
        else { return nil }
        return ReadyFile(
            partition: partition, version: ServerVersion(version: version, salt: salt), schemaVersion: schema, rows: rows,
            size: size, digest: digest, path: directory + "/" + name)
    }
}
