import Foundation
import Testing
import TetherTestSupport

/// The packages of `make deb`: lintian finds no error, and in a Debian 12 root (debootstrap,
/// no Swift toolchain in it) they install, configure the system the Debian way, upgrade
/// keeping an edited conffile, and are removed and purged cleanly. The tests run side by side
/// (lintian reads the packages, the root is a copy of its own).
@Suite struct DebianPackageTests {
    @Test(arguments: ["tether-agent", "tether-server"])
    func lintianFindsNoError(package: String) async throws {
        let deb = try Packaging.deb(package)
        let lintian = try await ChildProcess.run(
            try Packaging.tool("lintian"), ["--fail-on", "error", "--tag-display-limit", "0", deb], timeout: .seconds(300))
        let errors = lintian.standardOutput.split(separator: "\n").filter { $0.hasPrefix("E: ") }
        #expect(lintian.succeeded && errors.isEmpty, "\(lintian)")
    }

    @Test func installUpgradeRemoveAndPurgeInADebian12Root() async throws {
        let agentDeb = try Packaging.deb("tether-agent")
        let serverDeb = try Packaging.deb("tether-server")
        let root = try await DebianRoot.make()
        defer { root.remove() }

        // Install both: users, directories, modes, enabled units, catalog, admin token.
        try root.copyIn(agentDeb, as: "/tmp/agent.deb")
        try root.copyIn(serverDeb, as: "/tmp/server.deb")
        let install = try await root.run("dpkg", "-i", "/tmp/agent.deb", "/tmp/server.deb")
        #expect(install.succeeded, "\(install)")
        let passwd = try root.read("/etc/passwd")
        #expect(passwd.contains("\ntether:") && passwd.contains("\ntether-server:"), "\(passwd)")
        #expect(try root.owner("/var/lib/tether") == "tether:tether" && root.mode("/var/lib/tether") == 0o750)
        #expect(try root.owner("/var/lib/tether-server") == "tether-server:tether-server")
        #expect(try root.owner("/etc/tether") == "root:tether" && root.mode("/etc/tether") == 0o751)
        #expect(try root.owner("/etc/tether/tetherd.toml") == "root:tether" && root.mode("/etc/tether/tetherd.toml") == 0o640)
        #expect(try root.owner("/etc/tether/tether-server.toml") == "root:tether-server")
        #expect(try root.owner("/etc/tether/schema.toml") == "root:tether-server" && root.mode("/etc/tether/schema.toml") == 0o640)
        #expect(try root.owner("/etc/tether/admin.token") == "tether-server:tether-server" && root.mode("/etc/tether/admin.token") == 0o600)
        #expect(root.exists("/etc/systemd/system/multi-user.target.wants/tetherd.service"), "tetherd.service not enabled")
        #expect(root.exists("/etc/systemd/system/multi-user.target.wants/tether-server.service"))
        #expect(root.exists("/var/lib/systemd/catalog/database"), "journalctl --update-catalog did not run")

        // No token yet: the agent's start is skipped, not failed (systemd's own evaluation of
        // the installed unit's conditions), and the post-install says what to write.
        let unit = try root.read("/usr/lib/systemd/system/tetherd.service")
        for condition in ["|/etc/tether/token", "|/var/lib/tether/token", "|/etc/tether/enroll.key"] {
            #expect(unit.contains("\nConditionFileNotEmpty=\(condition)\n"), "\(unit)")
        }
        let skipped = try await root.run("systemd-analyze", "condition", "--unit=tetherd.service")
        #expect(
            !skipped.succeeded && skipped.standardError.contains("ConditionFileNotEmpty=|/etc/tether/token failed"),
            "tetherd.service would start without a token: \(skipped)")
        // An enrollment key alone lets it start (it enrolls itself); removed again for the token steps.
        try root.write("/etc/tether/enroll.key", "tek1.0123456789abcdef.\(String(repeating: "A", count: 43))\n")
        let enrollable = try await root.run("systemd-analyze", "condition", "--unit=tetherd.service")
        #expect(enrollable.succeeded, "tetherd.service would not start with an enrollment key: \(enrollable)")
        _ = try await root.run("rm", "/etc/tether/enroll.key")
        for line in ["does not start until this device has its token", "/etc/tether/token", "systemctl start tetherd", "/etc/tether/enroll.key"] {
            #expect(install.standardOutput.contains(line), "the post-install does not say \(line): \(install)")
        }
        let conffiles = try await root.run("dpkg-query", "-W", "-f=${Conffiles}\n", "tether-agent", "tether-server")
        for file in ["/etc/tether/tetherd.toml", "/etc/tether/tether-server.toml", "/etc/tether/schema.toml"] {
            #expect(conffiles.standardOutput.contains(file), "\(file) is not a conffile: \(conffiles)")
        }

