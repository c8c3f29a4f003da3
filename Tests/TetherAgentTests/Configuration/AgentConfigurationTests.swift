import Foundation
import Testing
import TetherAgent
import TetherProtocol
import TetherSystemd
import TetherTOML

/// A temp dir with a 0600 token file and an executable hook, removed at the end.
private struct Fixture: ~Copyable {
    let dir: String
    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("tether-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir + "/hooks", withIntermediateDirectories: true)
        chmod(dir, 0o755)
        chmod(dir + "/hooks", 0o755)
        try write("token", "secret\n", mode: 0o600)
        try write("hooks/before", "#!/bin/sh\nexit 0\n", mode: 0o755)
    }
    deinit { try? FileManager.default.removeItem(atPath: dir) }

    func write(_ name: String, _ text: String, mode: mode_t) throws {
        try text.write(toFile: dir + "/" + name, atomically: false, encoding: .utf8)
        chmod(dir + "/" + name, mode)
    }

    func parse(_ body: String) throws(ConfigError) -> AgentConfiguration {
        try AgentConfiguration.parse(text: """
            \(body)
            [server]
            url = "ws://127.0.0.1:7800/sync"
            token_file = "\(dir)/token"
            """, file: "tetherd.toml")
    }
}

private func problems(_ body: () throws -> Void) -> [String] {
    do {
        try body()
        return []
    } catch let error as ConfigError {
        return error.problems.map(\.description)
    } catch {
        return ["unexpected \(error)"]
    }
}

@Test func defaultsAndInheritance() throws {
    let fixture = try Fixture()
    let config = try fixture.parse("""
        [reset]
        before_hook = "\(fixture.dir)/hooks/before"
        keep_backups = 3

        [[partition]]
        name = "store-17"

        [[partition]]
        name = "catalog-eu"
        store = "/srv/catalog.sqlite"
        [partition.reset]
        mode = "discard_unsynced_changes"
        """)
    #expect(config.stateDir == "/var/lib/tether")
    #expect(config.logLevel == .info)
    #expect(config.controlSocket == "/run/tether/tetherd.sock")
    #expect(config.stateDatabasePath == "/var/lib/tether/state.sqlite")
    #expect(config.partitions.map(\.name.rawValue) == ["store-17", "catalog-eu"])
    let store17 = config.partitions[0]
    #expect(store17.storePath == "/var/lib/tether/stores/store-17.sqlite")
    #expect(store17.reset.mode == .recoverUnsyncedChanges)
    #expect(store17.reset.beforeHook == fixture.dir + "/hooks/before")
    #expect(store17.reset.keepBackups == 3)
    #expect(store17.reset.hookTimeoutSeconds == 60)
    #expect(store17.reset.recoveryDir == "/var/lib/tether/recovery")
    let catalog = config.partitions[1]
    #expect(catalog.storePath == "/srv/catalog.sqlite")
    #expect(catalog.reset.mode == .discardUnsyncedChanges)
    // Inherited from [reset], not the built-in defaults:
    #expect(catalog.reset.keepBackups == 3)
    #expect(catalog.reset.beforeHook == fixture.dir + "/hooks/before")
}

@Test func everyProblemNamesKeyAndLine() throws {
    let fixture = try Fixture()
    let found = problems {
        _ = try fixture.parse("""
            log_level = "loud"
            colour = "blue"
            [reset]
            mode = "yolo"
            keep_backups = 0
            [[partition]]
            name = "bad name"
            [[partition]]
            name = "a"
            [[partition]]
            name = "a"
            """)
    }
    #expect(found.contains("tetherd.toml:1: log_level: \"loud\" is not one of fatal error warn info detail debug trace"))
    #expect(found.contains("tetherd.toml:2: colour: unknown key"))
    #expect(found.contains { $0.hasPrefix("tetherd.toml:4: reset.mode: \"yolo\" is not one of") })
    #expect(found.contains("tetherd.toml:5: reset.keep_backups: 0 is out of range 1...10000"))
    #expect(found.contains { $0.hasPrefix("tetherd.toml:7: partition[0].name: \"bad name\" is not a legal partition name") })
    #expect(found.contains("tetherd.toml:11: partition[2].name: partition a is configured twice"))
}

