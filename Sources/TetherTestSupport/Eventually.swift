/// A condition that did not become true before its deadline (``eventually(_:timeout:pollInterval:file:line:_:)``)
/// or did not stay true for its period (``consistently(_:for:pollInterval:file:line:_:)``).
package struct ConditionTimeout: Error, CustomStringConvertible {
    package var what: String
    package var file: String
    package var line: Int

    package var description: String { "\(file):\(line): \(what)" }
}

/// Polls `condition` until it is true, failing after `timeout`. Tests use this instead of
/// sleeping: it returns as soon as the condition holds.
package func eventually(
    _ what: String = "condition", timeout: Duration = TestDeadline.standard, pollInterval: Duration = .milliseconds(10),
    file: String = #fileID, line: Int = #line, _ condition: () async throws -> Bool
) async throws {
    _ = try await eventually(what, timeout: timeout, pollInterval: pollInterval, file: file, line: line) {
        try await condition() ? true : nil
    }
}

/// Polls `produce` until it returns a value, failing after `timeout`.
package func eventually<T>(
    _ what: String = "value", timeout: Duration = TestDeadline.standard, pollInterval: Duration = .milliseconds(10),
    file: String = #fileID, line: Int = #line, _ produce: () async throws -> T?
) async throws -> T {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while true {
        if let value = try await produce() { return value }
        if clock.now >= deadline {
            throw ConditionTimeout(what: "\(what) not reached within \(timeout)", file: file, line: line)
        }
        try await Task.sleep(for: pollInterval)
    }
}

/// Checks that `condition` holds throughout `period` (polled every `pollInterval`), failing at
/// the first poll where it does not. For asserting that something does *not* happen, such as
/// no watchdog ping while a daemon is stalled.
package func consistently(
    _ what: String = "condition", for period: Duration, pollInterval: Duration = .milliseconds(10),
    file: String = #fileID, line: Int = #line, _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: period)
    repeat {
        guard try await condition() else {
            throw ConditionTimeout(what: "\(what) stopped holding within \(period)", file: file, line: line)
        }
        try await Task.sleep(for: pollInterval)
    } while clock.now < end
    guard try await condition() else {
        throw ConditionTimeout(what: "\(what) stopped holding within \(period)", file: file, line: line)
    }
}
