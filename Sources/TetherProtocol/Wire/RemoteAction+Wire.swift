extension RemoteAction {
    /// The body of message `8c` (after its type byte): id, kind, partition (empty: none).
    func encode(into w: inout ByteWriter) {
        w.varint(id)
        w.string(kind.rawValue)
        w.string(partition ?? "")
    }

    /// Decodes the body of message `8c`: an id ≥ 1, a kind of at most 64 bytes without control
    /// characters (one this build does not know decodes; the agent refuses it), a partition
    /// name within its limit (checked as a name by the agent, like `tetherctl`'s).
    static func decode(_ r: inout ByteReader) throws(WireDecodeError) -> RemoteAction {
        let id = try r.int64("action id")
        guard id >= 1 else { throw .malformed(field: "action id", reason: "0") }
        let kind = try r.string("action kind", limit: ProtocolLimits.maxReportWordBytes)
        guard !kind.isEmpty, DeviceReport.isDisplayable(kind) else { throw .malformed(field: "action kind", reason: "empty or control characters") }
        let partition = try r.string("action partition", limit: ProtocolLimits.maxPartitionBytes)
        guard DeviceReport.isDisplayable(partition) else { throw .malformed(field: "action partition", reason: "control characters") }
        return RemoteAction(id: id, kind: RemoteActionKind(rawValue: kind), partition: partition.isEmpty ? nil : partition)
    }
}

extension RemoteActionResult {
    /// The body of message `0a` (after its type byte): id, outcome, message, report bytes.
    func encode(into w: inout ByteWriter) {
        w.varint(id)
        w.byte(outcome.rawValue)
        w.string(message)
        w.lengthPrefixed(report)
    }

    /// Decodes the body of message `0a`: the message is shown to operators (no control
    /// characters, at most ``ProtocolLimits/maxActionMessageBytes``), the report at most
    /// ``ProtocolLimits/maxActionReportBytes`` (the server checks it is JSON).
    static func decode(_ r: inout ByteReader) throws(WireDecodeError) -> RemoteActionResult {
        let id = try r.int64("action id")
        guard id >= 1 else { throw .malformed(field: "action id", reason: "0") }
        let byte = try r.byte("action outcome")
        guard let outcome = Outcome(rawValue: byte) else { throw .malformed(field: "action outcome", reason: "unknown outcome \(byte)") }
        let message = try r.string("action message", limit: ProtocolLimits.maxActionMessageBytes)
        guard DeviceReport.isDisplayable(message) else { throw .malformed(field: "action message", reason: "control characters") }
        let report = try r.lengthPrefixed("action report", limit: ProtocolLimits.maxActionReportBytes)
        return RemoteActionResult(id: id, outcome: outcome, message: message, report: report)
    }

    /// A message as the agent may send it: control characters (a newline of an error's text)
    /// become spaces, and it is cut to the limit on a character boundary.
    package static func sendable(_ text: String) -> String {
        var out = ""
        for character in text {
            let piece = DeviceReport.isDisplayable(String(character)) ? String(character) : " "
            guard out.utf8.count + piece.utf8.count <= ProtocolLimits.maxActionMessageBytes else { break }
            out += piece
        }
        return out
    }
}