        // The programs run in a root that never saw a Swift toolchain; the manual pages are there.
        for program in Packaging.programs {
            let version = try await root.run(program, "--version")
            #expect(version.succeeded && version.standardOutput.hasPrefix(program + " "), "\(version)")
        }
        let man = try await root.run("man", "-P", "cat", "tetherd")
        #expect(man.succeeded && man.standardOutput.contains("TETHERD(8)") && man.standardOutput.contains("SYNOPSIS"), "\(man)")
        let page = try await root.run("zcat", "/usr/share/man/man8/tetherd.8.gz")  // man(1) may hyphenate the name
        #expect(page.standardOutput.contains("ConditionFileNotEmpty="), "tetherd(8) does not explain the token condition: \(page)")
        for page in ["tetherctl", "tether-server", "tetherd.toml", "tether-server.toml", "tether-hooks"] {
            let found = try await root.run("man", "-w", page)
            #expect(found.succeeded, "man \(page): \(found)")
        }

        // Configured as the manual pages say, each service's user accepts its configuration.
        let token = try await root.run("tether-server", "token", "new", "pos-17")
        #expect(token.succeeded, "\(token)")
        try root.write("/etc/tether/token", token.standardOutput)
        _ = try await root.run("sh", "-c", "chown tether:tether /etc/tether/token && chmod 600 /etc/tether/token")
        let serverCheck = try await root.run("runuser", "-u", "tether-server", "--", "tether-server", "--check-config")
        #expect(serverCheck.succeeded, "tether-server cannot read its configuration: \(serverCheck)")
        let agentCheck = try await root.run("runuser", "-u", "tether", "--", "tetherd", "--check-config")
        #expect(agentCheck.succeeded, "tetherd cannot read its configuration: \(agentCheck)")
        let startable = try await root.run("systemd-analyze", "condition", "--unit=tetherd.service")
        #expect(startable.succeeded, "tetherd.service would not start with its token: \(startable)")

        // Upgrade: an edited conffile is kept, the unit stays enabled.
        try root.write("/etc/tether/tetherd.toml", try root.read("/etc/tether/tetherd.toml") + "# edited by the operator\n")
        let newer = try await DebianRoot.bumpVersion(agentDeb, suffix: "+upgrade1", in: root)
        let upgrade = try await root.run("dpkg", "-i", newer)
        #expect(upgrade.succeeded, "\(upgrade)")
        #expect(!upgrade.standardOutput.contains("does not start until"), "a configured device is told to configure: \(upgrade)")
        let status = try await root.run("dpkg-query", "-W", "-f=${Version} ${db:Status-Status}", "tether-agent")
        #expect(status.standardOutput.hasSuffix("+upgrade1 installed"), "\(status)")
        #expect(try root.read("/etc/tether/tetherd.toml").hasSuffix("# edited by the operator\n"))
        #expect(root.exists("/etc/systemd/system/multi-user.target.wants/tetherd.service"))

        // Remove: programs gone, configuration kept, unit masked. Purge: configuration and
        // state of the unit gone, data kept (and said so).
        let remove = try await root.run("dpkg", "-r", "tether-agent")
        #expect(remove.succeeded, "\(remove)")
        #expect(!root.exists("/usr/bin/tetherd") && root.exists("/etc/tether/tetherd.toml"))
        let purge = try await root.run("dpkg", "-P", "tether-agent", "tether-server")
        #expect(purge.succeeded, "\(purge)")
        #expect(purge.standardOutput.contains("kept /var/lib/tether "), "\(purge)")
        for path in [
            "/etc/tether/tetherd.toml", "/etc/tether/tether-server.toml", "/etc/tether/schema.toml", "/etc/tether/admin.token",
            "/etc/systemd/system/tetherd.service", "/etc/systemd/system/multi-user.target.wants/tetherd.service",
            "/etc/systemd/system/multi-user.target.wants/tether-server.service", "/usr/bin/tether-server",
            "/usr/lib/sysusers.d/tetherd.conf", "/usr/lib/systemd/catalog/tether.catalog",
        ] {
            #expect(!root.exists(path), "\(path) is left after purge")
        }
        #expect(root.exists("/var/lib/tether") && root.exists("/var/lib/tether-server"))
        let gone = try await root.run("dpkg-query", "-W", "-f=${db:Status-Status}", "tether-agent")
        #expect(gone.standardOutput == "not-installed" || !gone.succeeded, "\(gone)")
    }
}
