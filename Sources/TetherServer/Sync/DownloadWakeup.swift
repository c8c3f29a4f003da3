import Synchronization

/// What wakes one bound session's downloads when its partition gets a new version, without a
/// task waiting for it: the hub calls ``wake()``; the session's streamer, once its state is sent,
/// ``attach(_:)``es the work that sends what is new (it submits a job), and that work runs at
/// most once at a time — a wake-up while it runs makes it run once more (``ranOnce()``), never
/// twice at once. Lock-protected; the rules are ``DownloadWakeupMachine``'s.
package final class DownloadWakeup: Sendable {
    package typealias Work = @Sendable () -> Void

    private let machine: Mutex<DownloadWakeupMachine<Work>>

    /// Woken once already: a new session catches up with what was committed since its bind.
    package init() {
        machine = Mutex(DownloadWakeupMachine(woken: true))
    }

    /// The partition has a new version.
    package func wake() {
        machine.withLock { $0.wake() }?()
    }

    /// The session is ready for downloads: `work` runs now if a wake-up came meanwhile, and
    /// after each later one.
    package func attach(_ work: @escaping Work) {
        machine.withLock { $0.attach(work) }?()
    }

    /// Called by the work when it is done: true when it must run once more (woken meanwhile).
    package func ranOnce() -> Bool {
        machine.withLock { $0.ranOnce() }
    }

    /// The session ended: no work runs any more.
    package func finish() {
        machine.withLock { $0.finish() }
    }

    /// Whether ``finish()`` was called (for tests).
    package var isFinished: Bool {
        machine.withLock { if case .finished = $0.state { true } else { false } }
    }
}

/// The rules of ``DownloadWakeup``, pure: which wake-up starts the work, and that one run of it
/// is in flight at most. `Work` is what runs (a closure in the server, a value in tests).
package struct DownloadWakeupMachine<Work> {
    package enum State {
        /// No work attached yet; `woken` when a wake-up came meanwhile.
        case detached(woken: Bool)
        /// Attached, not running.
        case idle(Work)
        /// Running; `again` when woken meanwhile (it runs once more when it ends).
        case running(Work, again: Bool)
        case finished
    }

    package private(set) var state: State

    package init(woken: Bool) {
        state = .detached(woken: woken)
    }

    /// A wake-up: the work to start now, if any.
    package mutating func wake() -> Work? {
        switch state {
        case .detached:
            state = .detached(woken: true)
            return nil
        case .idle(let work):
            state = .running(work, again: false)
            return work
        case .running(let work, _):
            state = .running(work, again: true)
            return nil
        case .finished:
            return nil
        }
    }

    /// The work to run after wake-ups; returned when it must start now (woken meanwhile).
    package mutating func attach(_ work: Work) -> Work? {
        switch state {
        case .detached(let woken):
            state = woken ? .running(work, again: false) : .idle(work)
            return woken ? work : nil
        case .idle, .running, .finished:
            return nil  // attached once only; a finished session stays finished
        }
    }

    /// The work ended one run: true when it must run again now (it stays running).
    package mutating func ranOnce() -> Bool {
        switch state {
        case .running(let work, let again):
            state = again ? .running(work, again: false) : .idle(work)
            return again
        case .detached, .idle, .finished:
            return false
        }
    }

    package mutating func finish() {
        state = .finished
    }
}
