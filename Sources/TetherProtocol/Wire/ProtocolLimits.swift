/// Sizes the codec accepts. Anything larger is a 104 (limits exceeded) decode error.
package enum ProtocolLimits {
    /// Largest message, after WebSocket fragments are joined.
    package static let maxMessageBytes = 16 << 20
    /// Largest single WebSocket frame both sides accept: a whole message fits one frame,
    /// so an oversized message reaches the codec and gets 104; frames beyond this are
    /// refused by the WebSocket layer itself (close code 1009).
    package static let maxFrameBytes = maxMessageBytes + (64 << 10)
    /// Table and column names (the schema allows 64).
    package static let maxNameBytes = 256
    /// A partition name as sent (validated separately: illegal names get 204).
    package static let maxPartitionBytes = 1024
    package static let maxTokenBytes = 8192
    /// A SHA-256 digest (`credential-accepted`).
    package static let credentialDigestBytes = 32
    /// Error messages, hints and software names.
    package static let maxTextBytes = 65536
    package static let maxTables = 4096
    package static let maxColumns = 65536
    /// Target size of one download or state message the server sends.
    package static let targetBatchBytes = 512 << 10
    /// Target size of one ready-file slice the server sends (protocol 5).
    package static let targetFileSliceBytes = 1 << 20
    /// The largest ready-file slice a client accepts.
    package static let maxFileSliceBytes = 4 << 20
    /// Flow control (protocol 2): the state and download messages a session may receive
    /// after its `bound` before the client grants more — what one session can have buffered
    /// on the client is at most this many messages (about 2 MiB).
    package static let initialSendWindow = 4
    /// The largest grant one `credit` message may carry.
    package static let maxCreditGrant = 1024
    /// Unacknowledged upload ranges one bind may list (protocol 3, ``StoreLineage``); a store
    /// keeps at most this many, the newest.
    package static let maxSentRanges = 1024
    /// A device report (protocol 6): its device id, its name and release, the partitions it
    /// lists, the states, outcomes and reasons it names, and the outcomes per partition.
    package static let maxDeviceIDBytes = 64
    package static let maxDeviceNameBytes = 255
    package static let maxReportEntries = 1024
    package static let maxReportWordBytes = 64
    package static let maxReportReasonBytes = 1024
    package static let maxReportOutcomes = 16
    /// Remote actions (protocol 8): the kinds a report lists as accepted, an action result's
    /// message, and a diagnostics report.
    package static let maxActionKinds = 16
    package static let maxActionMessageBytes = 4096
    package static let maxActionReportBytes = 256 << 10
}
