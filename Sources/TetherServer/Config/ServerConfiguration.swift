public import TetherProtocol

/// `tether-server.toml` (docs/contract.md: Server, docs/server.md), parsed and validated.
public struct ServerConfiguration: Sendable, Hashable {
    public struct User: Sendable, Hashable {
        public var name: String
        public var tokenFile: String
        public init(name: String, tokenFile: String) {
            self.name = name
            self.tokenFile = tokenFile
        }
    }

    public struct Grant: Sendable, Hashable {
        public var user: String
        public var patterns: [GrantPattern]
        public var access: PartitionAccess
        public init(user: String, patterns: [GrantPattern], access: PartitionAccess) {
            self.user = user
            self.patterns = patterns
            self.access = access
        }
    }

    public struct TLSFiles: Sendable, Hashable {
        public var certificate: String
        public var key: String
        /// `tls_min_version`: the oldest TLS version a client may use (1.2 unless told).
        public var minimumVersion: TLSMinimumVersion
        public init(certificate: String, key: String, minimumVersion: TLSMinimumVersion = .default) {
            self.certificate = certificate
            self.key = key
            self.minimumVersion = minimumVersion
        }
    }

    /// The file this was read from, for messages.
    public var file: String
    /// `listen`: the devices' listener (`/sync`, `/healthz`, `/metrics` with `public_metrics`).
    public var listen: ListenAddress
    /// `admin_listen`: the admin listener (`/admin`, `/console`, `/healthz`, `/metrics`); the
    /// devices' listener answers those paths 404 with a pointer here.
    public var adminListen = ServerConfiguration.defaultAdminListen
    public var dataDirectory: String
    public var schemaFile: String
    public var adminTokenFile: String
    public var clientRecovery: Bool
    public var tls: TLSFiles?
    /// History older than this may be compacted; devices that last synced before it get 222.
    public var historyHorizonDays: Int
    public var logLevel: ServerLogLevel
    public var users: [User]
    public var grants: [Grant]
    /// `[storage]`: SQLite in `data_dir` (the default) or a shared PostgreSQL database.
    public var storage: StorageConfiguration = .sqlite
    /// `metrics_listen`: a second listener serving only `/metrics` and `/healthz`; nil: none
    /// (`/healthz` is always on the devices' and admin listeners too, `/metrics` on the admin listener).
    public var metricsListen: ListenAddress? = nil
    /// `public_metrics`: serve `/metrics` on `listen` too (default false: only on
    /// `metrics_listen`, so partition names and scrape load stay off the devices' network).
    public var publicMetrics = false
    /// `[limits]`: what a connection may cost before it authenticates.
    public var limits = ConnectionLimits()
    /// `[history] devices_ahead`: what a restore the server was not told of (a database put
    /// back while it was stopped, found when a device binds ahead of the history) does with
    /// the window it lost, and the default of `admin restore` and `restore-backup`: `heal`
    /// (devices give it back; nothing is lost unless an operator asks) or `rollback`.
    public var devicesAhead: RestoreMode = .heal
    /// `[ready_files]`: states served as store files built once per version (nil until parsed:
    /// the default under `data_dir`).
    public var readyFiles: ReadyFileSettings? = nil
    /// `[devices]`: the device ledger's stale and wedged ages and its bound.
    public var devices = DeviceLedgerSettings()

    /// `[ready_files]` as configured, or its defaults.
    public var readyFileSettings: ReadyFileSettings { readyFiles ?? ReadyFileSettings(dataDirectory: dataDirectory) }

    public static let defaultPath = "/etc/tether/tether-server.toml"
    public static let defaultListen = ListenAddress(host: "127.0.0.1", port: 7800)
    public static let defaultAdminListen = ListenAddress(host: "127.0.0.1", port: 7801)
    public static let defaultHistoryHorizonDays = 30
}
