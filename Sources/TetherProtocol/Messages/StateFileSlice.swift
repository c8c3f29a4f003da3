/// A part of a ready file (protocol 5, docs/protocol.md "Ready files"): the partition's state
/// as a complete store file the server built once, sent in slices in place of state rows.
/// The file is `fileSize` bytes; its SHA-256 is `digest`; this slice holds the bytes at
/// `offset ..< offset + fileBytes`, as they are (`raw`) or compressed with zlib (`deflate`,
/// message `8a`): the server compresses each slice once, when it builds the file. A download
/// resumed after a cut starts at the offset the client already holds.
package struct StateFileSlice: Sendable, Hashable {
    /// SHA-256 digests are 32 bytes.
    package static let digestBytes = 32

    /// How a slice's `bytes` hold the file's.
    package enum Encoding: Sendable, Hashable {
        /// The file's bytes themselves.
        case raw
        /// A zlib stream (RFC 1950, with its Adler-32) that inflates to exactly `fileBytes` bytes.
        case deflate(fileBytes: Int)
    }

    package var fileSize: Int64
    package var offset: Int64
    package var digest: [UInt8]
    package var encoding: Encoding
    /// As sent: the file's bytes, or their zlib stream.
    package var bytes: [UInt8]

    package init(fileSize: Int64, offset: Int64, digest: [UInt8], encoding: Encoding = .raw, bytes: [UInt8]) {
        self.fileSize = fileSize
        self.offset = offset
        self.digest = digest
        self.encoding = encoding
        self.bytes = bytes
    }

    /// How many of the file's bytes this slice holds.
    package var fileBytes: Int {
        switch encoding {
        case .raw: bytes.count
        case .deflate(let count): count
        }
    }

    /// Whether this slice ends the file.
    package var isLast: Bool { offset + Int64(fileBytes) == fileSize }

    /// A digest as lowercase hex (a ready file's name on the server, the agent's note of a
    /// download under way).
    package static func hex(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The digest `text` spells in hex; nil unless it is exactly ``digestBytes`` bytes of hex.
    package static func digest(hex text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count == digestBytes * 2 else { return nil }
        var digest: [UInt8] = []
        digest.reserveCapacity(digestBytes)
        var i = 0
        while i < characters.count {
            guard let byte = UInt8(String(decoding: characters[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            digest.append(byte)
            i += 2
        }
        return digest
    }
}

/// What a bind without identity says of ready files (protocol 5; nil: send rows).
package enum ReadyFileRequest: Sendable, Hashable {
    /// Send a ready file when one is ready at a version the history continues from.
    case accept
    /// The client holds the first `offset` bytes of the file with `digest`: continue it when the
    /// server still serves that file, else send a ready file (or rows) from the start.
    case resume(digest: [UInt8], offset: Int64)
    /// The file with `digest` failed the client's check: send rows this time, and check the file.
    case refused(digest: [UInt8])

    var kind: UInt8 {
        switch self {
        case .accept: 1
        case .resume: 2
        case .refused: 3
        }
    }
}
