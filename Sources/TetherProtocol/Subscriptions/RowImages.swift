/// The rows a history entry's changes touched, before and after each change, as the server's
/// state stores them (``StoredFields``): what lets a server send a filtered session a change as
/// it is, as an insert of the whole row (the row starts matching), as a removal (it stops
/// matching), or not at all — partial updates alone cannot say which. One image per change, in
/// the changes' order. A change that created a row from an insert stores no copy: its after
/// image is the insert's own fields.
package struct RowImages: Sendable, Hashable {
    package enum After: Sendable, Hashable {
        /// The change removed the row, or left an absent row absent.
        case absent
        /// The row as stored after the change.
        case stored([UInt8])
        /// An insert that created the row: the row is the change's fields.
        case changeFields
    }

    package struct Image: Sendable, Hashable {
        package var before: [UInt8]?
        package var after: After

        package init(before: [UInt8]?, after: After) {
            self.before = before
            self.after = after
        }
    }

    package var images: [Image]

    package init(_ images: [Image] = []) { self.images = images }

    /// A flags byte per image (bit 0: before follows, bit 1: after follows, bit 2: after is the
    /// change's fields), each row as a length and its bytes; after a count.
    package var encoded: [UInt8] {
        var w = ByteWriter(capacity: 8 + images.count * 2)
        w.varint(images.count)
        for image in images {
            var flags: UInt8 = 0
            if image.before != nil { flags |= 1 }
            switch image.after {
            case .absent: break
            case .stored: flags |= 2
            case .changeFields: flags |= 4
            }
            w.byte(flags)
            if let before = image.before {
                w.varint(before.count)
                w.raw(before)
            }
            if case .stored(let after) = image.after {
                w.varint(after.count)
                w.raw(after)
            }
        }
        return w.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(WireDecodeError) -> RowImages {
        var r = ByteReader(bytes)
        let count = try r.count("image count", limit: Int(Int32.max))
        var images: [Image] = []
        images.reserveCapacity(count)
        for _ in 0..<count {
            let flags = try r.byte("image flags")
            guard flags & ~0x07 == 0, flags & 6 != 6 else { throw .malformed(field: "image flags", reason: "unknown flag bits") }
            let before: [UInt8]? = flags & 1 != 0 ? try r.raw("before image", count: try r.count("before image length", limit: r.remaining)) : nil
            let after: After =
                if flags & 2 != 0 { .stored(try r.raw("after image", count: try r.count("after image length", limit: r.remaining))) }
                else if flags & 4 != 0 { .changeFields }
                else { .absent }
            images.append(Image(before: before, after: after))
        }
        try r.expectEnd()
        return RowImages(images)
    }
}
