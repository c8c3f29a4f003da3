import Testing
import TetherServer
import TetherTOML

@Suite struct ConnectionLimitsConfigTests {
    static let base = "admin_token_file = \"/etc/tether/admin.token\"\n"

    @Test func defaults() throws {
        let config = try ServerConfiguration.parse(toml: Self.base, file: "f.toml")
        #expect(config.limits == ConnectionLimits())
        #expect(config.limits.unauthenticatedBytes == 64 * 1024)
        #expect(config.limits.unauthenticatedBytesPerPeer == 1 << 20)
        #expect(config.limits.unauthenticatedBodyBytes == 4096)
        #expect(config.limits.requestTimeout == .seconds(10))
        #expect(config.limits.ipv6PrefixLength == 64)
        #expect(config.limits.trustedProxies.isEmpty && !config.limits.proxyProtocol)
        #expect(!config.publicMetrics)
    }

    @Test func everyKeyIsRead() throws {
        let config = try ServerConfiguration.parse(toml: Self.base + """
            public_metrics = true
            [limits]
            unauthenticated_bytes = 32768
            unauthenticated_bytes_total = 1048576
            connections_per_peer = 8
            header_timeout_seconds = 3
            idle_timeout_seconds = 30
            auth_timeout_seconds = 4
            glob_partitions_per_user = 50
            unauthenticated_bytes_per_peer = 200000
            unauthenticated_body_bytes = 1024
            request_timeout_seconds = 7
            ipv6_prefix_length = 56
            trusted_proxies = ["10.0.0.0/8", "127.0.0.2", "fd00::/8"]
            proxy_protocol = true
            """, file: "f.toml")
        #expect(config.limits.unauthenticatedBytesPerPeer == 200_000)
        #expect(config.limits.unauthenticatedBodyBytes == 1024)
        #expect(config.limits.requestTimeout == .seconds(7))
        #expect(config.limits.ipv6PrefixLength == 56)
        #expect(config.limits.trustedProxies.map(\.description) == ["10.0.0.0/8", "127.0.0.2/32", "fd00::/8"])
        #expect(config.limits.proxyProtocol)
        #expect(config.publicMetrics)
        #expect(config.limits.unauthenticatedBytes == 32768)
        #expect(config.limits.unauthenticatedBytesTotal == 1_048_576)
        #expect(config.limits.connectionsPerPeer == 8)
        #expect(config.limits.headerTimeout == .seconds(3))
        #expect(config.limits.idleTimeout == .seconds(30))
        #expect(config.limits.authTimeout == .seconds(4))
        #expect(config.limits.globPartitionsPerUser == 50)
    }

    @Test func problemsNameKeyAndLine() {
        #expect(throws: ConfigError.self) {
            _ = try ServerConfiguration.parse(toml: Self.base + "[limits]\nconnections_per_peer = 0\n", file: "f.toml")
        }
        do {
            _ = try ServerConfiguration.parse(
                toml: Self.base + "[limits]\nunauthenticated_bytes = 100000\nunauthenticated_bytes_total = 65536\nheader_timeout = 3\n",
                file: "f.toml")
            Issue.record("accepted")
        } catch {
            let lines = error.problems.map(\.description)
            #expect(lines.contains { $0.hasPrefix("f.toml:") && $0.contains("limits.unauthenticated_bytes_total: must be at least") })
            #expect(lines.contains { $0.contains("limits.header_timeout") && $0.contains("unknown key") })
        }
    }

    @Test func proxyAndShareProblemsNameTheirKey() {
        do {
            _ = try ServerConfiguration.parse(
                toml: Self.base + """
                    [limits]
                    trusted_proxies = ["10.0.0.0/8", "proxy.example.com", "10.0.0.0/33"]
                    unauthenticated_bytes_total = 1048576
                    unauthenticated_bytes_per_peer = 2097152
                    ipv6_prefix_length = 0
                    """,
                file: "f.toml")
            Issue.record("accepted")
        } catch {
            let lines = error.problems.map(\.description)
            #expect(lines.contains { $0.contains("limits.trusted_proxies") && $0.contains("proxy.example.com") })
            #expect(lines.contains { $0.contains("limits.trusted_proxies") && $0.contains("10.0.0.0/33") })
            #expect(lines.contains { $0.contains("limits.unauthenticated_bytes_per_peer: must be at most") })
            #expect(lines.contains { $0.contains("limits.ipv6_prefix_length") })
        }
        #expect(throws: ConfigError.self) {
            _ = try ServerConfiguration.parse(toml: Self.base + "[limits]\nproxy_protocol = true\n", file: "f.toml")
        }
    }
}
