/// One request on the control socket: a JSON object on one line (docs/control-protocol.md).
public struct ControlRequest: Sendable, Hashable, Codable {
    public enum Command: String, Sendable, Hashable, Codable, CaseIterable {
        /// The agent's release, the control protocol's version, its capabilities and the
        /// caller's role (``HelloReport``).
        case hello
        case status
        case resets
        case resetInitiate = "reset-initiate"
        case waitSynced = "wait-synced"
        case pause
        case resume
        case logLevel = "log-level"
        case metrics
        /// The kept events; with `follow`, then every new one, one JSON object per line.
        case events
        /// End the backoff and try again at once: the connection's reconnect, and the bind of
        /// the partition named (or of every partition).
        case retryNow = "retry-now"
        /// A diagnostics report (``DiagnosticsReport``): status, the last events, the
        /// configuration with secrets removed; what a remote `diagnostics` action sends.
        case diagnostics
        /// The subscriptions a partition's store holds and those configured
        /// (``SubscriptionsReport``).
        case subscriptions
        /// Sets the subscriptions a partition wants at run time (`subscriptions`, a list), or
        /// clears that set (`clear`) so the configured one is in force again
        /// (docs/subscriptions.md "Changing them at run time"); answers a ``SubscriptionsReport``.
        case setSubscriptions = "set-subscriptions"

        /// True for the commands that change the agent (docs/operations.md "Two roles on the
        /// control socket"): only root, the daemon's user and the operator group may send them.
        public var changesState: Bool {
            switch self {
            case .hello, .status, .resets, .waitSynced, .metrics, .events, .diagnostics, .subscriptions: false
            case .resetInitiate, .pause, .resume, .logLevel, .retryNow, .setSubscriptions: true
            }
        }
    }

    public var command: Command
    public var partition: String?
    /// `wait-synced`: seconds to wait.
    public var timeout: Double?
    /// `log-level`: the new level.
    public var level: String?
    /// `events`: after the kept events, stream new ones until the client closes.
    public var follow: Bool?
    /// `events`: only the events whose `seq` is greater (the last one the reader handled);
    /// a `dropped` event first when some of those are no longer kept.
    public var after: UInt64?
    /// `set-subscriptions`: the partition's new subscriptions (at least one).
    public var subscriptions: [Tether.Subscription]?
    /// `set-subscriptions`: true clears the set made at run time (instead of `subscriptions`).
    public var clear: Bool?
    /// The control protocol version the client speaks (``ControlProtocol/version`` when it
    /// is this release's); an agent that speaks an older one refuses with `protocol-too-new`.
    public var `protocol`: Int?

    public init(
        command: Command, partition: String? = nil, timeout: Double? = nil, level: String? = nil, follow: Bool? = nil,
        after: UInt64? = nil, protocol: Int? = nil, subscriptions: [Tether.Subscription]? = nil, clear: Bool? = nil
    ) {
        self.command = command
        self.partition = partition
        self.timeout = timeout
        self.level = level
        self.follow = follow
        self.after = after
        self.protocol = `protocol`
        self.subscriptions = subscriptions
        self.clear = clear
    }
}

/// The answer: `{"ok":true,"result":…}` or
/// `{"ok":false,"error":"…","code":"unknown-partition","exit_code":1}`.
public struct ControlResponse: Sendable, Hashable, Codable {
    public var ok: Bool
    /// The command's result as a JSON document (already encoded, to keep this type simple).
    public var result: JSONValue?
    public var error: String?
    /// What kind of refusal `error` is, for programs (``ControlErrorCode``); nil from agents
    /// older than control protocol 2.
    public var code: ControlErrorCode?
    /// The exit status `tetherctl` should use (docs/contract.md: Programs: 1 runtime error, 2 usage error).
    public var exitCode: Int32?

    enum CodingKeys: String, CodingKey {
        case ok, result, error, code
        case exitCode = "exit_code"
    }

    /// The exit status of a refusal: the client's uid may not use the socket, or may only read
    /// and sent a changing command (docs/operations.md "tetherctl exit codes").
    public static let permissionDeniedExitCode: Int32 = 4

    public static func success(_ result: JSONValue) -> Self { Self(ok: true, result: result) }
    /// A refusal; its code is `code`, or what `exitCode` says (2: `bad-request`, 4:
    /// `permission-denied`, else `failed`).
    public static func failure(_ message: String, exitCode: Int32 = 1, code: ControlErrorCode? = nil) -> Self {
        let code = code ?? (exitCode == 2 ? .badRequest : exitCode == permissionDeniedExitCode ? .permissionDenied : .failed)
        return Self(ok: false, error: message, code: code, exitCode: exitCode)
    }

    public init(ok: Bool, result: JSONValue? = nil, error: String? = nil, code: ControlErrorCode? = nil, exitCode: Int32? = nil) {
        self.ok = ok
        self.result = result
        self.error = error
        self.code = code
        self.exitCode = exitCode
    }
}
