import Glibc

/// Starts a long-lived daemon (journald) that must outlive the test process.
///
/// Foundation's `Process` notices a child's end through a descriptor the child inherits, so a
/// daemon forked from a `Process` child would keep that child "running" for as long as the
/// daemon lives. This uses `posix_spawn` directly instead: a new session
/// (`POSIX_SPAWN_SETSID`), stdin/stdout/stderr on `/dev/null`, every other descriptor closed.
enum DetachedProcess {
    /// glibc's `POSIX_SPAWN_SETSID` (0x80; Swift's Glibc module does not see the `_GNU_SOURCE`
    /// declarations).
    private static let posixSpawnSetsid: Int16 = 0x80

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), looked up at run time for the
    /// same reason.
    private static var closeFromAction: CloseFrom? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            return nil
        }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }

    /// Spawns `path` with `arguments`; returns its process id.
    static func spawn(_ path: String, _ arguments: [String] = []) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, posixSpawnSetsid)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        guard let closeFrom = closeFromAction else {
            throw TestSupportError("posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34 or newer needed)")
        }
        _ = closeFrom(&actions, 3)

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw TestSupportError("cannot start \(path): \(String(cString: strerror(result)))")
        }
        return pid
    }
}
