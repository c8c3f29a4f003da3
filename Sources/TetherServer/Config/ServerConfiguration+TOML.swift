import TetherTOML
import TetherProtocol

extension ServerConfiguration {
    /// Parses a configuration file's text; every problem names file, key and line.
    package static func parse(toml text: String, file: String) throws(ConfigError) -> ServerConfiguration {
        let parser = try ConfigParser(text: text, file: file)
        let configuration = read(parser.root, file: file)
        try parser.finish()
        return configuration
    }

    /// Every key `tether-server.toml` accepts, as dotted paths without array indices
    /// (`listen`, `storage.url`, `user.token_file`): what the reader asks for when every table is
    /// present. docs/server.md, the example file and tether-server.toml(5) must name each (a
    /// test checks).
    package static var keys: [String] {
        let everyTable = """
            [storage]
            [history]
            [ready_files]
            [limits]
            [devices]
            [subscriptions]
            [[user]]
            name = "u"
            [[grant]]
            user = "u"
            [[grant.write]]
            table = "t"
            [[grant.subscription]]
            table = "t"
            """
        guard let parser = try? ConfigParser(text: everyTable, file: "keys") else { return [] }  // a fixed text: it parses
        _ = read(parser.root, file: "keys")
        return parser.askedKeys
    }

    /// Reads every key of `root`; problems go to its parser.
    static func read(_ root: ConfigTable, file: String) -> ServerConfiguration {

        let listen = address(root, "listen") ?? defaultListen
        let adminListen = address(root, "admin_listen") ?? defaultAdminListen
        let metricsListen = address(root, "metrics_listen")
        // Two listeners on one address: the second would fail to bind at start.
        if adminListen.port != 0, adminListen == listen {
            root.problem("admin_listen", "admin_listen and listen are both \(listen): the admin listener needs an address of its own")
        }
        if let metricsListen, metricsListen.port != 0, metricsListen == listen || metricsListen == adminListen {
            root.problem("metrics_listen", "metrics_listen is \(metricsListen), the address of \(metricsListen == listen ? "listen" : "admin_listen")")
        }
        let dataDirectory = root.absolutePath("data_dir") ?? "/var/lib/tether-server"
        let schemaFile = root.absolutePath("schema") ?? "/etc/tether/schema.toml"
        let adminTokenFile = root.absolutePath("admin_token_file", required: true) ?? ""
        let clientRecovery = root.bool("client_recovery") ?? true
        let horizon = root.integer("history_horizon_days", range: 1...36500) ?? defaultHistoryHorizonDays
        let logLevel = root.enumeration("log_level", ServerLogLevel.self) ?? .info

        var tls: TLSFiles? = nil
        let certificate = root.absolutePath("tls_certificate")
        let key = root.absolutePath("tls_key")
        let minimumVersion = root.enumeration("tls_min_version", TLSMinimumVersion.self)
        switch (certificate, key) {
        case (let c?, let k?): tls = TLSFiles(certificate: c, key: k, minimumVersion: minimumVersion ?? .default)
        case (nil, nil):
            if minimumVersion != nil { root.problem("tls_min_version", "tls_min_version is read only with tls_certificate and tls_key") }
        case (_?, nil): root.problem("tls_certificate", "tls_certificate needs tls_key too")
        case (nil, _?): root.problem("tls_key", "tls_key needs tls_certificate too")
        }

        var users: [User] = []
        for table in root.tables("user") {
            guard let name = table.string("name", required: true) else { _ = table.string("token_file"); continue }
            let tokenFile = table.absolutePath("token_file", required: true) ?? ""
            if users.contains(where: { $0.name == name }) {
                table.problem("name", "user \(name.debugDescription) is defined twice")
            } else if name.isEmpty || name.utf8.count > 128 {
                table.problem("name", "a user name must be 1 to 128 bytes")
            } else if name.hasPrefix("tag:") || name.hasPrefix("device:") {
                table.problem("name", "a user name may not start with tag: or device: (they name grants' device subjects)")
            }
            users.append(User(name: name, tokenFile: tokenFile))
        }

        var grants: [Grant] = []
        for table in root.tables("grant") {
            let user = table.string("user", required: true)
            let patterns = table.stringArray("partitions", required: true) ?? []
            let access = table.enumeration("access", PartitionAccess.self, required: true)
            // `tag:K=V` and `device:*` name enrolled devices (docs/server.md "Grants by subject and template").
            if let user {
                if user.hasPrefix("tag:") || user.hasPrefix("device:") {
                    let valid = user == "device:*" || (user.hasPrefix("tag:") && DeviceIdentityRules.parseTag(String(user.dropFirst(4))) != nil)
                    if !valid { table.problem("user", "\(user.debugDescription) is neither a [[user]], tag:KEY=VALUE nor device:*") }
                } else if !users.contains(where: { $0.name == user }) {
                    table.problem("user", "no [[user]] is named \(user.debugDescription)")
                }
            }
            var parsed: [GrantPattern] = []
            for (i, text) in patterns.enumerated() {
                switch GrantPattern.parse(text) {
                case .success(let pattern): parsed.append(pattern)
                case .failure(let reason): table.problem("partitions[\(i)]", reason.description)
                }
            }
            if patterns.isEmpty, table.has("partitions") { table.problem("partitions", "lists no partition") }
            let writeRules = table.tables("write").compactMap(writeRule)
            if !writeRules.isEmpty, access == .read {
                table.problem("write", "a read grant lets devices write nothing: write rules belong to readwrite grants")
            }
            let subscriptions = table.tables("subscription").compactMap(grantSubscription)
            if subscriptions.count > SubscriptionSetLimits.maxSubscriptions {
                table.problem(
                    "subscription", "\(subscriptions.count) subscriptions; a grant may impose at most \(SubscriptionSetLimits.maxSubscriptions)")
            }
            if let user, let access {
                grants.append(Grant(user: user, patterns: parsed, access: access, writeRules: writeRules, subscriptions: subscriptions))
            }
        }

        let storage = root.table("storage").map(parseStorage) ?? .sqlite
        let publicMetrics = root.bool("public_metrics") ?? false
        let limits = root.table("limits").map(ConnectionLimits.parse) ?? ConnectionLimits()
        let devicesAhead = root.table("history")?.enumeration("devices_ahead", RestoreMode.self) ?? .heal
        let readyFiles = ReadyFileSettings.parse(root.table("ready_files"), dataDirectory: dataDirectory)
        let devices = DeviceLedgerSettings.parse(root.table("devices"))
        let subscriptions = SubscriptionSettings.parse(root.table("subscriptions"))

        var configuration = ServerConfiguration(
            file: file, listen: listen, dataDirectory: dataDirectory, schemaFile: schemaFile,
            adminTokenFile: adminTokenFile, clientRecovery: clientRecovery, tls: tls,
            historyHorizonDays: horizon, logLevel: logLevel, users: users, grants: grants)
        configuration.storage = storage
        configuration.adminListen = adminListen
        configuration.metricsListen = metricsListen
        configuration.publicMetrics = publicMetrics
        configuration.limits = limits
        configuration.devicesAhead = devicesAhead
        configuration.readyFiles = readyFiles
        configuration.devices = devices
        configuration.subscriptions = subscriptions
        return configuration
    }
}

