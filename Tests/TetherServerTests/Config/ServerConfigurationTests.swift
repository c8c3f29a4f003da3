import Testing
import TetherProtocol
import TetherServer
import TetherTOML
import TetherTestSupport

@Suite struct ServerConfigurationTests {
    @Test func theSpecExampleParses() throws {
        let text = """
            listen = "127.0.0.1:7800"               # sync (WebSocket, path /sync) and admin (/admin) API
            data_dir = "/var/lib/tether-server"
            schema = "/etc/tether/schema.toml"
            admin_token_file = "/etc/tether/admin.token"
            client_recovery = true                  # false: clients get reset without recovery
            # tls_certificate = "/etc/tether/tls/cert.pem"
            # tls_key = "/etc/tether/tls/key.pem"

            [[user]]
            name = "pos-17"
            token_file = "/etc/tether/users/pos-17.token"

            [[grant]]
            user = "pos-17"
            partitions = ["store-17", "catalog-*"]  # exact names or globs
            access = "readwrite"                    # read | readwrite
            """
        let config = try ServerConfiguration.parse(toml: text, file: "tether-server.toml")
        #expect(config.listen == ListenAddress(host: "127.0.0.1", port: 7800))
        #expect(config.dataDirectory == "/var/lib/tether-server")
        #expect(config.clientRecovery)
        #expect(config.tls == nil)
        #expect(config.historyHorizonDays == 30)
        #expect(config.logLevel == .info)
        #expect(config.users.map(\.name) == ["pos-17"])
        #expect(config.grants.first?.patterns.map(\.text) == ["store-17", "catalog-*"])
        #expect(config.grants.first?.access == .readwrite)
    }

