import Synchronization

/// Collects lines a handler writes, for assertions.
final class LineRecorder: Sendable {
    private let storage = Mutex<[String]>([])

    var lines: [String] { storage.withLock { $0 } }

    @Sendable func append(_ line: String) {
        storage.withLock { $0.append(line) }
    }
}
