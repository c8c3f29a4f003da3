import TetherProtocol

/// Lets any number of tasks wait for a partition's status to change (`wait-synced`) without
/// polling: each change moves a generation on, and a waiter returns once the generation moved
/// past the one it saw, so a change between looking and waiting is never missed.
struct StatusChanges: Sendable {
    private let generations = AwaitableValue<UInt64>(0)

    var generation: UInt64 { generations.value }

    func changed() { generations.update { $0 &+= 1 } }

    /// Returns once the generation is past `seen`, after `timeout`, or when cancelled.
    func wait(after seen: UInt64, timeout: Duration) async {
        await generations.wait(until: { $0 != seen }, timeout: timeout)
    }
}
