import CTetherShims

/// The compression of a ready file's slices (docs/protocol.md, message `8a`): each slice of the
/// file is one zlib stream, compressed once by the server when it builds the file and inflated
/// by the device as it arrives. zlib's Adler-32 catches a damaged slice before it is written;
/// the file's SHA-256 still decides.
package enum ReadyFileSliceCodec {
    /// zlib's fastest level: a ready file is rows as text and compresses ~7× even so, and the
    /// server compresses every version it builds.
    package static let level: Int32 = 1

    /// A slice is sent compressed only when that saves at least a tenth of its bytes.
    package static func capacity(for count: Int) -> Int { count - count / 10 }

    /// `bytes` as a zlib stream, or nil when compressing them does not pay.
    package static func deflate(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        let capacity = Self.capacity(for: bytes.count)
        guard capacity > 0, let base = bytes.baseAddress else { return nil }
        var length = 0
        let stream = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            length = tether_zlib_compress(base, UInt(bytes.count), buffer.baseAddress, UInt(capacity), level)
            initialized = max(length, 0)
        }
        return length > 0 ? stream : nil
    }

    /// The `fileBytes` bytes the zlib stream `stream` holds; nil when it is damaged, fails its
    /// checksum, or holds any other number of bytes.
    package static func inflate(_ stream: [UInt8], fileBytes: Int) -> [UInt8]? {
        var ok = false
        let bytes = [UInt8](unsafeUninitializedCapacity: fileBytes) { buffer, initialized in
            ok = stream.withUnsafeBytes { source in
                tether_zlib_inflate(source.baseAddress, UInt(source.count), buffer.baseAddress, UInt(fileBytes)) == 0
            }
            initialized = ok ? fileBytes : 0
        }
        return ok ? bytes : nil
    }
}
