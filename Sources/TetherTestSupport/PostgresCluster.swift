import Foundation
import Synchronization

/// A PostgreSQL 15 server of the test's own (Debian's `postgresql-15`, installed by
/// `scripts/bootstrap`): `initdb` into a temporary directory, listening on 127.0.0.1 at a free
/// port, stopped and removed by ``stop()``. When tests run as root the cluster belongs to the
/// `postgres` user (PostgreSQL refuses to run as root): its directory is handed to that user
/// and every PostgreSQL program runs through `setpriv`.
///
/// Connections over TCP authenticate with a password (SCRAM), so clients exercise the same
/// path as a deployment's `password_file`; the Unix socket in the directory trusts local users.
package final class PostgresCluster: Sendable {
    package let host = "127.0.0.1"
    package let port: Int
    /// The superuser every test connects as, and its password.
    package let user: String
    package let password: String
    package let directory: String
    private let binaries: String
    private let runAs: String?
    /// The postmaster, a direct child of the test process (never daemonised by pg_ctl).
    private let server = Mutex<ChildProcess?>(nil)

    /// Where Debian puts PostgreSQL 15's programs.
    package static let debianBinaries = "/usr/lib/postgresql/15/bin"

    private init(port: Int, user: String, password: String, directory: String, binaries: String, runAs: String?) {
        self.port = port
        self.user = user
        self.password = password
        self.directory = directory
        self.binaries = binaries
        self.runAs = runAs
    }

    /// Creates and starts a cluster. Throws with the programs' output when PostgreSQL is not
    /// installed or does not start (tests that need it fail; they never skip).
    package static func start() async throws -> PostgresCluster {
        guard FileManager.default.isExecutableFile(atPath: debianBinaries + "/initdb") else {
            throw TestSupportError(
                "PostgreSQL 15 is not installed (\(debianBinaries)/initdb is missing): run scripts/bootstrap as root (it installs Debian's postgresql-15)")
        }
        let runAs = getuid() == 0 ? "postgres" : nil
        let user = runAs ?? getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "postgres"
        var template = Array("/tmp/tether-pg.XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw TestSupportError("cannot create a temporary directory in /tmp: \(String(cString: strerror(errno)))")
        }
        let directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let password = UUID().uuidString
        let passwordFile = directory + "/superuser.password"
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
        if let runAs {
            for path in [directory, passwordFile] {
                try FileManager.default.setAttributes([.ownerAccountName: runAs, .groupOwnerAccountName: runAs], ofItemAtPath: path)
            }
        }
        var lastFailure = ""
        // A free port can be taken between choosing and binding it: a few attempts.
        for attempt in 0..<3 {
            let port = Int(try LoopbackPort.free())
            let cluster = PostgresCluster(
                port: port, user: user, password: password, directory: directory, binaries: debianBinaries, runAs: runAs)
            if attempt == 0 {
                let initdb = try await cluster.run(
                    "initdb",
                    ["-D", cluster.dataDirectory, "-U", user, "--pwfile=\(passwordFile)", "--auth-host=scram-sha-256",
                     "--auth-local=trust", "-E", "UTF8", "--locale=C", "--no-sync"],
                    timeout: .seconds(120))
                guard initdb.succeeded else { throw TestSupportError("initdb failed: \(initdb)") }
            }
            let started = try await cluster.startServer()
            if started == nil { return cluster }
            // No log: the failure says what it can without it.
            lastFailure = (started ?? "") + "\n" + ((try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "")
        }
        try? FileManager.default.removeItem(atPath: directory)  // cleanup: the start's failure is the one thrown
        throw TestSupportError("PostgreSQL did not start: \(lastFailure)")
    }

    package var dataDirectory: String { directory + "/data" }

    /// `postgresql://user@127.0.0.1:port/database` (the password goes separately).
    package func url(database: String) -> String { "postgresql://\(user)@\(host):\(port)/\(database)" }

    /// Creates an empty database (each test its own) and returns its name.
    @discardableResult
    package func createDatabase(_ name: String = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()) async throws -> String {
        try await sql("CREATE DATABASE \(name)")
        return name
    }

    /// Runs SQL with psql over the Unix socket; throws with psql's output when it fails.
    @discardableResult
    package func sql(_ statement: String, database: String = "postgres") async throws -> String {
        let result = try await run(
            "psql", ["-h", directory, "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1", "-At", "-c", statement],
            timeout: .seconds(60))
        guard result.succeeded else { throw TestSupportError("psql failed: \(result)") }
        return result.standardOutput
    }

    /// Restarts the server (a fast shutdown, as operators restart it; connections are dropped).
    package func restart() async throws {
        await stopServer(signal: SIGINT)
        if let failure = try await startServer() { throw TestSupportError("PostgreSQL did not start again: \(failure)") }
    }

    /// More settings for the server from `TETHER_TEST_POSTGRES_OPTIONS` (`name=value`,
    /// separated by spaces), to look into what a test or a bench sends it, e.g.
    /// `logging_collector=on log_directory=/tmp/pg-log log_statement=all`.
    static var extraOptions: [String] {
        (ProcessInfo.processInfo.environment["TETHER_TEST_POSTGRES_OPTIONS"] ?? "")
            .split(separator: " ").flatMap { ["-c", String($0)] }
    }

    /// Starts the postmaster and polls until it answers; nil when it does, else why not.
    private func startServer() async throws -> String? {
        let options = [
            "-D", dataDirectory, "-c", "listen_addresses=127.0.0.1", "-p", "\(port)", "-k", directory, "-c", "fsync=off",
            "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200",
        ] + Self.extraOptions
        let process = try start("postgres", options)
        server.withLock { $0 = process }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(60))
        var last = ""
        while clock.now < deadline {
            if process.hasExited {
                let result = await process.wait(timeout: .seconds(5))
                return "postgres exited: \(result)"
            }
            let ready = try await run("pg_isready", ["-h", directory, "-p", "\(port)", "-U", user, "-d", "postgres"], timeout: .seconds(10))
            if ready.succeeded { return nil }
            last = "\(ready)"
            try await Task.sleep(for: .milliseconds(50))
        }
        return "the server did not answer within 60 s (\(last))"
    }

    /// Stops the server at once and removes its directory.
    package func stop() async {
        await stopServer(signal: SIGQUIT)
        try? FileManager.default.removeItem(atPath: directory)  // cleanup: a leftover is only litter
    }

    private func stopServer(signal: Int32) async {
        guard let process = server.withLock({ $0 }) else { return }
        process.signal(signal)
        let result = await process.wait(timeout: .seconds(30))
        if result.timedOut { process.signal(SIGKILL) }
        _ = await process.wait(timeout: .seconds(10))
        server.withLock { $0 = nil }
    }

    private func start(_ program: String, _ arguments: [String]) throws -> ChildProcess {
        let (executable, fullArguments) = command(program, arguments)
        return try ChildProcess.start(executable, fullArguments, environment: environment)
    }

    private var environment: [String: String] {
        ChildProcess.inheritedEnvironment(adding: ["LC_ALL": "C", "PGPASSWORD": password])
    }

    /// The program, through `setpriv` as the cluster's owner when tests run as root (it execs:
    /// the child is the program itself, so signals reach it).
    private func command(_ program: String, _ arguments: [String]) -> (String, [String]) {
        let executable = binaries + "/" + program
        guard let runAs else { return (executable, arguments) }
        return ("/usr/bin/setpriv", ["--reuid=\(runAs)", "--regid=\(runAs)", "--init-groups", "--", executable] + arguments)
    }

    private func run(_ program: String, _ arguments: [String], timeout: Duration) async throws -> ChildProcess.Result {
        let (executable, fullArguments) = command(program, arguments)
        return try await ChildProcess.run(executable, fullArguments, environment: environment, timeout: timeout)
    }
}
