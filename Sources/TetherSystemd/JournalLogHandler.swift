import CSystemd
import Glibc
import Logging

/// A swift-log handler that sends every record to journald natively (`sd_journal_sendv`), with
/// `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER`, `CODE_FILE`/`CODE_LINE`/`CODE_FUNC`, the
/// Tether level (`TETHER_LEVEL`), the logger label (`TETHER_LOGGER`) and every metadata key as
/// an upper-case field (`tether.partition` → `TETHER_PARTITION`, `message_id` → `MESSAGE_ID`).
///
/// The level comes from a shared ``LogLevelBox`` unless this handler's level was set
/// explicitly. When journald cannot be reached the record is written to stderr instead, as
/// ``StderrLogHandler`` would, so nothing is lost silently.
package struct JournalLogHandler: SharedLevelLogHandler {
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?

    private let label: String
    private let identifier: String
    package let levelBox: LogLevelBox
    package var levelOverride: Logger.Level?

    /// - Parameters:
    ///   - label: the logger's label (`TETHER_LOGGER`).
    ///   - identifier: `SYSLOG_IDENTIFIER`, normally the program name.
    ///   - levelBox: the shared, run-time changeable level.
    package init(
        label: String, identifier: String, levelBox: LogLevelBox,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.label = label
        self.identifier = identifier
        self.levelBox = levelBox
        self.metadataProvider = metadataProvider
    }

    package func log(event: LogEvent) {
        let merged = mergedMetadata(event.metadata)
        let entry = JournalEntry(event: event, identifier: identifier, label: label, metadata: merged)
        let result = Self.send(entry)
        if result < 0 {
            // journald is gone (stopped, socket removed): keep the record on stderr.
            let line = StderrLineFormat.line(
                timestamp: .now, level: TetherLogLevel(loggerLevel: event.level),
                metadata: merged, message: event.message.description)
            StderrLogHandler.write(line)
        }
    }

    /// Sends one record; returns 0 or a negative errno as `sd_journal_sendv` does.
    @discardableResult
    package static func send(_ entry: JournalEntry) -> Int32 {
        // One contiguous buffer holds every `NAME=value`; the iovecs point into it.
        var buffer: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in entry.fields {
            let start = buffer.count
            buffer.append(contentsOf: field.bytes)
            ranges.append(start..<buffer.count)
        }
        return buffer.withUnsafeMutableBytes { raw -> Int32 in
            var iovecs = ranges.map { range in
                iovec(iov_base: raw.baseAddress! + range.lowerBound, iov_len: range.count)
            }
            return iovecs.withUnsafeMutableBufferPointer { vectors in
                sd_journal_sendv(vectors.baseAddress, Int32(vectors.count))
            }
        }
    }
}
