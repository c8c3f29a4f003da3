import Foundation
import TetherTestSupport

/// A throwaway Debian 12 system in a directory: a copy of the `debootstrap --variant=minbase`
/// tree (with systemd, sqlite3 and man-db) that `scripts/debian-root` makes once per build
/// directory and keeps in `.build/debian-12-root` (`make test` has it made beside the test
/// phases; about a minute or two from deb.debian.org the first time).
struct DebianRoot: Sendable {
    let directory: TemporaryDirectory
    var path: String { directory.path + "/root" }

    /// The pristine tree, made on first use when `make test` has not made it (one script run
    /// per test process at most; it does nothing when the tree is there).
    private static let pristine = Task<String, any Error> {
        let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let cache = checkout.appendingPathComponent(".build/debian-12-root").path
        let result = try await ChildProcess.run(
            checkout.appendingPathComponent("scripts/debian-root").path, [cache], timeout: .seconds(900))
        guard result.succeeded else { throw TestSupportError("scripts/debian-root failed: \(result)") }
        return cache
    }

    static func make() async throws -> DebianRoot {
        let source = try await pristine.value
        let directory = try TemporaryDirectory(prefix: "tether-debroot")
        let copy = try await ChildProcess.run(try Packaging.tool("cp"), ["-a", source, directory.path + "/root"], timeout: .seconds(300))
        guard copy.succeeded else { throw TestSupportError("cannot copy the Debian root: \(copy)") }
        return DebianRoot(directory: directory)
    }

    func remove() { directory.remove() }

    /// Runs a command inside the root (chroot), with a plain environment and the root's own
    /// /proc mounted, as on a real system (systemd-tmpfiles needs it), in a private mount
    /// namespace that ends with the command.
    func run(_ command: String, _ arguments: String...) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            try Packaging.tool("unshare"),
            ["--mount", "--propagation", "private", "/bin/sh", "-c", #"mount -t proc proc "$0/proc" && exec chroot "$0" "$@""#, path, command]
                + arguments,
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive"],
            timeout: .seconds(300))
    }

    func copyIn(_ file: String, as target: String) throws {
        try? FileManager.default.removeItem(atPath: path + target)
        try FileManager.default.copyItem(atPath: file, toPath: path + target)
    }

    func read(_ file: String) throws -> String { try String(contentsOfFile: path + file, encoding: .utf8) }
    func write(_ file: String, _ text: String) throws { try text.write(toFile: path + file, atomically: false, encoding: .utf8) }
    func exists(_ file: String) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path + file)) != nil
            || FileManager.default.fileExists(atPath: path + file)
    }

    /// `user:group` of a file, by the names in the root's own /etc/passwd and /etc/group.
    func owner(_ file: String) throws -> String {
        let attributes = try FileManager.default.attributesOfItem(atPath: path + file)
        let uid = (attributes[.ownerAccountID] as? NSNumber)?.intValue ?? -1
        let gid = (attributes[.groupOwnerAccountID] as? NSNumber)?.intValue ?? -1
        func name(_ id: Int, in database: String) throws -> String {
            for line in try read(database).split(separator: "\n") {
                let fields = line.split(separator: ":", omittingEmptySubsequences: false)
                if fields.count > 2, Int(fields[2]) == id { return String(fields[0]) }
            }
            return String(id)
        }
        return "\(try name(uid, in: "/etc/passwd")):\(try name(gid, in: "/etc/group"))"
    }

    func mode(_ file: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + file))?[.posixPermissions] as? Int ?? -1) & 0o7777
    }

    /// A copy of `deb` whose version has `suffix` appended, copied into the root's /tmp: a real
    /// upgrade for dpkg.
    static func bumpVersion(_ deb: String, suffix: String, in root: DebianRoot) async throws -> String {
        let tree = root.directory.path + "/bump"
        let extract = try await ChildProcess.run(try Packaging.tool("dpkg-deb"), ["-R", deb, tree], timeout: .seconds(120))
        guard extract.succeeded else { throw TestSupportError("\(extract)") }
        let control = tree + "/DEBIAN/control"
        var text = try String(contentsOfFile: control, encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Version: ") }) else { throw TestSupportError("no Version") }
        text = text.replacingOccurrences(of: String(line), with: line + suffix)
        try text.write(toFile: control, atomically: false, encoding: .utf8)
        let build = try await ChildProcess.run(
            try Packaging.tool("dpkg-deb"), ["--root-owner-group", "-Zxz", "-z1", "--build", tree, root.path + "/tmp/upgrade.deb"],
            timeout: .seconds(300))
        guard build.succeeded else { throw TestSupportError("\(build)") }
        return "/tmp/upgrade.deb"
    }
}
