import Foundation

/// Executables built by SwiftPM next to the test bundle (`.build/<triple>/debug/`), for tests
/// that run a program as a child process.
package enum BuiltProducts {
    /// The directory holding the build products.
    package static var directory: String {
        // No /proc (not Linux): the path the command line gives.
        let runner = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: runner).deletingLastPathComponent()
        // On Linux the runner is `<Package>PackageTests.xctest` inside the products directory;
        // elsewhere it may sit inside a bundle: climb to the directory that holds `.xctest`.
        while url.path != "/" && url.pathExtension == "xctest" || url.path.contains(".xctest/") {
            url.deleteLastPathComponent()
        }
        return url.path
    }

    /// The path of a built executable, or an error naming where it was looked for.
    package static func executable(_ name: String) throws -> String {
        let path = directory + "/" + name
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSupportError("no built executable \(name) in \(directory) (hint: swift build --build-tests)")
        }
        return path
    }
}
