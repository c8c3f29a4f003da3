import Foundation
import Testing
import TetherProtocol
import TetherTestSupport

/// The device side of enrollment (issue 48) with the real `tetherd` and `tetherctl` against a
/// fake `/enroll` that speaks the contract (``FakeEnrollmentServer``; it serves no `/sync`, so
/// after enrolling the agent's attempts are refused upgrades): the agent enrolls at start,
/// a kill between the server's answer and the write enrolls the same device again, a clone
/// enrolls as a device of its own, and bad inputs are one clear line with no token file.
///
/// Against the real server (once merged), the same steps hold with `[server] url` naming its
/// devices' listener and a key from `tether-server admin enroll-key create`.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct EnrollmentEndToEndTests {
    /// A device directory: `tetherd.toml`, the key, the token file's place, a machine id.
    struct Device {
        let dir: TemporaryDirectory
        let url: String
        var tokenFile: String { dir.appending("token") }
        var keyFile: String { dir.appending("enroll.key") }
        var configPath: String { dir.appending("tetherd.toml") }
        var machineFile: String { dir.appending("machine-id") }

        init(url: String, key: String?, keyMode: mode_t = 0o600, withKeySetting: Bool = true, server: String = "") throws {
            dir = try TemporaryDirectory(prefix: "tether-enroll")
            self.url = url
            if let key { chmod(try dir.write("enroll.key", key + "\n"), keyMode) }
            try dir.write(
                "tetherd.toml",
                """
                state_dir = "\(dir.appending("state"))"
                log_level = "debug"
                control_socket = "\(dir.appending("tetherd.sock"))"
                [server]
                url = "\(url)"
                token_file = "\(dir.appending("token"))"
                \(withKeySetting ? "enrollment_key_file = \"\(dir.appending("enroll.key"))\"" : "")
                \(server)
                [[partition]]
                name = "p"
                """)
            try setMachine(String(repeating: "1", count: 32))
        }

        func setMachine(_ id: String) throws { try dir.write("machine-id", id + "\n") }

        func start(_ extra: [String: String] = [:]) throws -> ChildProcess {
            try ChildProcess.start(
                try BuiltProducts.executable("tetherd"), ["--config", configPath, "--log-destination", "stderr"],
                environment: ChildProcess.inheritedEnvironment(adding: ["TETHER_MACHINE_ID_FILE": machineFile].merging(extra) { _, new in new }))
        }

        /// `tetherctl …`; the state directory made first, as the package makes it (run as root,
        /// `tetherctl enroll` refuses to create it).
        func ctl(_ arguments: [String]) async throws -> ChildProcess.Result {
            try FileManager.default.createDirectory(atPath: dir.appending("state"), withIntermediateDirectories: true)
            return try await ChildProcess.run(
                try BuiltProducts.executable("tetherctl"), arguments,
                environment: ChildProcess.inheritedEnvironment(adding: ["TETHER_MACHINE_ID_FILE": machineFile]))
        }

        /// The device id a credential in the token file was issued to (nil: none there).
        var credentialDevice: String? {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else { return nil }  // missing: none
            return DeviceCredential(parsing: text)?.deviceID
        }

        /// Files in the token's directory besides the ones the test made (a temp file left over).
        var strayFiles: [String] {
            let known: Set = ["tetherd.toml", "enroll.key", "machine-id", "state", "tetherd.sock", "token"]
            return ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { !known.contains($0) }  // the test's own directory
        }

        var tokenMode: mode_t {
            var info = stat()
            stat(tokenFile, &info)
            return info.st_mode & 0o777
        }
    }

    @Test func theAgentEnrollsAtStartWritesTheCredentialAndConnects() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let device = try Device(url: server.syncURL, key: server.addKey(tags: ["store": "17"]))
        let agent = try device.start()
        defer { agent.signal(SIGKILL) }
        #expect(await agent.waitForOutput("enrolled as device "), "\(agent.standardError)")
        let id = try #require(device.credentialDevice)
        #expect(server.devices[id]?.tags == ["store": "17"] && device.tokenMode == 0o600 && device.strayFiles.isEmpty)
        #expect(agent.standardError.contains("enrolling device \(id) with \(server.baseURL)/enroll: token_file is missing or empty"))
        #expect(await agent.waitForOutput("cannot sync with \(server.syncURL)"), "then it connects with the credential")
        let credential = try #require(server.devices[id]?.credential)
        #expect(!agent.standardError.contains(credential) && !agent.standardError.contains(credential.split(separator: ".")[2]))
        #expect(!agent.standardError.contains(try String(contentsOfFile: device.keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        agent.signal(SIGTERM)
        _ = await agent.wait(timeout: .seconds(20))
        // A restart uses the credential: no second enrollment.
        let again = try device.start()
        defer { again.signal(SIGKILL) }
        #expect(await again.waitForOutput("cannot sync with \(server.syncURL)"))
        #expect(server.requestCount == 1 && !again.standardError.contains("enrolling device"))
    }

    @Test func aKillBetweenTheAnswerAndTheWriteEnrollsTheSameDeviceAgain() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let device = try Device(url: server.syncURL, key: server.addKey(uses: 1))
        let gate = try device.dir.write("gate", "")
        let agent = try device.start(["TETHER_FAULT_ENROLL_GATE": gate])
        try await eventually("answered, not written") { FileManager.default.fileExists(atPath: gate + ".reached") }
        agent.signal(SIGKILL)
        _ = await agent.wait(timeout: .seconds(20))
        #expect(server.devices.count == 1)
        #expect(!FileManager.default.fileExists(atPath: device.tokenFile) && device.strayFiles.sorted() == ["gate", "gate.reached"])
        let restarted = try device.start()
        defer { restarted.signal(SIGKILL) }
        #expect(await restarted.waitForOutput("enrolled as device "), "\(restarted.standardError)")
        let id = try #require(device.credentialDevice)
        #expect(server.devices.count == 1 && server.devices[id]?.enrollments == 2, "the same device, its one use not spent again")
        #expect(device.strayFiles.sorted() == ["gate", "gate.reached"])
    }

    @Test func aCloneOfAnEnrolledImageEnrollsAsADeviceOfItsOwn() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let device = try Device(url: server.syncURL, key: server.addKey())
        let golden = try device.start()
        #expect(await golden.waitForOutput("enrolled as device "))
        let goldenID = try #require(device.credentialDevice)
        golden.signal(SIGTERM)
        _ = await golden.wait(timeout: .seconds(20))
        // The image boots on another machine: a new machine id, the image's credential.
        try device.setMachine(String(repeating: "2", count: 32))
        let clone = try device.start()
        defer { clone.signal(SIGKILL) }
        #expect(await clone.waitForOutput("token_file holds the credential of device \(goldenID)"), "\(clone.standardError)")
        #expect(await clone.waitForOutput("enrolled as device "))
        let cloneID = try #require(device.credentialDevice)
        #expect(cloneID != goldenID && server.devices.count == 2)
    }

    @Test func aCloneWithoutAKeyStopsWithAClearError() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let device = try Device(url: server.syncURL, key: nil, withKeySetting: false)
        let other = String(repeating: "9a", count: 16)
        chmod(try device.dir.write("token", "tdc1.\(other).\(String(repeating: "x", count: 43))\n"), 0o600)
        let agent = try device.start()
        defer { agent.signal(SIGKILL) }
        #expect(await agent.waitForOutput("holds the credential of device \(other), but this machine is device"), "\(agent.standardError)")
        #expect(agent.standardError.contains("(cloned_credential)") && agent.standardError.contains("set [server] enrollment_key_file"))
        #expect(!agent.hasExited && server.requestCount == 0)
    }

    @Test func aRefusedKeyIsOneLineWithItsCodeAndHintAndNoTokenFile() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let device = try Device(url: server.syncURL, key: "tek1.0123456789abcdef.\(String(repeating: "A", count: 43))")
        let agent = try device.start()
        defer { agent.signal(SIGKILL) }
        #expect(await agent.waitForOutput("(unknown_key, HTTP 401); tetherd does not enroll or sync until the configuration is reloaded; hint: \(EnrollmentErrorCode.unknownKey.hint)"), "\(agent.standardError)")
        try await consistently("no retry while stopped", for: .seconds(2)) { server.requestCount == 1 }
        #expect(!agent.hasExited && !FileManager.default.fileExists(atPath: device.tokenFile) && device.strayFiles.isEmpty)
        #expect(agent.standardError.components(separatedBy: "unknown_key, HTTP 401").count == 2, "logged once")
    }

    @Test(arguments: [EnrollmentErrorCode.expiredKey, .revokedKey, .usedUpKey, .nameTaken, .deviceRevoked, .deviceEnrolled, .malformed])
    func everyPermanentRefusalIsLoggedWithItsCode(code: EnrollmentErrorCode) async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        server.script([.refusal(code)])
        let device = try Device(url: server.syncURL, key: server.addKey())
        let agent = try device.start()
        defer { agent.signal(SIGKILL) }
        #expect(await agent.waitForOutput("(\(code.rawValue), HTTP \(code.httpStatus)); tetherd does not enroll or sync until the configuration is reloaded; hint: \(code.hint)"), "\(agent.standardError)")
        #expect(!FileManager.default.fileExists(atPath: device.tokenFile) && device.strayFiles.isEmpty)
        // A reload tries again (the fake now enrolls).
        agent.signal(SIGHUP)
        #expect(await agent.waitForOutput("enrolled as device "))
    }

    @Test func aLooseOrGarbageKeyFileStopsTheAgentAtStart() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let loose = try Device(url: server.syncURL, key: server.addKey(), keyMode: 0o640)
        let refused = try await ChildProcess.run(try BuiltProducts.executable("tetherd"), ["--config", loose.configPath, "--log-destination", "stderr"])
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.standardError.contains("server.enrollment_key_file: \(loose.keyFile) is readable by group or others (mode 640)"))
        let garbage = try Device(url: server.syncURL, key: "not-a-key")
        let check = try await ChildProcess.run(try BuiltProducts.executable("tetherd"), ["--check-config", "--config", garbage.configPath])
        #expect(check.status == 2 && check.standardError.contains("does not hold an enrollment key"), "\(check)")
        #expect(server.requestCount == 0 && !FileManager.default.fileExists(atPath: loose.tokenFile))
    }

    // MARK: tetherctl enroll

    @Test func tetherctlEnrollWritesTheCredentialAndPrintsTheDevice() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let device = try Device(url: "ws://127.0.0.1:1/sync", key: nil, withKeySetting: false)
        let key = try device.dir.write("my.key", server.addKey(tags: ["store": "17", "role": "till"]))
        chmod(key, 0o600)
        let result = try await device.ctl(["enroll", "--config", device.configPath, "--server", server.syncURL, "--key-file", key, "--name", "till-17"])
        #expect(result.succeeded, "\(result)")
        let id = try #require(device.credentialDevice)
        #expect(result.standardOutput.contains("enrolled as device till-17 (\(id))") && result.standardOutput.contains("tags: role=till store=17"))
        #expect(!result.standardOutput.contains(try #require(server.devices[id]?.credential)) && device.tokenMode == 0o600)
        // The agent then uses it as its own: same device id, no enrollment.
        let agent = try device.start()
        defer { agent.signal(SIGKILL) }
        #expect(await agent.waitForOutput("cannot sync with ws://127.0.0.1:1/sync"))
        #expect(!agent.standardError.contains("enrolling device"), "its own credential: no enrollment")
        #expect(device.credentialDevice == id)
    }

    @Test func tetherctlEnrollExitStatuses() async throws {
        let server = try FakeEnrollmentServer()
        defer { server.stop() }
        let device = try Device(url: server.syncURL, key: nil, withKeySetting: false)
        func enroll(_ keyText: String, mode: mode_t = 0o600, server url: String? = nil) async throws -> ChildProcess.Result {
            let key = try device.dir.write("k", keyText)
            chmod(key, mode)
            return try await device.ctl(["enroll", "--config", device.configPath, "--server", url ?? server.syncURL, "--key-file", key])
        }
        let refused = try await enroll(server.addKey(state: .revoked))
        #expect(refused.status == 1 && refused.standardError.contains("(revoked_key; hint: \(EnrollmentErrorCode.revokedKey.hint))"), "\(refused)")
        let loose = try await enroll(server.addKey(), mode: 0o644)
        #expect(loose.status == 2 && loose.standardError.contains("mode 644"), "\(loose)")
        let garbage = try await enroll("garbage")
        #expect(garbage.status == 2 && garbage.standardError.contains("does not hold an enrollment key"), "\(garbage)")
        let refusing = try LoopbackPort.refusing()
        defer { refusing.close() }
        let unreachable = try await enroll(server.addKey(), server: refusing.syncURL)
        #expect(unreachable.status == 5 && unreachable.standardError.contains("(unreachable;"), "\(unreachable)")
        server.script([.refusal(.rateLimited, retryAfter: 30)])
        let limited = try await enroll(server.addKey())
        #expect(limited.status == 5 && limited.standardError.contains("rate_limited"), "\(limited)")
        let badName = try await device.ctl(["enroll", "--config", device.configPath, "--key-file", device.dir.appending("k"), "--name", "bad name"])
        #expect(badName.status == 2, "\(badName)")
        #expect(!FileManager.default.fileExists(atPath: device.tokenFile) && device.strayFiles == ["k"])
    }

    /// The enrollment request goes over the sync connection's TLS: only `ca_file`'s CAs, and
    /// the server's key checked against `pin_sha256`. Against the real server with TLS: a
    /// handshake that passes gets the server's answer (404 before `/enroll` exists, 401
    /// `unknown_key` after: exit 1 either way); one that fails never sends the key (exit 5).
    @Test(.enabled(if: PrivateCAEndToEndTests.openssl != nil, "needs openssl to make the CAs"))
    func tetherctlEnrollTrustsTheServerAsTheSyncConnectionDoes() async throws {
        let scratch = try TemporaryDirectory(prefix: "tether-enroll-ca")
        let ca = try await PrivateCAEndToEndTests.PrivateCA(in: scratch.appending("pki"))
        let settings = ClusterSettings(serverExtra: "tls_certificate = \"\(ca.certificate)\"\ntls_key = \"\(ca.key)\"")
        try await withCluster(settings) { cluster in
            let url = "wss://localhost:\(cluster.port)/sync"
            let pin = try await ca.serverPin()
            func enroll(_ trust: String) async throws -> ChildProcess.Result {
                let device = try Device(url: url, key: nil, withKeySetting: false, server: trust)
                let key = try device.dir.write("k", "tek1.0123456789abcdef.\(String(repeating: "A", count: 43))\n")
                chmod(key, 0o600)
                return try await device.ctl(["enroll", "--config", device.configPath, "--key-file", key])
            }
            let otherCA = try await enroll("ca_file = \"\(ca.caB)\"")
            #expect(otherCA.status == 5 && otherCA.standardError.contains("(tls_failure;"), "\(otherCA)")
            let otherPin = try await enroll("ca_file = \"\(ca.caA)\"\npin_sha256 = [\"kwWUKpFv+SOJHQEOf6OuHMRRvDIxuyXIgyqqYjikosk=\"]")
            #expect(otherPin.status == 5 && otherPin.standardError.contains("(pin_mismatch;") && otherPin.standardError.contains(pin), "\(otherPin)")
            let trusted = try await enroll("ca_file = \"\(ca.caA)\"\npin_sha256 = [\"\(pin)\"]")
            #expect(trusted.status == 1, "the handshake passed and the server answered: \(trusted)")
            #expect(trusted.standardError.contains("unexpected_answer") || trusted.standardError.contains("unknown_key"), "\(trusted)")
        }
    }
}
