import ArgumentParser
import Foundation
import Glibc
import TetherAgent
import TetherControl
import TetherProtocol
import TetherTOML

/// `tetherctl enroll`: enrolls this machine with a server, without the daemon. It reads
/// tetherd's configuration (`--config`) for the state directory, `token_file` and the server's
/// trust, opens the agent's state database itself for the device id (so it runs as root or as
/// the agent's user: as root, a file it creates takes the owner of `state_dir`, the agent's
/// user), and writes the credential to the token file atomically, mode 0600.
struct Enroll: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Enroll this machine with the server using an enrollment key, and write its credential to token_file.",
        discussion: """
            Run as root or as tetherd's user: it reads --config (default /etc/tether/tetherd.toml) for state_dir, token_file \
            and the server's trust (ca_file, pin_sha256, tls_min_version), and the device id from the agent's state database. \
            The credential goes to token_file (or --token-file) atomically, mode 0600, owned like the token file it replaces \
            (a new one: like state_dir). Neither the key nor the credential is printed. Exit status: 0 enrolled, 1 the server \
            refused (the message and hint say why) or the credential could not be written, 2 usage or configuration (a key \
            file readable by others or not holding a key), 5 the server cannot enroll now (unreachable, rate-limited, \
            unavailable): the same command may succeed later.
            """)

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "The server: its sync URL (ws://, wss://) or http(s):// base. Default: [server] url of --config.")
    var server: String?

    @Option(
        name: .long, help: "The file holding the enrollment key (mode 0600). Default: [server] enrollment_key_file of --config.",
        completion: .file())
    var keyFile: String?

    @Option(name: .long, help: "The device name to ask for (1 to 64 of A-Z a-z 0-9 . _ -). Default: [device] name of --config, else the server picks one.")
    var name: String?

    @Option(name: .long, help: "Where to write the credential. Default: [server] token_file of --config.", completion: .file())
    var tokenFile: String?

    func validate() throws {
        if let name, !DeviceIdentityRules.isValidName(name) {
            throw ValidationError("--name \(TerminalText.safe(name)): a device name is 1 to 64 of A-Z a-z 0-9 . _ - starting with a letter or digit")
        }
        if let tokenFile, !tokenFile.hasPrefix("/") { throw ValidationError("--token-file must be an absolute path") }
        if let keyFile, !keyFile.hasPrefix("/") { throw ValidationError("--key-file must be an absolute path") }
    }

    func run() async throws {
        let configPath = options.config ?? AgentConfiguration.defaultPath
        let configuration: AgentConfiguration
        do {
            configuration = try AgentConfiguration.load(path: configPath, checkFiles: false)
        } catch {
            for problem in error.problems { Self.fail("\(problem)") }
            throw ExitCode(2)
        }
        guard let keyFile = keyFile ?? configuration.server.enrollmentKeyFile else {
            Self.fail("no enrollment key: give --key-file, or set [server] enrollment_key_file in \(configPath)")
            throw ExitCode(2)
        }
        let tokenFile = tokenFile ?? configuration.server.tokenFile
        let stateDirectory = configuration.stateDir
        let runningAsRoot = geteuid() == 0
        guard !runningAsRoot || FileManager.default.fileExists(atPath: stateDirectory) else {
            Self.fail("state_dir \(stateDirectory) does not exist; install the package (it creates it for the agent's user) or start tetherd once")
            throw ExitCode(1)
        }
        let deviceID = try Self.deviceID(configuration, runningAsRoot: runningAsRoot)
        let enrollment = DeviceEnrollment(
            serverURL: server ?? configuration.server.url, trust: configuration.server.trust, keyFile: keyFile, tokenFile: tokenFile,
            deviceID: deviceID,
            name: name ?? configuration.device.configuredName.flatMap { DeviceIdentityRules.isValidName($0) ? $0 : nil },
            newFileOwner: runningAsRoot ? CredentialWriter.Owner.of(stateDirectory) : nil, software: "tetherctl \(TetherVersion.release)")
        do {
            let enrolled = try await enrollment.run()
            let tags = enrolled.tags.sorted { $0.key < $1.key }
            if options.json {
                print(Self.document(enrolled, tokenFile: tokenFile))
            } else {
                print("enrolled as device \(TerminalText.safe(enrolled.name)) (\(enrolled.deviceID))")
                print("tags: \(tags.isEmpty ? "none" : tags.map { TerminalText.safe("\($0.key)=\($0.value)") }.joined(separator: " "))")
                print("credential written to \(tokenFile) (mode 0600); start tetherd, or reload it if it runs: systemctl reload tetherd")
            }
        } catch {
            Self.fail(TerminalText.safe(error.description))
            throw ExitCode(Self.exitStatus(error))
        }
    }

    /// 2 for what the operator gave (a key file, a URL), 5 for what may pass, 1 for a refusal.
    static func exitStatus(_ error: EnrollmentError) -> Int32 {
        if error.code == "key_file" || error.code == "bad_url" { return 2 }
        return error.isTransient && error.code != "credential_write" ? 5 : 1
    }

    /// The device id tetherd's ledger knows this machine by: its state database's, after the
    /// machine id is adopted as tetherd does at start (a clone whose tetherd has not run yet
    /// gets its own id here, and its stores forget the image's sync identities).
    static func deviceID(_ configuration: AgentConfiguration, runningAsRoot: Bool) throws -> String {
        let path = configuration.stateDatabasePath
        let existed = FileManager.default.fileExists(atPath: path)
        do {
            let database = try AgentStateDatabase(path: path)
            if runningAsRoot, !existed, let owner = CredentialWriter.Owner.of(configuration.stateDir) {
                // Made by root: give it to the agent's user, as tetherd would have made it.
                chown(path, owner.uid, owner.gid)
            }
            if let machine = try? MachineIdentity.current() {  // no machine id: tetherd does without the check too
                let forgotten = try IdentityForgetting.adopt(machine, configuration: configuration, stateDatabase: database)
                if !forgotten.isEmpty {
                    print("the machine id changed since tetherd last ran here: the stores of \(forgotten.map(\.rawValue).joined(separator: ", ")) forgot their sync identity")
                }
            }
            return try database.deviceID()
        } catch {
            fail("cannot read the device id from \(path): \(error) (run as root or as tetherd's user)")
            throw ExitCode(1)
        }
    }

    /// `{"device_id", "name", "tags", "token_file"}`, keys sorted (never the credential).
    static func document(_ enrolled: EnrollmentResponse, tokenFile: String) -> String {
        let value = JSONValue.object([
            "device_id": .string(enrolled.deviceID), "name": .string(enrolled.name), "token_file": .string(tokenFile),
            "tags": .object(enrolled.tags.mapValues { JSONValue.string($0) }),
        ])
        return GlobalOptions.pretty(value)
    }

    static func fail(_ message: String) {
        FileHandle.standardError.write(Data("tetherctl: \(message)\n".utf8))
    }
}
