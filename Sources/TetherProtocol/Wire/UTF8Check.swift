/// Checks bytes for well-formed UTF-8 without building a `String` (which allocates for all but
/// the shortest texts): what the decoder of a state chunk does for each text it passes on.
enum UTF8Check {
    static func isValid<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        // Most text is ASCII: one pass over it, the full decoder only from the first byte that is not.
        guard let first = bytes.firstIndex(where: { $0 >= 0x80 }) else { return true }
        var iterator = bytes[first...].makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
