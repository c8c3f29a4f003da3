/// What an operator asks a device to do from the server (protocol 8, docs/protocol.md `8c`
/// action): one of ``RemoteActionKind``, for one partition or the whole agent. The agent runs it
/// under its own rules — the same path as `tetherctl` — only when `[device] remote_actions`
/// lists it, and answers with a ``RemoteActionResult``.
package struct RemoteAction: Sendable, Hashable {
    /// The server's id of the request for this device (unique per server storage, ≥ 1).
    package var id: Int64
    package var kind: RemoteActionKind
    /// The partition it concerns; nil for the agent as a whole (`retry-now`, `diagnostics`).
    package var partition: String?

    package init(id: Int64, kind: RemoteActionKind, partition: String? = nil) {
        self.id = id
        self.kind = kind
        self.partition = partition
    }
}

/// The kind of a remote action, as its name travels. A name this build does not know decodes
/// (a newer server may send it) and the agent refuses it: ``isKnown`` is false.
package struct RemoteActionKind: RawRepresentable, Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    package var rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }

    /// Start the reset that waits for an operator (`manual` mode, or a delete-store that waits
    /// for `reset initiate`): `tetherctl reset initiate PARTITION`.
    package static let initiateReset = RemoteActionKind(rawValue: "initiate-reset")
    /// End the backoff and try again now: `tetherctl retry [PARTITION]`.
    package static let retryNow = RemoteActionKind(rawValue: "retry-now")
    /// `tetherctl pause PARTITION`.
    package static let pause = RemoteActionKind(rawValue: "pause")
    /// `tetherctl resume PARTITION`.
    package static let resume = RemoteActionKind(rawValue: "resume")
    /// Send a diagnostics report: the agent's status, its last events and its configuration
    /// with secrets removed; never row contents (`tetherctl diagnostics`).
    package static let diagnostics = RemoteActionKind(rawValue: "diagnostics")

    /// Every kind this build knows, in the order documentation lists them.
    package static let all: [RemoteActionKind] = [.initiateReset, .retryNow, .pause, .resume, .diagnostics]
    /// What an agent accepts when `[device] remote_actions` is not set: all but `pause` (a
    /// paused till stops syncing until someone resumes it, which an operator should choose on
    /// the device itself).
    package static let acceptedByDefault: [RemoteActionKind] = [.initiateReset, .retryNow, .resume, .diagnostics]

    package var isKnown: Bool { Self.all.contains(self) }
    /// Whether the action names a partition (`initiate-reset`, `pause`, `resume`) or may not.
    package var needsPartition: Bool { self == .initiateReset || self == .pause || self == .resume }

    package var description: String { rawValue }
    package static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    package init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// The agent's answer to a ``RemoteAction`` (protocol 8, docs/protocol.md `0a` action-result).
package struct RemoteActionResult: Sendable, Hashable {
    package enum Outcome: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Carried out (`tetherctl` would have exited 0).
        case done = 0
        /// Not carried out by the device's rules: not in `[device] remote_actions`, a kind it
        /// does not know, a partition it does not sync, nothing to do (no reset waits).
        case refused = 1
        /// Tried and failed (the reset could not start, the report could not be made).
        case failed = 2

        package var description: String {
            switch self {
            case .done: "done"
            case .refused: "refused"
            case .failed: "failed"
            }
        }
    }

    package var id: Int64
    package var outcome: Outcome
    /// One line for the operator (the agent's own words; no row contents).
    package var message: String
    /// `diagnostics`: the report, a JSON document (at most
    /// ``ProtocolLimits/maxActionReportBytes``); empty for the other kinds.
    package var report: [UInt8]

    package init(id: Int64, outcome: Outcome, message: String, report: [UInt8] = []) {
        self.id = id
        self.outcome = outcome
        self.message = message
        self.report = report
    }
}
