/// A part of a ready file (protocol 5, docs/protocol.md "Ready files"): the partition's state
/// as a complete store file the server built once, sent in slices in place of state rows.
/// The file is `fileSize` bytes; its SHA-256 is `digest`; this slice holds the bytes at
/// `offset ..< offset + bytes.count`. A download resumed after a cut starts at the offset the
/// client already holds.
public struct StateFileSlice: Sendable, Hashable {
    /// SHA-256 digests are 32 bytes.
    public static let digestBytes = 32

    public var fileSize: Int64
    public var offset: Int64
    public var digest: [UInt8]
    public var bytes: [UInt8]

    public init(fileSize: Int64, offset: Int64, digest: [UInt8], bytes: [UInt8]) {
        self.fileSize = fileSize
        self.offset = offset
        self.digest = digest
        self.bytes = bytes
    }

    /// Whether this slice ends the file.
    public var isLast: Bool { offset + Int64(bytes.count) == fileSize }
}

/// What a bind without identity says of ready files (protocol 5; nil: send rows).
public enum ReadyFileRequest: Sendable, Hashable {
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