@Test func missingServerAndWrongTypes() {
    let found = problems {
        _ = try AgentConfiguration.parse(text: "state_dir = 5\n[[partition]]\nname = \"a\"\n", file: "t.toml")
    }
    #expect(found.contains("t.toml:1: state_dir: expected a string, found an integer"))
    #expect(found.contains("t.toml: server: missing required key (a table)"))
}

@Test func badURLAndRelativePaths() throws {
    let fixture = try Fixture()
    let found = problems {
        _ = try AgentConfiguration.parse(text: """
            state_dir = "relative/dir"
            [server]
            url = "http://x/sync"
            token_file = "\(fixture.dir)/token"
            [[partition]]
            name = "a"
            """, file: "t.toml")
    }
    #expect(found.contains("t.toml:1: state_dir: \"relative/dir\" must be an absolute path"))
    #expect(found.contains("t.toml:3: server.url: \"http://x/sync\" must be a ws:// or wss:// URL with a host"))
}

@Test func groupReadableTokenFileIsRefused() throws {
    let fixture = try Fixture()
    chmod(fixture.dir + "/token", 0o640)
    let found = problems { _ = try fixture.parse("[[partition]]\nname = \"a\"") }
    #expect(found.count == 1)
    #expect(found.first?.hasPrefix("tetherd.toml:5: server.token_file: \(fixture.dir)/token is readable by group or others (mode 640)") == true)
}

@Test func insecureOrMissingHooksAreRefused() throws {
    let fixture = try Fixture()
    try fixture.write("hooks/world", "#!/bin/sh\n", mode: 0o757)
    try fixture.write("hooks/noexec", "#!/bin/sh\n", mode: 0o644)
    let found = problems {
        _ = try fixture.parse("""
            [reset]
            before_hook = "\(fixture.dir)/hooks/world"
            after_hook = "\(fixture.dir)/hooks/noexec"
            manual_hook = "\(fixture.dir)/hooks/missing"
            [[partition]]
            name = "a"
            """)
    }
    #expect(found.contains("tetherd.toml:2: reset.before_hook: hook \(fixture.dir)/hooks/world is refused: \(fixture.dir)/hooks/world is writable by group or others (mode 757)"))
    #expect(found.contains("tetherd.toml:3: reset.after_hook: hook \(fixture.dir)/hooks/noexec is not executable"))
    #expect(found.contains("tetherd.toml:4: reset.manual_hook: hook \(fixture.dir)/hooks/missing: No such file or directory"))
}

@Test func hookInAWorldWritableDirectoryIsRefused() throws {
    let fixture = try Fixture()
    chmod(fixture.dir + "/hooks", 0o777)
    let found = problems {
        _ = try fixture.parse("[reset]\nbefore_hook = \"\(fixture.dir)/hooks/before\"\n[[partition]]\nname = \"a\"")
    }
    #expect(found.count == 1)
    #expect(found.first?.contains("its directory") == true)
}

@Test func metricsTextfileIsOptionalAbsoluteAndEndsInProm() throws {
    let fixture = try Fixture()
    let partition = "[[partition]]\nname = \"p\"\n"
    #expect(try fixture.parse(partition).metricsTextfile == nil)
    let config = try fixture.parse("metrics_textfile = \"/var/lib/node_exporter/tether.prom\"\n" + partition)
    #expect(config.metricsTextfile == "/var/lib/node_exporter/tether.prom")
    let wrongSuffix = problems { _ = try fixture.parse("metrics_textfile = \"/tmp/tether.txt\"\n" + partition) }
    #expect(wrongSuffix.count == 1 && wrongSuffix[0].contains("metrics_textfile") && wrongSuffix[0].contains(":1"), "\(wrongSuffix)")
    let relative = problems { _ = try fixture.parse("metrics_textfile = \"tether.prom\"\n" + partition) }
    #expect(relative.count == 1 && relative[0].contains("metrics_textfile"), "\(relative)")
}

