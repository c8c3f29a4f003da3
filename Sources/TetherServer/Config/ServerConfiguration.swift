import TetherProtocol

/// `tether-server.toml` (docs/contract.md: Server, docs/server.md), parsed and validated.
package struct ServerConfiguration: Sendable, Hashable {
    package struct User: Sendable, Hashable {
        package var name: String
        package var tokenFile: String
        package init(name: String, tokenFile: String) {
            self.name = name
            self.tokenFile = tokenFile
        }
    }

    package struct Grant: Sendable, Hashable {
        package var user: String
        package var patterns: [GrantPattern]
        package var access: PartitionAccess
        /// `[[grant.write]]`: per table, what devices of a readwrite grant may write (issue 51).
        package var writeRules: [WriteRule]
        /// `[[grant.subscription]]`: per table, the rows devices of the grant may hold (issue 51);
        /// templates are the device's (docs/subscriptions.md "Subscriptions a grant imposes").
        package var subscriptions: [Subscription]
        package init(
            user: String, patterns: [GrantPattern], access: PartitionAccess, writeRules: [WriteRule] = [],
            subscriptions: [Subscription] = []
        ) {
            self.user = user
            self.patterns = patterns
            self.access = access
            self.writeRules = writeRules
            self.subscriptions = subscriptions
        }
    }

    /// One `[[grant.write]]`: the table, a filter rows must match before and after a change
    /// (the subscription language; nil: any row), and columns devices may not change.
    package struct WriteRule: Sendable, Hashable {
        package var table: String
        package var filter: String?
        package var readOnly: [String]
        package init(table: String, filter: String?, readOnly: [String]) {
            self.table = table
            self.filter = filter
            self.readOnly = readOnly
        }
    }

    package struct TLSFiles: Sendable, Hashable {
        package var certificate: String
        package var key: String
        /// `tls_min_version`: the oldest TLS version a client may use (1.2 unless told).
        package var minimumVersion: TLSMinimumVersion
        package init(certificate: String, key: String, minimumVersion: TLSMinimumVersion = .default) {
            self.certificate = certificate
            self.key = key
            self.minimumVersion = minimumVersion
        }
    }

    /// The file this was read from, for messages.
    package var file: String
    /// `listen`: the devices' listener (`/sync`, `/healthz`, `/metrics` with `public_metrics`).
    package var listen: ListenAddress
    /// `admin_listen`: the admin listener (`/admin`, `/console`, `/healthz`, `/metrics`); the
    /// devices' listener answers those paths 404 with a pointer here.
    package var adminListen = ServerConfiguration.defaultAdminListen
    package var dataDirectory: String
    package var schemaFile: String
    package var adminTokenFile: String
    package var clientRecovery: Bool
    package var tls: TLSFiles?
    /// History older than this may be compacted; devices that last synced before it get 222.
    package var historyHorizonDays: Int
    package var logLevel: ServerLogLevel
    package var users: [User]
    package var grants: [Grant]
    /// `[storage]`: SQLite in `data_dir` (the default) or a shared PostgreSQL database.
    package var storage: StorageConfiguration = .sqlite
    /// `metrics_listen`: a second listener serving only `/metrics` and `/healthz`; nil: none
    /// (`/healthz` is always on the devices' and admin listeners too, `/metrics` on the admin listener).
    package var metricsListen: ListenAddress? = nil
    /// `public_metrics`: serve `/metrics` on `listen` too (default false: only on
    /// `metrics_listen`, so partition names and scrape load stay off the devices' network).
    package var publicMetrics = false
    /// `[limits]`: what a connection may cost before it authenticates.
    package var limits = ConnectionLimits()
    /// `[history] devices_ahead`: what a restore the server was not told of (a database put
    /// back while it was stopped, found when a device binds ahead of the history) does with
    /// the window it lost, and the default of `admin restore` and `restore-backup`: `heal`
    /// (devices give it back; nothing is lost unless an operator asks) or `rollback`.
    package var devicesAhead: RestoreMode = .heal
    /// `[ready_files]`: states served as store files built once per version (nil until parsed:
    /// the default under `data_dir`).
    package var readyFiles: ReadyFileSettings? = nil
    /// `[devices]`: the device ledger's stale and wedged ages and its bound.
    package var devices = DeviceLedgerSettings()
    /// `[subscriptions]`: the columns indexed for subscription filters, and the bound on a
    /// filter no index serves.
    package var subscriptions = SubscriptionSettings()

    /// `[ready_files]` as configured, or its defaults.
    package var readyFileSettings: ReadyFileSettings { readyFiles ?? ReadyFileSettings(dataDirectory: dataDirectory) }

    package static let defaultPath = "/etc/tether/tether-server.toml"
    package static let defaultListen = ListenAddress(host: "127.0.0.1", port: 7800)
    package static let defaultAdminListen = ListenAddress(host: "127.0.0.1", port: 7801)
    package static let defaultHistoryHorizonDays = 30
}
