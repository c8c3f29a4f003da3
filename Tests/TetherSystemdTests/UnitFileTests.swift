import Foundation
import Testing
import TetherTestSupport

/// The installed units, sysusers.d and tmpfiles.d files, checked with systemd's own tools
/// (`systemd-analyze verify` / `security`, `systemd-sysusers`, `systemd-tmpfiles`) — none needs
/// systemd as PID 1.
@Suite(.enabled(if: Tool.find("make") != nil && Tool.find("systemd-analyze") != nil, "needs make and systemd-analyze"))
struct UnitFileTests {
    /// `systemd-analyze verify` loads the unit, its dependencies and checks every `Exec…=`
    /// program exists and is executable.
    ///
    /// Not `verify --root=<DESTDIR>`: on systemd 252 `--root` moves the whole lookup into the
    /// DESTDIR — unit search path and executables — so it fails with "Unit sysinit.target not
    /// found" and "Command /bin/kill is not executable" for what only the real system has.
    /// Instead the installed unit is copied with `ExecStart=` pointing at the installed program
    /// in the DESTDIR (the only line that differs, asserted), and verified against the real
    /// system. `User=tether` does not have to exist: verify in 252 does not resolve users (the
    /// sysusers test below creates them from the shipped file).
    @Test(arguments: Installation.units)
    func verifyIsClean(unit: String) async throws {
        let installed = try await Installation.shared()
        let directory = try TemporaryDirectory(prefix: "tether-verify")
        let original = try String(contentsOfFile: installed.path(Installation.unitdir + "/" + unit), encoding: .utf8)
        let copy = original.replacingOccurrences(
            of: "\nExecStart=" + Installation.bindir + "/", with: "\nExecStart=" + installed.path(Installation.bindir) + "/")
        let changed = zip(original.split(separator: "\n"), copy.split(separator: "\n")).filter { $0 != $1 }
        #expect(changed.count == 1 && changed.first?.0.hasPrefix("ExecStart=") == true, "\(changed)")
        let path = directory.appending(unit)  // the unit's name comes from the file name
        try copy.write(toFile: path, atomically: false, encoding: .utf8)

        let result = try await ChildProcess.run(try Tool.path("systemd-analyze"), ["verify", path], timeout: .seconds(60))
        #expect(result.succeeded, "\(result)")
        #expect(result.standardOutput.isEmpty && result.standardError.isEmpty, "verify printed: \(result)")
    }

    /// Verify does catch a broken unit (so a clean result above means something).
    @Test func verifyReportsABrokenUnit() async throws {
        let installed = try await Installation.shared()
        let directory = try TemporaryDirectory(prefix: "tether-verify")
        let original = try String(contentsOfFile: installed.path(Installation.unitdir + "/tetherd.service"), encoding: .utf8)
        let path = directory.appending("tetherd.service")
        let missing = directory.appending("missing/tetherd")
        try original.replacingOccurrences(of: "\nProtectSystem=strict", with: "\nProtectSystems=strict")
            .replacingOccurrences(of: "\nExecStart=" + Installation.bindir + "/tetherd", with: "\nExecStart=" + missing)
            .write(toFile: path, atomically: false, encoding: .utf8)
        let result = try await ChildProcess.run(try Tool.path("systemd-analyze"), ["verify", path], timeout: .seconds(60))
        #expect(!result.succeeded)
        #expect(result.standardError.contains("ProtectSystems"), "\(result)")
        #expect(result.standardError.contains(missing), "a missing ExecStart= program is reported: \(result)")
    }