extension ServerConfiguration {
    /// A `host:port` key; nil when absent or not an address (a problem then).
    static func address(_ table: ConfigTable, _ key: String) -> ListenAddress? {
        guard let text = table.string(key) else { return nil }
        guard let parsed = ListenAddress(text) else {
            table.problem(key, "\(text.debugDescription) is not host:port (port 0-65535)")
            return nil
        }
        return parsed
    }

    /// `[storage]`: `kind`, and for PostgreSQL `url` (required), `password_file` and
    /// `max_state_downloads`.
    static func parseStorage(_ table: ConfigTable) -> StorageConfiguration {
        let kind = table.enumeration("kind", StorageConfiguration.Kind.self) ?? .sqlite
        let url = table.string("url", required: kind == .postgresql)
        let passwordFile = table.absolutePath("password_file")
        let downloads = table.integer("max_state_downloads", range: StorageConfiguration.maxStateDownloadsRange)
        switch kind {
        case .sqlite:
            if url != nil { table.problem("url", "url is read only with kind = \"postgresql\"") }
            if passwordFile != nil { table.problem("password_file", "password_file is read only with kind = \"postgresql\"") }
            if downloads != nil {
                table.problem("max_state_downloads", "max_state_downloads is read only with kind = \"postgresql\"")
            }
            return .sqlite
        case .postgresql:
            let maxStateDownloads = downloads ?? StorageConfiguration.defaultMaxStateDownloads
            guard let url else { return StorageConfiguration(kind: .postgresql, maxStateDownloads: maxStateDownloads) }
            switch PostgresLocation.parse(url: url) {
            case .success(var location):
                location.passwordFile = passwordFile
                return StorageConfiguration(kind: .postgresql, postgres: location, maxStateDownloads: maxStateDownloads)
            case .failure(let problem):
                table.problem("url", problem.description)
                return StorageConfiguration(kind: .postgresql, maxStateDownloads: maxStateDownloads)
            }
        }
    }

    /// One `[[grant.write]]`: the filter's syntax is checked here, its columns against the
    /// schema when a device binds (a rule that cannot be resolved for it refuses its writes).
    static func writeRule(_ table: ConfigTable) -> WriteRule? {
        let name = table.string("table", required: true)
        let filter = table.string("where")
        let readOnly = table.stringArray("read_only") ?? []
        guard let name else { return nil }
        if let problem = Schema.identifierProblem(name) { table.problem("table", "table name \(problem)") }
        for (i, column) in readOnly.enumerated() {
            if let problem = Schema.identifierProblem(column) { table.problem("read_only[\(i)]", "column name \(problem)") }
        }
        if let filter {
            do {
                try Subscription(table: name, filter: filter).checkSyntax()
            } catch {
                table.problem("where", error.description)
            }
        }
        if filter == nil, readOnly.isEmpty { table.problem("table", "a write rule needs a where filter, read_only columns, or both") }
        return WriteRule(table: name, filter: filter, readOnly: readOnly)
    }

    /// One `[[grant.subscription]]`: the filter's syntax is checked here, its columns against the
    /// schema when a device binds (a subscription that cannot be resolved for it refuses the
    /// bind with 227). Without `where` the grant leaves the table whole.
    static func grantSubscription(_ table: ConfigTable) -> Subscription? {
        let name = table.string("table", required: true)
        let filter = table.string("where")
        guard let name else { return nil }
        if let problem = Schema.identifierProblem(name) {
            table.problem("table", "table name \(problem)")
            return nil
        }
        let subscription = Subscription(table: name, filter: filter)
        do {
            try subscription.checkSyntax()
        } catch {
            table.problem("where", error.description)
        }
        return subscription
    }
}
