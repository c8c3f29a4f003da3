import Foundation

/// Runs a blocking call (a `poll`, a `read` on a socket, a wait) on a thread of its own and
/// awaits its result. Swift concurrency's pool has one thread per core (two in CI): a test
/// that blocks one of them for seconds stalls every other test's tasks, timers and awaits
/// for as long, and their deadlines then fail for nothing they did.
package enum BlockingCall {
    package static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "tether-test-blocking"
            thread.start()
        }
    }
}
