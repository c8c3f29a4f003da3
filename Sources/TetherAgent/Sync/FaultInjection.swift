import Foundation

/// Faults tests inject into a real `tetherd` through its environment. Not for production use;
/// documented in docs/operations.md.
enum FaultInjection {
    /// `TETHER_FAULT_WEDGE_FILE=<path>`: while that file exists, a partition's session hangs
    /// in the middle of handling an event, as a wedged sync loop would; the watchdog must then
    /// stop pinging.
    static let wedgeFile = ProcessInfo.processInfo.environment["TETHER_FAULT_WEDGE_FILE"]

    static func wedgeIfRequested() async {
        guard let wedgeFile else { return }
        while FileManager.default.fileExists(atPath: wedgeFile) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}