    /// `systemd-analyze security --offline=yes`: "Overall exposure level for X: N" with N ≤ 2.0.
    @Test(arguments: Installation.units)
    func exposureIsAtMostTwo(unit: String) async throws {
        let installed = try await Installation.shared()
        let result = try await ChildProcess.run(
            try Tool.path("systemd-analyze"),
            ["security", "--offline=yes", "--no-pager", installed.path(Installation.unitdir + "/" + unit)],
            timeout: .seconds(60))
        #expect(result.succeeded, "\(result)")
        let prefix = "Overall exposure level for \(unit): "
        let line = try #require(
            result.standardOutput.split(separator: "\n").first { $0.contains(prefix) }, "no overall line: \(result)")
        let number = line[line.range(of: prefix)!.upperBound...].split(separator: " ").first.map(String.init) ?? ""
        let exposure = try #require(Double(number), "not a number in: \(line)")
        #expect(exposure <= 2.0, "\(line)")
    }

    /// What docs/contract.md "systemd" asks of the units, and what the daemon and its hooks rely on.
    @Test func unitsHaveWhatTheSpecAndTheDaemonRelyOn() async throws {
        let installed = try await Installation.shared()
        for (unit, user) in [("tetherd.service", "tether"), ("tether-server.service", "tether-server")] {
            let file = try UnitFile(path: installed.path(Installation.unitdir + "/" + unit))
            // systemd 252 has no Type=notify-reload; the daemons send RELOADING=1/READY=1 themselves.
            #expect(file.value("Type") == "notify", "\(unit)")
            #expect(file.value("NotifyAccess") == "main", "\(unit)")
            // Both daemons ping the watchdog while they make progress.
            #expect(file.value("WatchdogSec").map { $0 != "0" && $0 != "infinity" } == true, "\(unit)")
            #expect(file.value("ExecReload") == "/bin/kill -HUP $MAINPID", "\(unit)")
            #expect(file.value("User") == user && file.value("Group") == user, "\(unit)")
            #expect(file.value("StateDirectory") == user && file.value("RuntimeDirectory") == user, "\(unit)")
            #expect(file.value("ConfigurationDirectory") == "tether", "\(unit)")
            #expect(file.value("ProtectSystem") == "strict", "\(unit)")
            #expect(file.value("WantedBy", in: "Install") == "multi-user.target", "\(unit)")
            // Nothing takes the state directory (where hooks write) away again.
            for key in ["ReadOnlyPaths", "InaccessiblePaths", "TemporaryFileSystem", "BindReadOnlyPaths"] {
                #expect(!file.values(key).contains { $0.contains("/var/lib") }, "\(unit): \(key)=")
            }
        }
        // A descriptor per connected device: far above systemd's default soft limit of 1024.
        let server = try UnitFile(path: installed.path(Installation.unitdir + "/tether-server.service"))
        #expect(server.value("LimitNOFILE").flatMap { Int($0) }.map { $0 >= 65536 } == true, "LimitNOFILE=\(server.value("LimitNOFILE") ?? "")")
        let agent = try UnitFile(path: installed.path(Installation.unitdir + "/tetherd.service"))
        // tetherd reads /proc/<pid>/status of control-socket clients for their supplementary
        // groups; hidepid (ProtectProc=invisible/noaccess/ptraceable) hides other users' processes.
        #expect(agent.value("ProtectProc").map { $0 == "default" } ?? true, "ProtectProc=\(agent.value("ProtectProc") ?? "")")
    }

    /// The shipped sysusers.d and tmpfiles.d files, applied to an empty root as `make install`
    /// applies them to the real one, give each service exactly the access it needs: its user
    /// reads its own configuration and nobody else's, the agent (and its hooks) write the state
    /// directory, members of group tether write stores. Also: tmpfiles and the units agree on
    /// the directories' modes (else they would change them back and forth).
    @Test(.enabled(if: geteuid() == 0, "systemd-tmpfiles --root can set owners only as root"))
    func sysusersAndTmpfilesGiveEachServiceItsAccess() async throws {
        let installed = try await Installation.shared()
        let root = try TemporaryDirectory(prefix: "tether-root")
        let manager = FileManager.default
        for directory in [Installation.sysusersdir, Installation.tmpfilesdir, Installation.sysconfdir] {
            try manager.createDirectory(atPath: root.path + directory, withIntermediateDirectories: true)
        }
        for directory in [Installation.sysusersdir, Installation.tmpfilesdir] {
            for file in ["tetherd.conf", "tether-server.conf"] {
                try manager.copyItem(atPath: installed.path(directory + "/" + file), toPath: root.path + directory + "/" + file)
            }
        }
        // The configuration as make install leaves it: root-owned, 0640.
        let agentConfig = Installation.sysconfdir + "/tetherd.toml"
        let serverConfig = Installation.sysconfdir + "/tether-server.toml"
        let schema = Installation.sysconfdir + "/schema.toml"
        for file in [agentConfig, serverConfig, schema] {
            try manager.copyItem(atPath: installed.path(file), toPath: root.path + file)
        }
        try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: root.path + Installation.sysconfdir)

        let sysusers = try await ChildProcess.run(try Tool.path("systemd-sysusers"), ["--root=\(root.path)"])
        #expect(sysusers.succeeded, "\(sysusers)")
        for _ in 0..<2 {  // twice: applying again changes nothing and complains about nothing
            let tmpfiles = try await ChildProcess.run(try Tool.path("systemd-tmpfiles"), ["--root=\(root.path)", "--create"])
            #expect(tmpfiles.succeeded && tmpfiles.standardError.isEmpty, "\(tmpfiles)")
        }

        let accounts = try Accounts(root: root.path)
        let agent = try #require(accounts.user("tether"))
        let server = try #require(accounts.user("tether-server"))
        #expect(accounts.shell(of: "tether") == "/usr/sbin/nologin" && accounts.home(of: "tether") == "/var/lib/tether")
        #expect(!agent.groups.contains(server.primaryGroup) && !server.groups.contains(agent.primaryGroup))
        let tetherGroup = try #require(accounts.group("tether"))
        // The operator group of the control socket ([control] operator_group's default): its own
        // group, which neither daemon user is in (joining it is an operator's decision).
        let adminGroup = try #require(accounts.group("tether-admin"), "sysusers.d/tetherd.conf creates tether-admin")
        #expect(adminGroup != tetherGroup && !agent.groups.contains(adminGroup) && !server.groups.contains(adminGroup))
        let application = Account(name: "app", uid: 4711, primaryGroup: 4711, groups: [4711, tetherGroup])
        let stranger = Account(name: "other", uid: 4712, primaryGroup: 4712, groups: [4712])

        let check = AccessCheck(root: root.path)
        #expect(check.allows(agent, .read, agentConfig))
        #expect(!check.allows(agent, .write, agentConfig))
        #expect(!check.allows(agent, .read, serverConfig))
        #expect(check.allows(server, .read, serverConfig), "tether-server cannot read \(serverConfig)")
        #expect(check.allows(server, .read, schema), "tether-server cannot read \(schema)")
        #expect(!check.allows(agent, .read, schema) && !check.allows(stranger, .read, schema))
        #expect(!check.allows(server, .read, agentConfig))
        #expect(!check.allows(stranger, .read, agentConfig) && !check.allows(stranger, .read, serverConfig))
        #expect(check.allows(agent, .write, "/var/lib/tether"), "hooks write archive/, reports/ under it")
        #expect(check.allows(agent, .write, "/var/lib/tether/stores") && check.allows(agent, .write, "/var/lib/tether/recovery"))
        #expect(check.allows(application, .write, "/var/lib/tether/stores"), "group tether writes stores")
        #expect(!check.allows(stranger, .search, "/var/lib/tether"))
        #expect(check.allows(server, .write, "/var/lib/tether-server"))
        #expect(!check.allows(agent, .search, "/var/lib/tether-server"))

        // tmpfiles and the units agree.
        for (unit, user) in [("tetherd.service", "tether"), ("tether-server.service", "tether-server")] {
            let file = try UnitFile(path: installed.path(Installation.unitdir + "/" + unit))
            let state = root.path + "/var/lib/" + user
            #expect(file.value("StateDirectoryMode").flatMap { Int($0, radix: 8) } == permissions(state), "\(unit)")
            #expect(
                file.value("ConfigurationDirectoryMode").flatMap { Int($0, radix: 8) }
                    == permissions(root.path + Installation.sysconfdir), "\(unit)")
        }
    }
}

