import Foundation
@_exported import TetherControl

/// An application's handle on the `tetherd` of its device: its status, waiting for a partition
/// to be synced, pausing and resuming, and the events an application reacts to — another
/// device's changes applied to its store, sync errors, client resets with the store's copy from
/// before, and the subscriptions it holds and wants (docs/app-integration.md). It speaks the control protocol
/// (docs/control-protocol.md) over the agent's Unix socket; every call opens a connection of
/// its own, so a value can be shared freely.
///
/// ```swift
/// let tether = TetherClient()
/// try await tether.waitSynced(partition: "store-17")
/// for try await event in tether.events(after: lastHandled) {
///     if event.event == .changesApplied { reloadViews(event.tables ?? [:]) }
/// }
/// ```
public struct TetherClient: Sendable {
    /// The packaged agent's socket.
    public static let defaultSocketPath = "/run/tether/tetherd.sock"

    /// The agent's control socket.
    public var socketPath: String
    /// How long a call waits for the agent's answer (``waitSynced(partition:timeout:)`` waits
    /// its own timeout on top).
    public var timeout: Duration

    /// A client of the agent at `socketPath`: by default `TETHER_SOCKET` when set, else
    /// ``defaultSocketPath``.
    public init(socketPath: String? = nil, timeout: Duration = .seconds(30)) {
        let fromEnvironment = ProcessInfo.processInfo.environment["TETHER_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        self.socketPath = socketPath ?? fromEnvironment ?? Self.defaultSocketPath
        self.timeout = timeout
    }

    /// Who answers: the agent's release, its control protocol version and capabilities, and
    /// the caller's role. Throws ``TetherClientError/protocolTooNew(agent:client:)`` for an
    /// agent older than this library.
    public func hello() async throws(TetherClientError) -> HelloReport {
        let response = try await send(ControlRequest(command: .hello, protocol: ControlProtocol.version))
        // Control protocol 1 does not know `hello`: it refuses it as a bad request, without a code.
        if !response.ok, response.code == nil, response.exitCode == 2 {
            throw .protocolTooNew(agent: 1, client: ControlProtocol.version)
        }
        return try Self.report(response, as: HelloReport.self)
    }

    /// The agent's connection and every partition's state.
    public func status() async throws(TetherClientError) -> StatusReport {
        try Self.report(try await send(ControlRequest(command: .status)), as: StatusReport.self)
    }

    /// Waits until every local change of `partition` is uploaded and its store holds the
    /// server's latest version; returns that version. Throws ``TetherClientError/timedOut(_:)``
    /// when it is not synced within `timeout`.
    @discardableResult
    public func waitSynced(partition: String, timeout: Duration = .seconds(60)) async throws(TetherClientError) -> Int64 {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let request = ControlRequest(command: .waitSynced, partition: partition, timeout: seconds)
        let response = try await send(request, answerWithin: self.timeout + timeout)
        return try Self.report(response, as: WaitSyncedReport.self).serverVersion
    }

    /// Stops syncing `partition` until ``resume(partition:)`` (kept across restarts of the
    /// agent). Needs the `operator` role.
    public func pause(partition: String) async throws(TetherClientError) {
        _ = try Self.report(try await send(ControlRequest(command: .pause, partition: partition)), as: PartitionStateReport.self)
    }

    /// Syncs `partition` again after ``pause(partition:)``. Needs the `operator` role.
    public func resume(partition: String) async throws(TetherClientError) {
        _ = try Self.report(try await send(ControlRequest(command: .resume, partition: partition)), as: PartitionStateReport.self)
    }

    /// Carries out the client reset that waits for an operator on `partition` (a manual reset,
    /// or a delete-store action) — the same as `tetherctl reset initiate` and Realm's
    /// `SyncSession.immediatelyHandleError`; on a partition stuck in an error state it forces a
    /// reset. The reset goes on in the agent: ``onResetProgress(partition:after:_:)`` tells
    /// when its backup exists, ``onClientReset(partition:after:_:)`` when it finished. Needs
    /// the `operator` role; throws ``TetherClientError/refused(code:message:)`` when there is
    /// no reset to initiate.
    @discardableResult
    public func initiateReset(partition: String) async throws(TetherClientError) -> ResetInitiatedReport {
        try Self.report(try await send(ControlRequest(command: .resetInitiate, partition: partition)), as: ResetInitiatedReport.self)
    }

    /// Retry now: ends the agent's backoff, so it reconnects to the server and binds
    /// `partition` (nil: every partition) at once instead of after the wait. Says what was
    /// backing off; what was not (connected, syncing, paused, stopped until a reload) is left
    /// as it is. Needs the `operator` role and an agent with the `retry-now` capability.
    @discardableResult
    public func retryNow(partition: String? = nil) async throws(TetherClientError) -> RetryNowReport {
        try Self.report(try await send(ControlRequest(command: .retryNow, partition: partition)), as: RetryNowReport.self)
    }

    /// The subscriptions `partition`'s store holds, those it wants and those configured, and
    /// whether a change is pending (capability `subscriptions`).
    public func subscriptions(partition: String) async throws(TetherClientError) -> SubscriptionsReport {
        try Self.report(try await send(ControlRequest(command: .subscriptions, partition: partition)), as: SubscriptionsReport.self)
    }

    /// Changes the subscriptions `partition` wants at run time — Realm's
    /// `subscriptions.update` (docs/subscriptions.md "Changing them at run time"): from now on
    /// it wants `subscriptions`, kept across restarts of the agent until they are cleared or the
    /// configured ones change; nil clears them, and the configured ones are in force again. The
    /// server changes the store's rows at the partition's next bind, without a reset. With
    /// `waitForSync` (Realm's `waitForSync`), returns once the store holds the new set, and
    /// throws ``TetherClientError/timedOut(_:)`` when it does not within `timeout` (the change
    /// stands). Returns the partition's subscriptions. Needs the `operator` role and an agent
    /// with the `set-subscriptions` capability; a set that is not valid, or that the store's
    /// schema cannot serve, throws ``TetherClientError/refused(code:message:)`` with
    /// `badRequest`, and so does a partition in a client reset (`failed`): nothing changed.
    @discardableResult
    public func updateSubscriptions(
        partition: String, _ subscriptions: [Tether.Subscription]?, waitForSync: Bool = true, timeout: Duration = .seconds(60)
    ) async throws(TetherClientError) -> SubscriptionsReport {
        let request = subscriptions.map { ControlRequest(command: .setSubscriptions, partition: partition, subscriptions: $0) }
            ?? ControlRequest(command: .setSubscriptions, partition: partition, clear: true)
        let report = try Self.report(try await send(request), as: SubscriptionsReport.self)
        guard waitForSync else { return report }
        try await waitSynced(partition: partition, timeout: timeout)
        return try await self.subscriptions(partition: partition)
    }

    /// Every event after `after` (the `seq` of the last one the application handled; nil: the
    /// kept ones first), then each new one, for as long as the sequence is iterated. When the
    /// agent stops or restarts, or is not running yet, it connects again and goes on after the
    /// last event it delivered, so none is lost or repeated while the agent keeps them (its last
    /// 1,000); a `dropped` event says when some are gone. Ends with an error only when going
    /// on cannot help: permission denied, an unknown partition, an agent too old.
    public func events(after: UInt64? = nil, partition: String? = nil) -> AsyncThrowingStream<AgentEvent, any Error> {
        EventFollower(client: self, after: after, partition: partition).start()
    }

    /// Calls `handler` for every sync error from now on (after `after`, when given) — Realm's
    /// sync error handler. Returns only when the task is cancelled, or throws as
    /// ``events(after:partition:)`` does.
    public func onSyncError(
        partition: String? = nil, after: UInt64? = nil, _ handler: @Sendable (AgentEvent) async -> Void
    ) async throws {
        let start = try await startingPoint(after)
        for try await event in events(after: start, partition: partition) where event.event == .syncError {
            await handler(event)
        }
    }

    /// Calls `handler` for every compensating write from now on (after `after`, when given) — a
    /// change of this device the server did not integrate and reverted in the store (error 231:
    /// outside the partition's subscriptions or its grant's write rules; docs/subscriptions.md).
    /// `event.table`, `event.key` and `event.reason` say which row and why. Returns only when the
    /// task is cancelled, or throws as ``events(after:partition:)`` does.
    public func onCompensatingWrite(
        partition: String? = nil, after: UInt64? = nil, _ handler: @Sendable (AgentEvent) async -> Void
    ) async throws {
        let start = try await startingPoint(after)
        for try await event in events(after: start, partition: partition) where event.event == .compensatingWrite {
            await handler(event)
        }
    }

    /// Calls `handler` with the store's copy from before and the store after each client reset
    /// that finished from now on (after `after`, when given) — Realm's
    /// `afterReset(before, after)`. Returns only when the task is cancelled, or throws as
    /// ``events(after:partition:)`` does.
    public func onClientReset(
        partition: String? = nil, after: UInt64? = nil, _ handler: @Sendable (ClientResetNotice) async -> Void
    ) async throws {
        let start = try await startingPoint(after)
        for try await event in events(after: start, partition: partition) {
            if let notice = ClientResetNotice(event) { await handler(notice) }
        }
    }

    /// Calls `handler` as each client reset from now on (after `after`, when given) goes
    /// through its phases: when it starts (`recorded`), when it waits for an operator, and —
    /// with ``ClientResetProgress/backupPath`` — as soon as its backup of the store exists,
    /// before the reset touches the store (Realm's `beforeReset(before)`). Returns only when
    /// the task is cancelled, or throws as ``events(after:partition:)`` does.
    public func onResetProgress(
        partition: String? = nil, after: UInt64? = nil, _ handler: @Sendable (ClientResetProgress) async -> Void
    ) async throws {
        let start = try await startingPoint(after)
        for try await event in events(after: start, partition: partition) {
            if let progress = ClientResetProgress(event) { await handler(progress) }
        }
    }

    /// `after`, or the agent's last event now: the handlers hear what happens from now on.
    private func startingPoint(_ after: UInt64?) async throws(TetherClientError) -> UInt64 {
        if let after { return after }
        return try await hello().lastEventSeq
    }

    // MARK: Exchanges

    /// Sends `request` on a thread of its own (the socket calls block for up to the timeout)
    /// and returns the agent's answer, refusals included. Not on Dispatch's global queue: on
    /// Linux that is the pool Swift concurrency runs every task on, one thread per core, and an
    /// answer that takes seconds (a reset initiated, a busy agent) would hold one of them.
    func send(_ request: ControlRequest, answerWithin limit: Duration? = nil) async throws(TetherClientError) -> ControlResponse {
        var request = request
        request.protocol = request.protocol ?? ControlProtocol.version
        let control = ControlClient(socketPath: socketPath, timeout: limit ?? timeout)
        let path = socketPath
        let outcome: Result<ControlResponse, TetherClientError> = await withCheckedContinuation { continuation in
            let thread = Thread { [request] in
                do throws(ControlClientError) {
                    continuation.resume(returning: .success(try control.send(request)))
                } catch {
                    continuation.resume(returning: .failure(.transport(error, socketPath: path)))
                }
            }
            thread.name = "tether-client"
            thread.start()
        }
        return try outcome.get()
    }

    /// The report a successful answer holds, or the error a refusal stands for.
    static func report<Report: Decodable>(_ response: ControlResponse, as type: Report.Type) throws(TetherClientError) -> Report {
        guard response.ok else { throw .refusal(response) }
        do {
            return try (response.result ?? .null).decode(as: type)
        } catch {
            throw .unreachable("tetherd's answer is not a \(type): \(error)")
        }
    }
}
