import Foundation
import Logging
import ServiceLifecycle

/// `metrics_textfile`: writes the agent's metrics for node_exporter's textfile collector
/// every `interval` (15 s) and once at start, atomically (a temporary file in the same
/// directory, then rename), so the collector never reads half a file. A write that fails (or
/// metrics that cannot be read) is logged once until one succeeds again, and the file is left
/// as it was — stale, as its age shows, never made up; the service keeps trying.
package struct MetricsTextfileService<C: Clock>: Service where C.Duration == Duration {
    package static var defaultInterval: Duration { .seconds(15) }

    let path: String
    let interval: Duration
    let clock: C
    let render: @Sendable () async throws -> String
    let logger: Logger

    package init(path: String, interval: Duration = Self.defaultInterval, clock: C, logger: Logger, render: @escaping @Sendable () async throws -> String) {
        self.path = path
        self.interval = interval
        self.clock = clock
        self.render = render
        self.logger = logger
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            var failing = false
            var deadline = clock.now
            while !Task.isCancelled {
                do {
                    try Self.writeAtomically(try await render(), to: path)
                    if failing { logger.notice("metrics_textfile \(path) written again") }
                    failing = false
                } catch {
                    if !failing { logger.error("cannot write metrics_textfile \(path): \(error); retrying every \(interval)") }
                    failing = true
                }
                deadline = deadline.advanced(by: interval)
                if deadline < clock.now { deadline = clock.now }
                do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
            }
        }
    }

    /// Writes `text` to a temporary file next to `path` (mode 0644: node_exporter runs as
    /// another user) and renames it over `path`.
    static func writeAtomically(_ text: String, to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = (directory as NSString).appendingPathComponent(".\(name).\(getpid()).tmp")
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: 0o644]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary])
        }
        // createFile honours the umask: make sure the collector can read it.
        do {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: temporary)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)  // cleanup; the chmod's error is the one reported
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: temporary)  // cleanup; the rename's error is the one reported
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "rename to \(path): \(reason)"])
        }
    }
}