    @Test func addedKeysAndTLSPairs() throws {
        let config = try ServerConfiguration.parse(toml: """
            listen = "[::1]:0"
            admin_token_file = "/a"
            history_horizon_days = 7
            log_level = "debug"
            tls_certificate = "/c.pem"
            tls_key = "/k.pem"
            """, file: "f.toml")
        #expect(config.listen == ListenAddress(host: "::1", port: 0))
        #expect(config.listen.description == "[::1]:0")
        #expect(config.historyHorizonDays == 7 && config.logLevel == .debug)
        #expect(config.tls == ServerConfiguration.TLSFiles(certificate: "/c.pem", key: "/k.pem"))
        #expect(throws: ConfigError.self) {
            try ServerConfiguration.parse(toml: "admin_token_file = \"/a\"\ntls_key = \"/k.pem\"\n", file: "f.toml")
        }
    }

    @Test func adminListenIsALoopbackListenerOfItsOwnByDefault() throws {
        let defaults = try ServerConfiguration.parse(toml: "admin_token_file = \"/a\"\n", file: "f.toml")
        #expect(defaults.listen == ListenAddress(host: "127.0.0.1", port: 7800))
        #expect(defaults.adminListen == ListenAddress(host: "127.0.0.1", port: 7801))
        let set = try ServerConfiguration.parse(toml: "admin_token_file = \"/a\"\nadmin_listen = \"[::1]:9000\"\n", file: "f.toml")
        #expect(set.adminListen == ListenAddress(host: "::1", port: 9000))
        // Port 0 (tests) on both: each binds a free port of its own.
        let zero = try ServerConfiguration.parse(toml: "admin_token_file = \"/a\"\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n", file: "f.toml")
        #expect(zero.listen.port == 0 && zero.adminListen.port == 0)
        for (text, problem) in [
            ("admin_listen = \"7801\"", "f.toml:2: admin_listen: \"7801\" is not host:port (port 0-65535)"),
            ("listen = \"0.0.0.0:7800\"\nadmin_listen = \"0.0.0.0:7800\"",
             "f.toml:3: admin_listen: admin_listen and listen are both 0.0.0.0:7800: the admin listener needs an address of its own"),
        ] {
            do {
                _ = try ServerConfiguration.parse(toml: "admin_token_file = \"/a\"\n" + text + "\n", file: "f.toml")
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.problems.map(\.description) == [problem])
            }
        }
    }

    /// `[devices] max_devices_per_user`: 1,000 by default, never more than `max_entries`.
    @Test func theDeviceQuotaDefaultsTo1000AndStaysWithinMaxEntries() throws {
        let base = "admin_token_file = \"/a\"\n[devices]\n"
        #expect(try ServerConfiguration.parse(toml: base, file: "f.toml").devices.maxDevicesPerUser == 1000)
        #expect(try ServerConfiguration.parse(toml: base + "max_entries = 50\n", file: "f.toml").devices.maxDevicesPerUser == 50)
        #expect(try ServerConfiguration.parse(toml: base + "max_devices_per_user = 5000\n", file: "f.toml").devices.maxDevicesPerUser == 5000)
        do {
            _ = try ServerConfiguration.parse(toml: base + "max_entries = 50\nmax_devices_per_user = 51\n", file: "f.toml")
            Issue.record("accepted")
        } catch {
            #expect(error.problems.map(\.description) == ["f.toml:4: devices.max_devices_per_user: 51 is more than max_entries (50)"])
        }
    }

    /// Issue 46: TLS 1.0 and 1.1 are never accepted: 1.2 by default, 1.3 on request.
    @Test func tlsMinVersionIs12UnlessTold() throws {
        let pair = "admin_token_file = \"/a\"\ntls_certificate = \"/c.pem\"\ntls_key = \"/k.pem\"\n"
        #expect(try ServerConfiguration.parse(toml: pair, file: "f.toml").tls?.minimumVersion == .tls12)
        let strict = try ServerConfiguration.parse(toml: pair + "tls_min_version = \"1.3\"\n", file: "f.toml")
        #expect(strict.tls?.minimumVersion == .tls13)
        func problems(_ text: String) -> [String] {
            do {
                _ = try ServerConfiguration.parse(toml: text, file: "f.toml")
                return []
            } catch { return error.problems.map(\.description) }
        }
        #expect(problems(pair + "tls_min_version = \"1.1\"\n") == [#"f.toml:4: tls_min_version: "1.1" is not one of "1.2", "1.3""#])
        #expect(problems("admin_token_file = \"/a\"\ntls_min_version = \"1.2\"\n")
            == ["f.toml:2: tls_min_version: tls_min_version is read only with tls_certificate and tls_key"])
    }

    @Test func devicesAheadIsHealUnlessRollbackIsAsked() throws {
        #expect(try ServerConfiguration.parse(toml: "admin_token_file = \"/a\"\n", file: "f.toml").devicesAhead == .heal)
        let rollback = try ServerConfiguration.parse(toml: "admin_token_file = \"/a\"\n[history]\ndevices_ahead = \"rollback\"\n", file: "f.toml")
        #expect(rollback.devicesAhead == .rollback)
        do {
            _ = try ServerConfiguration.parse(toml: "admin_token_file = \"/a\"\n[history]\ndevices_ahead = \"keep\"\n", file: "f.toml")
            Issue.record("accepted")
        } catch {
            #expect(error.problems.map(\.description).contains { $0.hasPrefix("f.toml:3: history.devices_ahead: \"keep\" is not one of") }, "\(error.problems)")
        }
    }

    @Test func readyFilesDefaultUnderTheDataDirectoryAndEveryKeyIsChecked() throws {
        let defaults = try ServerConfiguration.parse(toml: "admin_token_file = \"/a\"\ndata_dir = \"/d\"\n", file: "f.toml").readyFileSettings
        #expect(defaults == ReadyFileSettings(dataDirectory: "/d"))
        #expect(defaults.enabled && defaults.cacheDirectory == "/d/ready-files" && defaults.maxCacheBytes == 4 << 30 && defaults.minRows == 1000)
        #expect(defaults.settleSeconds == 2 && defaults.settleMaxSeconds == 60)
        let set = try ServerConfiguration.parse(
            toml: "admin_token_file = \"/a\"\n[ready_files]\nenabled = false\ncache_dir = \"/c\"\nmax_cache_bytes = 2097152\nmin_rows = 0\nsettle_seconds = 0\nsettle_max_seconds = 5\n",
            file: "f.toml").readyFileSettings
        #expect(!set.enabled && set.cacheDirectory == "/c" && set.maxCacheBytes == 2 << 20 && set.minRows == 0)
        #expect(set.settleSeconds == 0 && set.settleMaxSeconds == 5)
        do {
            _ = try ServerConfiguration.parse(
                toml: "admin_token_file = \"/a\"\n[ready_files]\ncache_dir = \"relative\"\nmax_cache_bytes = 5\nsize = 1\nsettle_seconds = -1\nsettle_max_seconds = 0\n",
                file: "f.toml")
            Issue.record("accepted")
        } catch {
            let problems = error.problems.map(\.description)
            #expect(problems.contains { $0.hasPrefix("f.toml:3: ready_files.cache_dir") }, "\(problems)")
            #expect(problems.contains { $0.hasPrefix("f.toml:4: ready_files.max_cache_bytes") }, "\(problems)")
            #expect(problems.contains { $0.hasPrefix("f.toml:5: ready_files.size") }, "\(problems)")
            #expect(problems.contains { $0.hasPrefix("f.toml:6: ready_files.settle_seconds") }, "\(problems)")
            #expect(problems.contains { $0.hasPrefix("f.toml:7: ready_files.settle_max_seconds") }, "\(problems)")
        }
    }

    @Test func everyProblemIsReported() {
        do {
            _ = try ServerConfiguration.parse(toml: """
                listen = "7800"
                [[user]]
                name = "a"
                token_file = "/t"
                [[user]]
                name = "a"
                token_file = "/t"
                [[grant]]
                user = "b"
                partitions = ["*", "x y"]
                access = "all"
                """, file: "f.toml")
            Issue.record("accepted")
        } catch {
            let lines = error.problems.map(\.description)
            #expect(lines.contains("f.toml: admin_token_file: missing required key (a string)"))
            #expect(lines.contains("f.toml:1: listen: \"7800\" is not host:port (port 0-65535)"))
            #expect(lines.contains("f.toml:6: user[1].name: user \"a\" is defined twice"))
            #expect(lines.contains("f.toml:9: grant[0].user: no [[user]] is named \"b\""))
            #expect(lines.contains { $0.hasPrefix("f.toml:10: grant[0].partitions[1]:") })
            #expect(lines.contains { $0.hasPrefix("f.toml:11: grant[0].access: \"all\" is not one of") })
        }
    }
}

