extension Changeset {
    /// Checks encoded changeset bytes by the rules of ``decode(_:)`` — dictionaries, indices,
    /// keys, values (texts as UTF-8), kinds, no field set twice, nothing left over — without
    /// building the changes: for bytes a server passes on as it stored them. The same check as
    /// a received download's (``ChangeRows``).
    package static func check(_ bytes: [UInt8]) throws(WireDecodeError) {
        _ = try ChangeRows.decode(bytes)
    }
}
