import Foundation
import Glibc
import TetherTOML

extension AgentConfiguration {
    /// The checks that look at the file system: the token file must not be readable by group
    /// or others, and every hook must exist, be executable and be writable only by root or
    /// the daemon's own user (docs/contract.md: Reset hooks, Agent configuration). Run at start and at every reload.
    func validateFiles(_ parser: ConfigParser) {
        validateCredentialFiles(parser)
        var checked: Set<String> = []
        func checkHooks(_ reset: ResetSettings, prefix: String) {
            for (key, path) in reset.hooks where checked.insert(path).inserted {
                if let problem = Self.hookProblem(path) { parser.problem("\(prefix)\(key)", problem) }
            }
        }
        // Checked apart from the reset hooks: a path shared with one is reported under both keys.
        var checkedErrorHooks: Set<String> = []
        func checkErrorHook(_ events: EventSettings, key: String) {
            if let path = events.errorHook, checkedErrorHooks.insert(path).inserted, let problem = Self.hookProblem(path) {
                parser.problem(key, problem)
            }
        }
        checkHooks(reset, prefix: "reset.")
        checkErrorHook(events, key: "events.error_hook")
        for (index, partition) in partitions.enumerated() {
            checkHooks(partition.reset, prefix: "partition[\(index)].reset.")
            checkErrorHook(partition.events, key: "partition[\(index)].events.error_hook")
        }
    }

    /// `token_file` and `enrollment_key_file`. Without a key the token file must be there (as
    /// always). With one, a missing token file is what enrollment writes: its directory must be
    /// writable by this user; the key file is checked when it exists, and must exist while the
    /// token file is missing or empty (the agent enrolls at start).
    private func validateCredentialFiles(_ parser: ConfigParser) {
        guard let keyFile = server.enrollmentKeyFile else {
            if let problem = Self.tokenFileProblem(server.tokenFile) { parser.problem("server.token_file", problem) }
            return
        }
        let token = TokenFile.inspect(server.tokenFile)
        if token != .missing, let problem = Self.tokenFileProblem(server.tokenFile) { parser.problem("server.token_file", problem) }
        if let problem = Self.credentialDirectoryProblem(server.tokenFile) { parser.problem("server.token_file", problem) }
        let needsEnrollment = token.isMissingOrEmpty
        do {
            _ = try EnrollmentKeyFile.read(keyFile)
        } catch .missing where !needsEnrollment {
            // Not needed while the token is there (a one-off key removed after enrollment);
            // a clone that needs it says so when it tries.
        } catch {
            parser.problem("server.enrollment_key_file", "\(error)")
        }
    }

    /// Why enrollment could not write `tokenFile` (temp file and rename in its directory), or nil.
    static func credentialDirectoryProblem(_ tokenFile: String) -> String? {
        let directory = (tokenFile as NSString).deletingLastPathComponent
        guard access(directory.isEmpty ? "/" : directory, W_OK | X_OK) == 0 else {
            return "enrollment writes the credential to \(tokenFile), but its directory \(directory) is not writable by this user (\(String(cString: strerror(errno)))); put token_file where tetherd may write, such as /var/lib/tether/token"
        }
        return nil
    }

    /// Why the token file cannot be used, or nil.
    static func tokenFileProblem(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return "\(path): \(String(cString: strerror(errno)))" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        if info.st_mode & 0o044 != 0 {
            return "\(path) is readable by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); run chmod 600 \(path)"
        }
        guard access(path, R_OK) == 0 else { return "\(path) is not readable by this user" }
        return nil
    }

    /// Why `path` must not run as a hook, or nil: missing, not an executable regular file,
    /// or writable by someone other than root or this daemon's user (file or its directory).
    static func hookProblem(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return "hook \(path): \(String(cString: strerror(errno)))" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "hook \(path) is not a regular file" }
        guard access(path, X_OK) == 0 else { return "hook \(path) is not executable" }
        if let reason = insecurity(of: path, info) { return "hook \(path) is refused: \(reason)" }
        let directory = path.prefix(upTo: path.lastIndex(of: "/")!)
        var dirInfo = stat()
        let dirPath = directory.isEmpty ? "/" : String(directory)
        if stat(dirPath, &dirInfo) == 0, let reason = insecurity(of: dirPath, dirInfo, sticky: true) {
            return "hook \(path) is refused: its directory \(reason)"
        }
        return nil
    }

    private static func insecurity(of path: String, _ info: stat, sticky: Bool = false) -> String? {
        let me = geteuid()
        if info.st_uid != 0 && info.st_uid != me {
            return "\(path) is owned by uid \(info.st_uid), not root or the daemon's user"
        }
        if sticky && info.st_mode & S_ISVTX != 0 { return nil }
        if info.st_mode & 0o022 != 0 {
            return "\(path) is writable by group or others (mode \(String(info.st_mode & 0o777, radix: 8)))"
        }
        return nil
    }
}
