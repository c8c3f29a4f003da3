import Foundation
import TetherProtocol

/// Faults tests inject into a real `tether-server` through its environment. Not for
/// production use; documented in docs/operations.md ("Fault injection").
enum ServerFaultInjection {
    /// `TETHER_FAULT_REFUSE_BIND_FILE=<path>`: while that file exists, every bind of a known
    /// store is refused with 211 (diverging histories), as a server whose history does not
    /// match its head would refuse it — so a test can drive an agent into a reset loop.
    static let refuseBindFile = ProcessInfo.processInfo.environment["TETHER_FAULT_REFUSE_BIND_FILE"]

    /// `TETHER_FAULT_STATE_CHUNK_DELAY_MS=<n>`: each state chunk is sent `n` ms late, so a test
    /// can watch a bootstrap's or a reset's download while it is under way.
    static let stateChunkDelay: Duration? = ProcessInfo.processInfo.environment["TETHER_FAULT_STATE_CHUNK_DELAY_MS"]
        .flatMap(Int64.init).map { .milliseconds($0) }

    /// `TETHER_FAULT_HOLD_DOWNLOADS_FILE=<path>`: while that file exists, no session is sent
    /// history entries (uploads are still integrated): a test can crash an agent between the
    /// server integrating its upload and the agent hearing the acknowledgement.
    static let holdDownloadsFile = ProcessInfo.processInfo.environment["TETHER_FAULT_HOLD_DOWNLOADS_FILE"]

    /// `TETHER_FAULT_HOLD_STATE_FILE=<path>`: while that file exists, a state download (a
    /// bootstrap or a reset's) sends its first chunk and holds the others: a test watches the
    /// download under way for as long as it needs, then removes the file to let it finish.
    static let holdStateFile = ProcessInfo.processInfo.environment["TETHER_FAULT_HOLD_STATE_FILE"]

    static func holdDownloadsIfRequested() async {
        await hold(while: holdDownloadsFile)
    }

    static func holdStateIfRequested() async {
        await hold(while: holdStateFile)
    }

    private static func hold(while file: String?) async {
        guard let file else { return }
        while FileManager.default.fileExists(atPath: file) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))  // cancelled: the loop ends
        }
    }

    static func refusal(_ request: BindRequest) -> SyncError? {
        guard let refuseBindFile, request.identity != nil, FileManager.default.fileExists(atPath: refuseBindFile) else { return nil }
        return SyncError(
            .divergingHistories,
            "the store's version \(request.lastServerVersion.version) is not in the server's history (injected by TETHER_FAULT_REFUSE_BIND_FILE)")
    }
}