/// A user as the kernel checks file access: uid and every group.
struct Account {
    var name: String
    var uid: UInt32
    var primaryGroup: UInt32
    var groups: Set<UInt32>
}

/// The users and groups of a root's /etc/passwd and /etc/group.
struct Accounts {
    private var passwd: [[Substring]]
    private var group: [[Substring]]

    init(root: String) throws {
        func table(_ file: String) throws -> [[Substring]] {
            try String(contentsOfFile: root + file, encoding: .utf8).split(separator: "\n")
                .map { $0.split(separator: ":", omittingEmptySubsequences: false) }
        }
        passwd = try table("/etc/passwd")
        group = try table("/etc/group")
    }

    func group(_ name: String) -> UInt32? { group.first { $0[0] == name }.flatMap { UInt32($0[2]) } }
    func home(of name: String) -> String? { passwd.first { $0[0] == name }.map { String($0[5]) } }
    func shell(of name: String) -> String? { passwd.first { $0[0] == name }.map { String($0[6]) } }

    func user(_ name: String) -> Account? {
        guard let entry = passwd.first(where: { $0[0] == name }), let uid = UInt32(entry[2]), let gid = UInt32(entry[3])
        else { return nil }
        let members = group.filter { $0.count > 3 && $0[3].split(separator: ",").contains(Substring(name)) }
            .compactMap { UInt32($0[2]) }
        return Account(name: name, uid: uid, primaryGroup: gid, groups: Set([gid] + members))
    }
}

/// Evaluates Unix permissions (owner, group, other bits; no ACLs, not root) of paths in a root.
struct AccessCheck {
    enum Access { case read, write, search }

    var root: String

    /// Whether `account` may access `path` (absolute inside the root): every directory on the
    /// way must be searchable, starting below the root itself.
    func allows(_ account: Account, _ access: Access, _ path: String) -> Bool {
        var directory = ""
        for component in path.split(separator: "/").dropLast() {
            directory += "/" + component
            if !bitsAllow(account, .search, root + directory) { return false }
        }
        return bitsAllow(account, access, root + path)
    }

    private func bitsAllow(_ account: Account, _ access: Access, _ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let bits: mode_t
        if info.st_uid == account.uid {
            bits = (info.st_mode >> 6) & 7
        } else if account.groups.contains(info.st_gid) {
            bits = (info.st_mode >> 3) & 7
        } else {
            bits = info.st_mode & 7
        }
        switch access {
        case .read: return bits & 4 != 0
        case .write: return bits & 2 != 0 && (info.st_mode & S_IFMT != S_IFDIR || bits & 1 != 0)
        case .search: return bits & 1 != 0
        }
    }
}
