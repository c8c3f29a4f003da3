import Foundation
import Testing
import TetherTestSupport

/// `make install` / `make uninstall` into a `DESTDIR`, and the installed agent checking the
/// installed example configuration. One shared installation (``Installation/shared()``); tests
/// that change it work on a copy.
@Suite(.enabled(if: Tool.find("make") != nil, "needs make (hint: apt-get install make)"))
struct InstallTests {
    @Test func everyFileLandsWhereTheUnitsExpectIt() async throws {
        let installed = try await Installation.shared()

        // Programs: at the units' ExecStart= paths, executable, exactly the tested build.
        for program in Installation.programs {
            let path = installed.path(Installation.bindir + "/" + program)
            #expect(permissions(path) == 0o755, "\(path): \(octal(permissions(path)))")
            let built = try BuiltProducts.executable(program)
            #expect(FileManager.default.contentsEqual(atPath: path, andPath: built), "\(path) is not \(built)")
        }
        for unit in Installation.units {
            let path = installed.path(Installation.unitdir + "/" + unit)
            #expect(permissions(path) == 0o644, "\(path): \(octal(permissions(path)))")
            let file = try UnitFile(path: path)
            let name = String(unit.dropLast(".service".count))
            #expect(file.program("ExecStart") == Installation.bindir + "/" + name)
            #expect(file.value("ExecStart")?.hasSuffix(" --config \(Installation.sysconfdir)/\(name).toml") == true)
            let program = installed.path(try #require(file.program("ExecStart")))
            #expect(FileManager.default.isExecutableFile(atPath: program), "\(unit): ExecStart= \(program) missing")
            // With the default PREFIX the path rewriting leaves the shipped unit as it is.
            let shipped = try String(contentsOfFile: PackageRoot.appending("systemd/\(unit)"), encoding: .utf8)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == shipped)
        }

        // sysusers.d, tmpfiles.d and the catalog, unchanged.
        for (source, target) in [
            ("systemd/sysusers.d/tetherd.conf", Installation.sysusersdir + "/tetherd.conf"),
            ("systemd/sysusers.d/tether-server.conf", Installation.sysusersdir + "/tether-server.conf"),
            ("systemd/tmpfiles.d/tetherd.conf", Installation.tmpfilesdir + "/tetherd.conf"),
            ("systemd/tmpfiles.d/tether-server.conf", Installation.tmpfilesdir + "/tether-server.conf"),
            ("systemd/catalog/tether.catalog", Installation.catalogdir + "/tether.catalog"),
        ] {
            let path = installed.path(target)
            #expect(permissions(path) == 0o644, "\(path): \(octal(permissions(path)))")
            #expect(FileManager.default.contentsEqual(atPath: path, andPath: PackageRoot.appending(source)), "\(target)")
        }

        // Example configuration: in /etc/tether (0640, readable by group tether once
        // systemd-tmpfiles has run, see UnitFileTests) and, for reference, in share/tether/examples.
        let examples = try FileManager.default.contentsOfDirectory(atPath: PackageRoot.appending("etc"))
            .filter { $0.hasSuffix(".toml") }
        #expect(examples.contains("tetherd.toml"))
        let configDirectory = installed.path(Installation.sysconfdir)
        #expect(permissions(configDirectory) == 0o751, "\(configDirectory): \(octal(permissions(configDirectory)))")
        for example in examples {
            let source = PackageRoot.appending("etc/" + example)
            for (target, mode) in [
                (Installation.sysconfdir + "/" + example, 0o640), (Installation.sharedir + "/examples/" + example, 0o644),
            ] {
                let path = installed.path(target)
                #expect(permissions(path) == mode, "\(path): \(octal(permissions(path)))")
                #expect(FileManager.default.contentsEqual(atPath: path, andPath: source), "\(target)")
            }
        }

        // Example hooks: executable, in share/tether/hooks.
        let hooks = try FileManager.default.contentsOfDirectory(atPath: PackageRoot.appending("hooks"))
        #expect(hooks.contains("before-reset") && hooks.contains("after-reset") && hooks.contains("manual-reset"))
        for hook in hooks {
            let path = installed.path(Installation.sharedir + "/hooks/" + hook)
            #expect(permissions(path) == 0o755, "\(path): \(octal(permissions(path)))")
            #expect(FileManager.default.contentsEqual(atPath: path, andPath: PackageRoot.appending("hooks/" + hook)))
        }

        // Manual pages (generated from the programs' argument definitions, and hand-written ones
        // with the PREFIX's paths) and shell completions of every program.
        let manual = Installation.prefix + "/share/man"
        for page in ["man8/tetherd.8", "man1/tetherctl.1", "man8/tether-server.8", "man5/tetherd.toml.5",
            "man5/tether-server.toml.5", "man7/tether-hooks.7"] {
            let path = installed.path(manual + "/" + page)
            #expect(permissions(path) == 0o644, "\(path): \(octal(permissions(path)))")
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            #expect(text.hasPrefix(".TH "), "\(page) is not a manual page")
            #expect(!text.contains("/usr/local/share/") || Installation.prefix == "/usr/local")
        }
        let tetherdPage = try String(contentsOfFile: installed.path(manual + "/man8/tetherd.8"), encoding: .utf8)
        #expect(tetherdPage.contains("\\-\\-check\\-config") && tetherdPage.contains(".SH EXIT STATUS"))
        let serverPage = try String(contentsOfFile: installed.path(manual + "/man8/tether-server.8"), encoding: .utf8)
        #expect(serverPage.contains(".SS token new") && serverPage.contains(".SS admin grant"), "every subcommand is described")
        for program in Installation.programs {
            for file in [
                "/share/bash-completion/completions/\(program)", "/share/zsh/vendor-completions/_\(program)",
                "/share/fish/vendor_completions.d/\(program).fish",
            ] {
                let path = installed.path(Installation.prefix + file)
                #expect(permissions(path) == 0o644, "\(path): \(octal(permissions(path)))")
                #expect(((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").contains(program), "\(path)")
            }
        }

        // Docs: README.md and docs/*.md.
        let docs = try FileManager.default.contentsOfDirectory(atPath: PackageRoot.appending("docs"))
            .filter { $0.hasSuffix(".md") }
        for doc in ["README.md"] + docs {
            let path = installed.path(Installation.docdir + "/" + doc)
            #expect(permissions(path) == 0o644, "\(path): \(octal(permissions(path)))")
        }

        // Every file: link of the units (Documentation=) and the catalog (Support:) is installed.
        var links: [String] = []
        for unit in Installation.units {
            links += try UnitFile(path: installed.path(Installation.unitdir + "/" + unit)).values("Documentation", in: "Unit")
                .flatMap { $0.split(separator: " ").map(String.init) }
        }
        let catalog = try String(
            contentsOfFile: installed.path(Installation.catalogdir + "/tether.catalog"), encoding: .utf8)
        links += catalog.split(separator: "\n").filter { $0.hasPrefix("Support: ") }.map { String($0.dropFirst(9)) }
        let documents = Set(links.filter { $0.hasPrefix("file:") }.map { String($0.dropFirst(5)) })
        #expect(documents.contains(Installation.docdir + "/operations.md"))
        #expect(documents.allSatisfy { $0.hasPrefix(Installation.docdir + "/") }, "\(documents.sorted())")
        let missing = documents.filter { !FileManager.default.fileExists(atPath: installed.path($0)) }.sorted()
        #expect(missing.isEmpty, "linked but not installed: \(missing)")
    }

