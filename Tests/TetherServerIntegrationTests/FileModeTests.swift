import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 46: `tether-server` sets its umask itself (0077, as its unit does): started outside
/// the unit with umask 022, its database and the `-wal`/`-shm` beside it, its data directory
/// and the backup `admin backup --out` writes are for its own user only.
@Suite(.timeLimit(.minutes(3)))
struct FileModeTests {
    static func mode(_ path: String) -> Int? {
        var info = stat()
        return lstat(path, &info) == 0 ? Int(info.st_mode & 0o7777) : nil
    }

    static func octal(_ mode: Int?) -> String { mode.map { String($0, radix: 8) } ?? "absent" }

    @Test func aServerStartedWithUmask022KeepsItsFilesToItself() async throws {
        let server = try await ServerProcess(umask: "022")
        do {
            try await withConnection(server) { connection in
                let device = TestDevice()
                try await device.bind(on: connection)
                device.write(.insert("orders", .text("t"), ["customer": .text("c"), "total": .real(1)]))
                try await device.upload()
                try await device.syncUntilCaughtUp()
            }
            let data = server.directory + "/data"
            let database = data + "/server.sqlite"
            for path in [database, database + "-wal", database + "-shm"] {
                let mode = Self.mode(path)
                #expect(mode != nil && mode! & 0o077 == 0, "\(path) is \(Self.octal(mode)): readable or writable by others")
            }
            let directory = Self.mode(data)
            #expect(directory != nil && directory! & 0o007 == 0, "\(data) is \(Self.octal(directory))")
            // The admin client writes its backup with the umask it set, too.
            let tokenFile = server.directory + "/cli.token"
            try ServerProcess.adminToken.write(toFile: tokenFile, atomically: true, encoding: .utf8)
            let out = server.directory + "/backup.sqlite"
            let result = try await CLIResult.run(
                "/bin/sh",
                ["-c", "umask 022 && exec \"$0\" \"$@\"", ServerProcess.binary, "admin", "--url", server.adminURL, "--token-file", tokenFile, "backup", "--out", out],
                directory: server.directory)
            #expect(result.status == 0, "\(result)")
            let backup = Self.mode(out)
            #expect(backup != nil && backup! & 0o077 == 0, "\(out) is \(Self.octal(backup))")
        } catch {
            let log = server.log
            await server.shutdown()
            throw ServerFailure("\(error)\n--- server log ---\n\(log.suffix(4000))")
        }
        await server.shutdown()
    }
}