/// Grants for enrolled devices in the config file (issue 48): `tag:K=V` and `device:*` subjects,
/// templates in patterns; a `[[user]]` may not take a device subject's form.
@Suite struct DeviceGrantConfigurationTests {
    static let root = """
        admin_token_file = "/a"
        """

    @Test func tagAndAllDevicesSubjectsWithTemplatesAreAccepted() throws {
        let configuration = try ServerConfiguration.parse(toml: Self.root + """

            [[grant]]
            user = "tag:role=kiosk"
            partitions = ["kiosk-{tag:zone}"]
            access = "read"
            [[grant]]
            user = "device:*"
            partitions = ["prices", "device-{name}", "id-{id}"]
            access = "readwrite"
            """, file: "f.toml")
        #expect(configuration.grants.map(\.user) == ["tag:role=kiosk", "device:*"])
        #expect(configuration.grants[1].patterns.map(\.text) == ["prices", "device-{name}", "id-{id}"])
    }

    @Test func malformedSubjectsAndDeviceLikeUserNamesAreRefused() {
        do {
            _ = try ServerConfiguration.parse(toml: Self.root + """

                [[user]]
                name = "tag:x"
                token_file = "/t"
                [[grant]]
                user = "tag:Store=17"
                partitions = ["store-{tag:store}"]
                access = "read"
                [[grant]]
                user = "device:till-1"
                partitions = ["{nope}"]
                access = "read"
                """, file: "f.toml")
            Issue.record("accepted")
        } catch {
            let lines = error.problems.map(\.description)
            #expect(lines.contains { $0.contains("user[0].name: a user name may not start with tag: or device:") }, "\(lines)")
            #expect(lines.contains { $0.contains("grant[0].user: \"tag:Store=17\" is neither a [[user]]") }, "\(lines)")
            #expect(lines.contains { $0.contains("grant[1].user: \"device:till-1\" is neither a [[user]]") }, "\(lines)")
            #expect(lines.contains { $0.contains("grant[1].partitions[0]: {nope}") }, "\(lines)")
        }
    }
}

@Suite struct GrantPatternTests {
    func pattern(_ text: String) throws -> GrantPattern { try GrantPattern.parse(text).get() }

    @Test func exactNamesAndGlobs() throws {
        #expect(try pattern("store-17").matches("store-17"))
        #expect(try !pattern("store-17").matches("store-170"))
        #expect(try pattern("catalog-*").matches("catalog-eu"))
        #expect(try pattern("catalog-*").matches("catalog-"))
        #expect(try !pattern("catalog-*").matches("catalogs"))
        #expect(try pattern("pos-??").matches("pos-17"))
        #expect(try !pattern("pos-??").matches("pos-170"))
        #expect(try pattern("*").matches("anything.at_all"))
        #expect(try pattern("*-*-*").matches("a-b-c"))
        #expect(try !pattern("*-*-*").matches("a-b"))
        #expect(try pattern("a*b*c").matches("aXXbYYc"))
        #expect(try pattern("store-17").isGlob == false)
    }

    @Test func illegalCharactersAreRefused() {
        for bad in ["", "a b", "a/b", "ü*", String(repeating: "a", count: 257)] {
            #expect((try? GrantPattern.parse(bad).get()) == nil, "\(bad)")
        }
    }

    @Test func pathologicalGlobsStayFast() throws {
        let glob = try pattern(String(repeating: "*a", count: 40) + "b")
        #expect(!glob.matches(String(repeating: "a", count: 128)))
    }
}

@Suite struct UserDirectoryTests {
    @Test func tokensAreComparedAsDigests() {
        let users = UserDirectory(entries: [("a", "token-a"), ("b", "token-b")])
        #expect(users.authenticate("token-b") == "b")
        #expect(users.authenticate("token-c") == nil)
        #expect(users.authenticate("") == nil)
        #expect(TokenDigest(token: "x").constantTimeEquals(TokenDigest(token: "x")))
        #expect(!TokenDigest(token: "x").constantTimeEquals(TokenDigest(token: "y")))
        #expect("\(TokenDigest(token: "secret"))" == "token digest")
    }

    @Test func tokenFilesAreTrimmedAndProblemsNamed() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = try dir.write("t", "  secret\n")
        #expect(try TokenFile.read(file).get() == "secret")
        let empty = try dir.write("e", "\n")
        #expect(throws: TokenFileError.self) { try TokenFile.read(empty).get() }
        do {
            _ = try TokenFile.read(dir.appending("missing")).get()
        } catch {
            #expect(error.description.contains("no such file"))
        }
    }
}