    /// The units run the installed programs in a sandbox with `ProtectHome=yes` and
    /// `PrivateTmp=yes`: a shared library under /home, /root, /run/user or /tmp (a Swift
    /// toolchain installed by swiftly in a home directory, say) is not there at run time.
    @Test func installedProgramsFindTheirLibrariesInsideTheSandbox() async throws {
        let installed = try await Installation.shared()
        let ldd = try Tool.path("ldd")
        let hidden = ["/home/", "/root/", "/run/user/", "/tmp/", "/var/tmp/"]
        for program in Installation.programs {
            let path = installed.path(Installation.bindir + "/" + program)
            let result = try await ChildProcess.run(ldd, [path])
            try #require(result.succeeded, "\(result)")
            #expect(!result.standardOutput.contains("not found"), "\(program): \(result.standardOutput)")
            let libraries = result.standardOutput.split(separator: "\n").compactMap { line -> String? in
                guard let arrow = line.range(of: "=> ") else { return nil }
                return line[arrow.upperBound...].split(separator: " ").first.map(String.init)
            }
            #expect(libraries.contains { $0.contains("libswiftCore") || $0.contains("libc.so") })
            let unreachable = libraries.filter { library in hidden.contains { library.hasPrefix($0) } }
            #expect(
                unreachable.isEmpty,
                "\(program) loads libraries the unit's sandbox hides (ProtectHome=/PrivateTmp=): \(unreachable)")
        }
    }

    @Test func secondInstallKeepsAChangedConfigurationAndUninstallKeepsOnlyIt() async throws {
        let installed = try await Installation.shared()
        let copy = try TemporaryDirectory(prefix: "tether-reinstall")
        try await installed.copy(to: copy.path)
        let config = copy.path + Installation.sysconfdir + "/tetherd.toml"
        let changed = try String(contentsOfFile: config, encoding: .utf8) + "\n# changed by the operator\nlog_level = \"debug\"\n"
        try changed.write(toFile: config, atomically: false, encoding: .utf8)

        let again = try await Installation.make(["install"], destdir: copy.path)
        try #require(again.succeeded, "\(again)")
        #expect(again.standardOutput.contains("keeping existing \(config)\n"), "\(again.standardOutput)")
        #expect(try String(contentsOfFile: config, encoding: .utf8) == changed)
        #expect(permissions(config) == 0o640)
        // Everything else was installed again.
        #expect(filesBelow(copy.path) == filesBelow(installed.destdir))

        let uninstall = try await Installation.make(["uninstall"], destdir: copy.path)
        try #require(uninstall.succeeded, "\(uninstall)")
        #expect(uninstall.standardOutput.contains("were kept"))
        let configDir = String(Installation.sysconfdir.dropFirst())
        #expect(filesBelow(copy.path) == ["schema.toml", "tether-server.toml", "tetherd.toml"].map { configDir + "/" + $0 })
        #expect(try String(contentsOfFile: config, encoding: .utf8) == changed)
    }

    /// The example points at /etc/tether/token, which an operator writes after installing.
    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/etc/tether/token"), "this machine has /etc/tether/token"))
    func installedAgentRefusesTheExampleUntilTheTokenExists() async throws {
        let installed = try await Installation.shared()
        let tetherd = installed.path(Installation.bindir + "/tetherd")
        let config = installed.path(Installation.sysconfdir + "/tetherd.toml")
        let result = try await ChildProcess.run(tetherd, ["--check-config", "--config", config])
        #expect(result.status == 2 && !result.signalled && !result.timedOut, "\(result)")
        let problems = result.standardError.split(separator: "\n")
        #expect(problems.count == 1, "one problem expected: \(result.standardError)")
        let problem = String(problems.first ?? "")
        #expect(problem.hasPrefix(config + ":"), "\(problem)")
        #expect(problem.contains("server.token_file") && problem.contains("/etc/tether/token"), "\(problem)")
        #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
    }

    @Test func installedAgentAcceptsTheExampleWithAToken() async throws {
        let installed = try await Installation.shared()
        let directory = try TemporaryDirectory(prefix: "tether-token")
        let token = directory.appending("token")
        #expect(FileManager.default.createFile(atPath: token, contents: Data("device-token\n".utf8), attributes: [.posixPermissions: 0o600]))
        let example = try String(contentsOfFile: installed.path(Installation.sysconfdir + "/tetherd.toml"), encoding: .utf8)
        let line = "token_file = \"/etc/tether/token\""
        try #require(example.components(separatedBy: line).count == 2, "the example has one \(line)")
        let config = directory.appending("tetherd.toml")
        try example.replacingOccurrences(of: line, with: "token_file = \"\(token)\"")
            .write(toFile: config, atomically: false, encoding: .utf8)

        let tetherd = installed.path(Installation.bindir + "/tetherd")
        let result = try await ChildProcess.run(tetherd, ["--check-config", "--config", config])
        #expect(result.succeeded, "\(result)")
        #expect(result.standardOutput == "\(config): ok (1 partition)\n")
        #expect(result.standardError.isEmpty, "\(result.standardError)")
    }
}