@Test func eventsInheritAndOverridePerPartition() throws {
    let fixture = try Fixture()
    let config = try fixture.parse("""
        [events]
        error_hook = "\(fixture.dir)/hooks/before"
        error_hook_min_interval_seconds = 30

        [[partition]]
        name = "store-17"

        [[partition]]
        name = "catalog-eu"
        [partition.events]
        hook_timeout_seconds = 5
        error_hook_min_interval_seconds = 0
        """)
    #expect(config.events == EventSettings(errorHook: fixture.dir + "/hooks/before", errorHookMinIntervalSeconds: 30, hookTimeoutSeconds: 60))
    #expect(config.partitions[0].events == config.events)
    #expect(config.partitions[1].events == EventSettings(errorHook: fixture.dir + "/hooks/before", errorHookMinIntervalSeconds: 0, hookTimeoutSeconds: 5))
    let none = try fixture.parse("[[partition]]\nname = \"a\"")
    #expect(none.events == EventSettings() && none.events.errorHook == nil && none.events.errorHookMinIntervalSeconds == 60)
}

@Test func badErrorHooksAreRefusedWithKeyAndLine() throws {
    let fixture = try Fixture()
    try fixture.write("hooks/world", "#!/bin/sh\n", mode: 0o757)
    let found = problems {
        _ = try fixture.parse("""
            [events]
            error_hook = "\(fixture.dir)/hooks/missing"
            error_hook_min_interval_seconds = -1
            [[partition]]
            name = "a"
            [partition.events]
            error_hook = "\(fixture.dir)/hooks/world"
            [[partition]]
            name = "b"
            [reset]
            before_hook = "\(fixture.dir)/hooks/world"
            """)
    }
    #expect(found.contains("tetherd.toml:2: events.error_hook: hook \(fixture.dir)/hooks/missing: No such file or directory"), "\(found)")
    #expect(found.contains { $0.hasPrefix("tetherd.toml:3: events.error_hook_min_interval_seconds:") }, "\(found)")
    #expect(found.contains("tetherd.toml:7: partition[0].events.error_hook: hook \(fixture.dir)/hooks/world is refused: \(fixture.dir)/hooks/world is writable by group or others (mode 757)"), "\(found)")
    #expect(found.contains { $0.hasPrefix("tetherd.toml:11: reset.before_hook:") }, "a path shared with a reset hook is reported under both keys: \(found)")
}

/// Issue 32: `[control] operator_group`, a group name or a numeric gid; problems name key and line.
@Test func operatorGroupIsANameOrANumericGid() throws {
    let fixture = try Fixture()
    let partition = "[[partition]]\nname = \"p\"\n"
    #expect(try fixture.parse(partition).control.operatorGroup == .name("tether-admin"))
    #expect(try fixture.parse(partition + "[control]\noperator_group = \"ops\"\n").control.operatorGroup == .name("ops"))
    #expect(try fixture.parse(partition + "[control]\noperator_group = 2001\n").control.operatorGroup == .id(2001))
    #expect(try fixture.parse(partition + "[control]\noperator_group = \"2001\"\n").control.operatorGroup == .id(2001))
    let badName = problems { _ = try fixture.parse(partition + "[control]\noperator_group = \"ops; rm\"\n") }
    #expect(badName.count == 1 && badName[0].contains("control.operator_group") && badName[0].contains(":4"), "\(badName)")
    let negative = problems { _ = try fixture.parse(partition + "[control]\noperator_group = -1\n") }
    #expect(negative.count == 1 && negative[0].contains("control.operator_group"), "\(negative)")
    let wrongType = problems { _ = try fixture.parse(partition + "[control]\noperator_group = true\n") }
    #expect(wrongType.count == 1 && wrongType[0].contains("expected a group name or a numeric gid"), "\(wrongType)")
    let unknown = problems { _ = try fixture.parse(partition + "[control]\noperators = \"ops\"\n") }
    #expect(unknown.count == 1 && unknown[0].contains("control.operators"), "\(unknown)")
}
