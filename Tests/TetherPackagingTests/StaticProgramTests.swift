import Foundation
import Testing
import TetherTestSupport

/// The static programs carry the Swift runtime and Foundation inside them: they run on a
/// machine without a Swift toolchain. Proven by running them in a mount namespace in which the
/// toolchain's directory is empty.
@Suite struct StaticProgramTests {
    /// No Swift library among what the dynamic loader resolves, and nothing unresolved.
    @Test(arguments: Packaging.programs)
    func linksNoSwiftLibrary(program: String) async throws {
        let path = try Packaging.staticPrograms() + "/" + program
        let ldd = try await ChildProcess.run(try Packaging.tool("ldd"), [path])
        #expect(ldd.succeeded, "\(ldd)")
        let toolchain = try Packaging.toolchainDirectory()
        #expect(!ldd.standardOutput.contains(toolchain), "\(program) loads from \(toolchain):\n\(ldd.standardOutput)")
        #expect(!ldd.standardOutput.contains("libswift") && !ldd.standardOutput.contains("libFoundation"), "\(ldd.standardOutput)")
        #expect(!ldd.standardOutput.contains("not found"), "\(ldd.standardOutput)")
    }

    /// `--version` and `--help` of each program, with the toolchain hidden.
    @Test func versionAndHelpWithTheToolchainHidden() async throws {
        let bin = try Packaging.staticPrograms()
        let toolchain = try Packaging.toolchainDirectory()
        let result = try await Packaging.withoutToolchain(
            """
            test ! -e '\(toolchain)/usr/lib/swift/linux/libswiftCore.so'
            for p in tetherd tetherctl tether-server; do '\(bin)'/$p --version; '\(bin)'/$p --help >/dev/null; done
            """, hidden: toolchain)
        #expect(result.succeeded, "\(result)")
        #expect(result.standardOutput.contains("tetherd 0.") && result.standardOutput.contains("tetherctl 0.")
            && result.standardOutput.contains("tether-server 0."), "\(result)")
    }

    /// A real run with the toolchain hidden: a server, an agent syncing a row written with
    /// sqlite3, tetherctl waiting for it, the admin client seeing it, and a token made by
    /// `tether-server token new`.
    @Test func serverAndAgentSyncWithTheToolchainHidden() async throws {
        let bin = try Packaging.staticPrograms()
        let toolchain = try Packaging.toolchainDirectory()
        let work = try TemporaryDirectory(prefix: "tether-static")
        defer { work.remove() }
        let d = work.path
        let result = try await Packaging.withoutToolchain(
            """
            bin='\(bin)'; d='\(d)'
            mkdir -p "$d/users" "$d/state"
            printf 'version = 1\\n[tables.orders]\\nprimary_key = "id"\\n[tables.orders.columns]\\nid = "text"\\ntotal = "real"\\n' > "$d/schema.toml"
            cat > "$d/server.toml" <<EOT
            listen = "127.0.0.1:0"
            admin_listen = "127.0.0.1:0"
            data_dir = "$d/data"
            schema = "$d/schema.toml"
            admin_token_file = "$d/admin.token"
            [[user]]
            name = "pos-1"
            token_file = "$d/users/pos-1.token"
            [[grant]]
            user = "pos-1"
            partitions = ["store-*"]
            access = "readwrite"
            EOT
            "$bin/tether-server" token new --admin --config "$d/server.toml" >/dev/null
            "$bin/tether-server" token new pos-1 --config "$d/server.toml" > "$d/token"
            chmod 600 "$d/token"
            "$bin/tether-server" --config "$d/server.toml" > "$d/server.log" 2>&1 &
            server=$!
            trap 'kill $server ${agent:-} 2>/dev/null || true' EXIT
            for i in $(seq 1 300); do grep -q 'admin listening on 127.0.0.1:' "$d/server.log" && grep -q 'tether-server listening on 127.0.0.1:' "$d/server.log" && break; sleep 0.1; done
            port=$(sed -n 's/.*tether-server listening on 127.0.0.1:\\([0-9]*\\).*/\\1/p' "$d/server.log" | head -n 1)
            admin_port=$(sed -n 's/.*admin listening on 127.0.0.1:\\([0-9]*\\).*/\\1/p' "$d/server.log" | head -n 1)
            test -n "$port" && test -n "$admin_port"
            cat > "$d/tetherd.toml" <<EOT
            state_dir = "$d/state"
            control_socket = "$d/tetherd.sock"
            [server]
            url = "ws://127.0.0.1:$port/sync"
            token_file = "$d/token"
            [[partition]]
            name = "store-1"
            EOT
            "$bin/tetherd" --config "$d/tetherd.toml" --log-destination stderr > "$d/agent.log" 2>&1 &
            agent=$!
            for i in $(seq 1 300); do [ -S "$d/tetherd.sock" ] && break; sleep 0.1; done
            "$bin/tetherctl" --socket "$d/tetherd.sock" wait-synced store-1 --timeout 60
            sqlite3 "$d/state/stores/store-1.sqlite" "insert into orders(id, total) values ('o1', 9.5)"
            "$bin/tetherctl" --socket "$d/tetherd.sock" wait-synced store-1 --timeout 60
            "$bin/tether-server" admin --url "http://127.0.0.1:$admin_port" --token-file "$d/admin.token" status
            "$bin/tetherctl" --socket "$d/tetherd.sock" status
            """, hidden: toolchain)
        let log = { (name: String) in (try? String(contentsOfFile: d + "/" + name, encoding: .utf8)) ?? "" }
        #expect(result.succeeded, "\(result)\nserver:\n\(log("server.log"))\nagent:\n\(log("agent.log"))")
        #expect(result.standardOutput.contains("store-1"), "\(result)")
        #expect(result.standardOutput.contains("synced"), "\(result)")
    }
}
