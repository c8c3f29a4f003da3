extension DeviceReport {
    /// Flags of an entry: which optional fields follow.
    private enum EntryFlag {
        static let unsyncedFor: UInt8 = 1 << 0
        static let lastUpload: UInt8 = 1 << 1
        static let lastError: UInt8 = 1 << 2
        static let pendingReset: UInt8 = 1 << 3
        static let all: UInt8 = 0x0f
    }

    /// The body of message `08` (after its type byte).
    func encode(into w: inout ByteWriter) {
        w.string(token)
        w.string(deviceID)
        w.string(deviceName)
        w.string(release)
        w.varint(entries.count)
        for entry in entries {
            w.string(entry.partition)
            w.string(entry.state)
            w.varint(entry.serverVersion)
            w.varint(entry.clientFile)
            w.varint(entry.unsyncedChanges)
            var flags: UInt8 = 0
            if entry.unsyncedFor != nil { flags |= EntryFlag.unsyncedFor }
            if entry.lastUploadAgo != nil { flags |= EntryFlag.lastUpload }
            if entry.lastError != nil { flags |= EntryFlag.lastError }
            if entry.pendingReset != nil { flags |= EntryFlag.pendingReset }
            w.byte(flags)
            if let seconds = entry.unsyncedFor { w.varint(seconds) }
            if let seconds = entry.lastUploadAgo { w.varint(seconds) }
            if let error = entry.lastError {
                w.varint(error.code)
                w.varint(error.ago)
            }
            let outcomes = entry.resets.sorted { $0.key < $1.key }
            w.varint(outcomes.count)
            for (outcome, count) in outcomes {
                w.string(outcome)
                w.varint(count)
            }
            if let reason = entry.pendingReset { w.string(reason) }
        }
        if let accepted = acceptedActions {
            w.varint(accepted.count)
            for kind in accepted { w.string(kind.rawValue) }
        }
    }

    /// Decodes the body of message `08`: every text within its limit and free of control
    /// characters (a device's name is shown to operators), a valid device id, no unknown flag
    /// bits, no partition listed twice.
    static func decode(_ r: inout ByteReader) throws(WireDecodeError) -> DeviceReport {
        let token = try r.string("token", limit: ProtocolLimits.maxTokenBytes)
        let deviceID = try r.string("device id", limit: ProtocolLimits.maxDeviceIDBytes)
        guard isValidDeviceID(deviceID) else { throw .malformed(field: "device id", reason: "not 1 to 64 of [0-9A-Za-z._-]") }
        let deviceName = try displayable(&r, "device name", limit: ProtocolLimits.maxDeviceNameBytes)
        let release = try displayable(&r, "release", limit: ProtocolLimits.maxReportWordBytes)
        let count = try r.count("report entries", minimumElementBytes: 7, limit: ProtocolLimits.maxReportEntries)
        var entries: [Entry] = []
        var seen: Set<String> = []
        for _ in 0..<count {
            let partition = try displayable(&r, "partition", limit: ProtocolLimits.maxPartitionBytes)
            guard seen.insert(partition).inserted else { throw .malformed(field: "partition", reason: "listed twice in one report") }
            var entry = Entry(partition: partition, state: try displayable(&r, "state", limit: ProtocolLimits.maxReportWordBytes))
            entry.serverVersion = try r.int64("server version")
            entry.clientFile = try r.int64("client file")
            entry.unsyncedChanges = try r.int64("unsynced changes")
            let flags = try r.byte("report entry flags")
            guard flags & ~EntryFlag.all == 0 else { throw .malformed(field: "report entry flags", reason: "unknown flag bits") }
            if flags & EntryFlag.unsyncedFor != 0 { entry.unsyncedFor = try r.int64("unsynced for") }
            if flags & EntryFlag.lastUpload != 0 { entry.lastUploadAgo = try r.int64("last upload") }
            if flags & EntryFlag.lastError != 0 {
                entry.lastError = LastError(code: try r.int64("last error code"), ago: try r.int64("last error age"))
            }
            let outcomes = try r.count("reset outcomes", minimumElementBytes: 2, limit: ProtocolLimits.maxReportOutcomes)
            for _ in 0..<outcomes {
                let outcome = try displayable(&r, "reset outcome", limit: ProtocolLimits.maxReportWordBytes)
                guard entry.resets[outcome] == nil else { throw .malformed(field: "reset outcome", reason: "listed twice") }
                entry.resets[outcome] = try r.int64("reset count")
            }
            if flags & EntryFlag.pendingReset != 0 {
                entry.pendingReset = try displayable(&r, "pending reset", limit: ProtocolLimits.maxReportReasonBytes)
            }
            entries.append(entry)
        }
        // Protocol 8: the remote actions the device accepts, after the entries.
        var accepted: [RemoteActionKind]? = nil
        if !r.isAtEnd {
            let count = try r.count("accepted actions", minimumElementBytes: 1, limit: ProtocolLimits.maxActionKinds)
            var kinds: [RemoteActionKind] = []
            for _ in 0..<count {
                let kind = RemoteActionKind(rawValue: try displayable(&r, "accepted action", limit: ProtocolLimits.maxReportWordBytes))
                guard !kinds.contains(kind) else { throw .malformed(field: "accepted action", reason: "listed twice") }
                kinds.append(kind)
            }
            accepted = kinds
        }
        return DeviceReport(
            token: token, deviceID: deviceID, deviceName: deviceName, release: release, entries: entries, acceptedActions: accepted)
    }

    private static func displayable(_ r: inout ByteReader, _ field: StaticString, limit: Int) throws(WireDecodeError) -> String {
        let text = try r.string(field, limit: limit)
        guard isDisplayable(text) else { throw .malformed(field: "\(field)", reason: "control characters") }
        return text
    }
}
