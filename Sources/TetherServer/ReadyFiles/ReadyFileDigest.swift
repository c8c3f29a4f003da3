import Crypto

/// The SHA-256 of a file, read in 1 MiB pieces.
enum ReadyFileDigest {
    static func of(path: String) throws -> [UInt8] {
        let file = try ReadOnlyFile(path)
        var hasher = SHA256()
        var offset: Int64 = 0
        while offset < file.size {
            let piece = try file.read(at: offset, count: Int(min(1 << 20, file.size - offset)))
            hasher.update(data: piece)
            offset += Int64(piece.count)
        }
        return Array(hasher.finalize())
    }
}
