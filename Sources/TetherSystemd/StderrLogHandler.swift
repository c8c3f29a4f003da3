import Glibc
import Logging

/// A swift-log handler writing one plain line per record on stderr (see ``StderrLineFormat``),
/// for a daemon run by hand or anywhere journald is not the destination.
///
/// The level comes from a shared ``LogLevelBox`` unless this handler's level was set
/// explicitly. Each line is written with a single `write(2)`, so lines of concurrent records
/// do not interleave.
package struct StderrLogHandler: SharedLevelLogHandler {
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?

    package let levelBox: LogLevelBox
    package var levelOverride: Logger.Level?
    private let output: @Sendable (String) -> Void

    /// - Parameters:
    ///   - levelBox: the shared, run-time changeable level.
    ///   - output: where a finished line goes (without its newline); stderr by default.
    package init(
        levelBox: LogLevelBox, metadataProvider: Logger.MetadataProvider? = nil,
        output: @escaping @Sendable (String) -> Void = StderrLogHandler.write
    ) {
        self.levelBox = levelBox
        self.metadataProvider = metadataProvider
        self.output = output
    }

    package func log(event: LogEvent) {
        var merged = mergedMetadata(event.metadata)
        if let error = event.error, merged["error"] == nil {
            merged["error"] = .string(String(describing: error))
        }
        output(
            StderrLineFormat.line(
                timestamp: .now, level: TetherLogLevel(loggerLevel: event.level), metadata: merged,
                message: event.message.description))
    }

    /// Writes the line and a newline to file descriptor 2 in one `write(2)` where possible.
    @Sendable
    package static func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(2, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
