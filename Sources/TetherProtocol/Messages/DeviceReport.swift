/// What a device says of itself for the server's device ledger (protocol 6, message `08`
/// report; docs/protocol.md): who it is, its release, and one entry per partition it syncs.
/// Connection-level and fire-and-forget: the server answers nothing, and drops a report whose
/// token it does not accept. Ages are in seconds as the device counts them, so that a device
/// clock that is wrong does not move them; the server turns them into times on arrival.
package struct DeviceReport: Sendable, Hashable {
    /// A sync error the device met: its code and how many seconds ago.
    package struct LastError: Sendable, Hashable {
        package var code: Int64
        package var ago: Int64
        package init(code: Int64, ago: Int64) {
            self.code = code
            self.ago = ago
        }
    }

    /// One partition as the device sees it.
    package struct Entry: Sendable, Hashable {
        package var partition: String
        /// The agent's state (`synced`, `reset-pending`, …; docs/operations.md).
        package var state: String
        /// The server version the store integrated last.
        package var serverVersion: Int64
        /// The store's client file, 0 before its first bind.
        package var clientFile: Int64
        package var unsyncedChanges: Int64
        /// Seconds since the oldest unsynced change, as far as the agent knows it (since the
        /// count last left 0, or since the agent started with changes pending); nil when none.
        package var unsyncedFor: Int64?
        /// Seconds since the server last acknowledged an upload of this store (in this run of
        /// the agent); nil when none was.
        package var lastUploadAgo: Int64?
        /// The last sync error: its code and how many seconds ago.
        package var lastError: LastError?
        /// Resets run so far, by outcome (`recovered`, `discarded`, …).
        package var resets: [String: Int64]
        /// Why a reset waits (an operator's `reset initiate`, access denied, …); nil when none does.
        package var pendingReset: String?

        package init(
            partition: String, state: String, serverVersion: Int64 = 0, clientFile: Int64 = 0, unsyncedChanges: Int64 = 0,
            unsyncedFor: Int64? = nil, lastUploadAgo: Int64? = nil, lastError: LastError? = nil,
            resets: [String: Int64] = [:], pendingReset: String? = nil
        ) {
            self.partition = partition
            self.state = state
            self.serverVersion = serverVersion
            self.clientFile = clientFile
            self.unsyncedChanges = unsyncedChanges
            self.unsyncedFor = unsyncedFor
            self.lastUploadAgo = lastUploadAgo
            self.resets = resets
            self.pendingReset = pendingReset
            self.lastError = lastError
        }
    }

    /// The access token the device binds with (never logged): the report is kept only when
    /// the server accepts it.
    package var token: String
    /// The device's stable id (``DeviceReport/isValidDeviceID(_:)``).
    package var deviceID: String
    /// A name an operator knows the device by (the host name unless configured).
    package var deviceName: String
    /// The agent's release (`0.1.0`).
    package var release: String
    package var entries: [Entry]
    /// The remote actions the device accepts (`[device] remote_actions`; protocol 8, sent after
    /// the entries); nil from an agent older than protocol 8.
    package var acceptedActions: [RemoteActionKind]?

    package init(
        token: String, deviceID: String, deviceName: String, release: String, entries: [Entry], acceptedActions: [RemoteActionKind]? = nil
    ) {
        self.token = token
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.release = release
        self.entries = entries
        self.acceptedActions = acceptedActions
    }

    /// A device id: 1 to 64 characters of `[0-9A-Za-z._-]` (the agent makes 32 hex digits).
    package static func isValidDeviceID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= ProtocolLimits.maxDeviceIDBytes
            && id.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte) || byte == 0x2e || byte == 0x5f
                    || byte == 0x2d
            }
    }

    /// Text a device chose (its name, a state, an outcome, a reason) as the server shows it:
    /// without control characters, which are refused on the wire.
    package static func isDisplayable(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { !$0.properties.generalCategory.isControl }
    }
}

extension Unicode.GeneralCategory {
    /// Control, format (bidirectional overrides), line and paragraph separators.
    var isControl: Bool {
        switch self {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
