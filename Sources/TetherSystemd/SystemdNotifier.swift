import CSystemd
import Glibc

/// Tells systemd about the daemon's state through `sd_notify(3)` (docs/contract.md: systemd): `READY=1`,
/// `STATUS=`, `RELOADING=1`, `STOPPING=1`, `EXTEND_TIMEOUT_USEC=` and `WATCHDOG=1`.
///
/// libsystemd reads `NOTIFY_SOCKET` (a path or an abstract `@name`) at each call. When it is
/// unset — the daemon runs by hand, or under `Type=simple` — every call quietly does nothing
/// and returns ``Delivery/disabled``. Notifications are best effort: a failure is returned,
/// never thrown, because systemd's own timeouts deal with a daemon that cannot reach it.
package struct SystemdNotifier: Sendable {
    /// What became of one notification.
    package enum Delivery: Sendable, Equatable {
        /// Sent to systemd.
        case sent
        /// `NOTIFY_SOCKET` is not set: not running under a `Type=notify` service.
        case disabled
        /// Sending failed; the value is the errno.
        case failed(errno: Int32)
    }

    private let sender: @Sendable (String) -> Delivery

    /// A notifier using libsystemd's `sd_notify` and this process's `NOTIFY_SOCKET`.
    package init() {
        sender = { state in
            let result = state.withCString { sd_notify(0, $0) }
            if result > 0 { return .sent }
            if result == 0 { return .disabled }
            return .failed(errno: -result)
        }
    }

    /// A notifier handing each message (`KEY=value` lines joined by `\n`) to `send`; for tests,
    /// and for code that must observe what the daemon tells systemd.
    package init(sending send: @escaping @Sendable (String) -> Delivery) {
        sender = send
    }

    /// Sends a raw notification: newline-separated `KEY=value` assignments in one datagram.
    @discardableResult
    package func notify(_ state: String) -> Delivery { sender(state) }

    /// `READY=1`: start-up finished (every partition's session started), or a reload finished.
    @discardableResult
    package func ready() -> Delivery { notify("READY=1") }

    /// `STATUS=…`: a one-line summary shown by `systemctl status`; line breaks become spaces.
    @discardableResult
    package func status(_ text: String) -> Delivery {
        notify("STATUS=" + String(text.map { $0.isNewline ? " " : $0 }))
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=` (the `CLOCK_MONOTONIC` time, as systemd 253+ wants
    /// for `Type=notify-reload`) in the same datagram. Send ``ready()`` when the reload is done.
    @discardableResult
    package func reloading() -> Delivery {
        notify("RELOADING=1\nMONOTONIC_USEC=\(Self.monotonicMicroseconds())")
    }

    /// `STOPPING=1`: shutdown began.
    @discardableResult
    package func stopping() -> Delivery { notify("STOPPING=1") }

    /// `EXTEND_TIMEOUT_USEC=…`: asks for more time in the current start, reload or stop phase.
    @discardableResult
    package func extendTimeout(microseconds: UInt64) -> Delivery {
        notify("EXTEND_TIMEOUT_USEC=\(microseconds)")
    }

    /// `WATCHDOG=1`: the process is alive and making progress.
    @discardableResult
    package func watchdogPing() -> Delivery { notify("WATCHDOG=1") }

    /// The watchdog timeout systemd set for this process (`WATCHDOG_USEC`, honouring
    /// `WATCHDOG_PID`), or `nil` when there is no watchdog. Ping at half of it.
    package static var watchdogInterval: Duration? { WatchdogConfiguration.current() }

    /// The current `CLOCK_MONOTONIC` time in microseconds.
    package static func monotonicMicroseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1_000
    }
}
