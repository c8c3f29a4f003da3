/// How a ``Cluster`` is set up: the server's configuration and environment, its storage, how
/// many instances share it, the agents' log level, and how patient the harness is.
package struct ClusterSettings: Sendable {
    /// The server's storage. PostgreSQL: the cluster starts a PostgreSQL of its own
    /// (``PostgresCluster``) and every instance uses one database of it.
    package enum Storage: String, Sendable {
        case sqlite, postgresql
    }

    /// How long the harness waits for the programs, and how often it polls them.
    package struct Timing: Sendable {
        /// For a server to listen and an agent's control socket to answer.
        package var start: Duration
        /// Between control-socket polls while an agent starts.
        package var startPoll: Duration
        /// For one `tetherctl` or `tether-server admin` command.
        package var command: Duration
        /// The default `--timeout` of `tetherctl wait-synced`, in seconds.
        package var waitSynced: Int
        /// For a signalled process to end.
        package var stop: Duration

        package init(start: Duration, startPoll: Duration, command: Duration, waitSynced: Int, stop: Duration) {
            self.start = start
            self.startPoll = startPoll
            self.command = command
            self.waitSynced = waitSynced
            self.stop = stop
        }

        /// Tests: debug builds, several clusters at once.
        package static let test = Timing(
            start: .seconds(60), startPoll: .milliseconds(10), command: .seconds(30), waitSynced: 30, stop: .seconds(20))
        /// `tether-bench`: release builds, millions of rows, boot times measured to the millisecond.
        package static let bench = Timing(
            start: .seconds(120), startPoll: .milliseconds(5), command: .seconds(300), waitSynced: 600, stop: .seconds(30))
    }

    /// The server's `client_recovery`.
    package var clientRecovery: Bool
    /// The device user's token (the server's `device.token` and every agent's `token`).
    package var token: String
    /// Among the server config's top-level keys (`metrics_listen = …`, `log_level = …`).
    package var serverExtra: String
    /// Appended to the server config (tables such as `[storage]`).
    package var serverConfig: String
    /// Right after the device user's `[[grant]]` (its `[[grant.write]]` rules).
    package var grantExtra: String = ""
    /// Added to the server's environment (fault injection, NOTIFY_SOCKET, WATCHDOG_USEC).
    package var serverEnvironment: [String: String]
    package var storage: Storage
    /// Server instances sharing the storage (more than one needs PostgreSQL).
    package var instances: Int
    /// Every agent's `log_level`.
    package var agentLogLevel: String
    package var timing: Timing
    /// The start of the cluster directory's name under `/tmp`.
    package var directoryPrefix: String

    package static let defaultToken = "device-secret"

    package init(
        clientRecovery: Bool = true, token: String = ClusterSettings.defaultToken, serverExtra: String = "",
        serverConfig: String = "", serverEnvironment: [String: String] = [:], storage: Storage = .sqlite,
        instances: Int = 1, agentLogLevel: String = "debug", timing: Timing = .test, directoryPrefix: String = "tether-e2e"
    ) {
        self.clientRecovery = clientRecovery
        self.token = token
        self.serverExtra = serverExtra
        self.serverConfig = serverConfig
        self.serverEnvironment = serverEnvironment
        self.storage = storage
        self.instances = instances
        self.agentLogLevel = agentLogLevel
        self.timing = timing
        self.directoryPrefix = directoryPrefix
    }
}
