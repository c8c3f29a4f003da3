import Foundation
import Logging
import TetherSyncClient
import TetherProtocol

extension SyncAgent {
    /// Connects, runs every partition on the connection, and reconnects with capped
    /// exponential backoff and jitter when it ends.
    func connectionLoop() async {
        let wake = connectionWake
        while !Task.isCancelled {
            if connectionStopped != nil {
                markStarted()
                await wake.wait()  // a reload clears it
                continue
            }
            // Trust as `[server]` says: ca_file's CAs only, pin_sha256, tls_min_version.
            let client = configuration.server.clientConfiguration(software: "tetherd \(TetherVersion.release)")
            let logger = self.logger
            connectingSince = .now
            reportedHungAttempt = false
            do {
                try await SyncConnection.run(client, logger: logger) { connection in
                    await self.serve(connection)
                }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("cannot sync with \(configuration.server.url): \(error)")
                if !Task.isCancelled { announceConnectionError(Self.transportFailure(error, url: configuration.server.url)) }
            }
            connectingSince = nil
            connection = nil
            metrics.disconnected(reconnecting: !Task.isCancelled)
            for controller in controllers.values { await controller.connectionLost() }
            markStarted()  // offline is a started session too: applications can work
            if Task.isCancelled { return }
            let delay = connectionBackoff.next()
            logger.info("reconnecting in \(delay)")
            await wake.sleep(for: delay)
        }
    }

    /// Runs every partition's controller on `connection` until it closes.
    private func serve(_ connection: SyncConnection) async {
        self.connection = connection
        connectingSince = nil
        metrics.connected(at: Date())
        let connectedAt = ContinuousClock.now
        defer {
            // A connection that stayed up a while was healthy: the next failure starts a new series.
            if ContinuousClock.now - connectedAt > .seconds(30) { connectionBackoff.reset() }
        }
        logger.notice("connected to \(configuration.server.url)")
        reconnectRequested = false
        let (added, continuation) = AsyncStream.makeStream(of: PartitionController.self)
        additions = continuation
        let initial = Array(controllers.values)
        await withTaskGroup(of: Void.self) { group in
            for controller in initial {
                group.addTask { await controller.run(on: connection) }
            }
            group.addTask {
                // Keep-alive (a ping every 15 s) and liveness: ends the additions as soon as the
                // connection is gone, so that the reconnect backoff starts at once.
                await withTaskGroup(of: Void.self) { liveness in
                    liveness.addTask { await connection.waitUntilClosed() }
                    liveness.addTask {
                        while !Task.isCancelled {
                            do {
                                try await Task.sleep(for: .seconds(15))
                                try await connection.ping()
                            } catch { return }
                        }
                    }
                    await liveness.next()
                    liveness.cancelAll()
                }
                continuation.finish()
            }
            // What this device says of its partitions, for the server's device ledger.
            group.addTask { await self.reportLoop(connection) }
            self.markStarted()
            for await controller in added {
                group.addTask { await controller.run(on: connection) }
            }
            group.cancelAll()
        }
        additions = nil
        let closedByServer = !Task.isCancelled && !reconnectRequested
        await connection.close()
        // Once per connection: the connection-level error it ended with, or that it was cut.
        if let reason = await connection.closeReason {
            announceConnectionError(SyncErrorReport(reason, partition: "", store: ""))
        } else if closedByServer {
            announceConnectionError(SyncErrorReport(
                partition: "", store: "", code: nil, name: "connection_closed",
                message: "the server closed the connection without an error (a restart, a proxy, or a cut)", action: "transient"))
        }
        // A welcome with another protocol version arrives before any session may exist.
        if let violation = await connection.protocolViolation, violation.code == .wrongProtocolVersion {
            await connectionFailed(violation)
        }
    }

    /// Closes the connection (server settings changed) so the loop connects anew.
    func reconnect() async {
        reconnectRequested = true
        additions?.finish()
        await connection?.close()
        connectionWake.signal()
    }
}

extension SyncAgent {
    /// A sync error of the whole connection: an event, and the error hook of `[events]`.
    func announceConnectionError(_ report: SyncErrorReport) {
        events.syncError(report, settings: configuration.events)
    }

    /// A failed connection attempt as the error hook sees it: no code, action `transient`. A TLS
    /// failure and a pinned key that does not match are known by their type (`tls_failure`,
    /// `pin_mismatch`); the other kinds are still read from the failure's description with the
    /// server's URL taken out (a host name must not decide it); the WebSocket upgrade is looked
    /// at first (its refusal is no refused TCP connection).
    static func transportFailure(_ error: any Error, url: String) -> SyncErrorReport {
        let text = "\(error)"
        switch error {
        case SyncClientError.closed(let reason?):
            return SyncErrorReport(reason, partition: "", store: "")
        case SyncClientError.serverKeyNotPinned:
            return SyncErrorReport(partition: "", store: "", code: nil, name: "pin_mismatch", message: text, action: "transient")
        case SyncClientError.tlsFailure:
            return SyncErrorReport(partition: "", store: "", code: nil, name: "tls_failure", message: text, action: "transient")
        default: break
        }
        let lowered = text.replacingOccurrences(of: url, with: "").lowercased()
        let name =
            lowered.contains("upgrade") ? "upgrade_failed"
            : lowered.contains("connection refused") || lowered.contains("econnrefused") ? "connection_refused"
            : lowered.contains("timed out") || lowered.contains("timeout") || lowered.contains("deadline") ? "timeout"
            : lowered.contains("tls") || lowered.contains("certificate") || lowered.contains("handshake") ? "tls_failure"
            : lowered.contains("resolve") || lowered.contains("name or service") ? "name_resolution"
            : lowered.contains("refused") ? "connection_refused"
            : "unreachable"
        return SyncErrorReport(partition: "", store: "", code: nil, name: name, message: text, action: "transient")
    }
}

/// Step 4 of a reset over the agent's current connection: a bind as a new device, whose
/// state is received into the staging store.
struct AgentStateFetcher: ServerStateFetcher {
    let agent: SyncAgent

    func fetchState(of partition: PartitionName, into stagingPath: String) async throws -> FetchedState {
        guard let connection = await agent.connection else { throw AgentError.noConnection }
        let token = try await agent.readToken()
        // Its progress shows in the partition's status (`tetherctl status`, `wait-synced --progress`).
        let controller = await agent.controllers[partition]
        // A fresh lineage (this session uploads nothing) carries the ready-file request.
        let session = try await connection.bind(
            BindRequest(
                session: await agent.nextSessionID(), partition: partition.rawValue, token: token, identity: nil,
                lineage: StoreLineage(uploadSalt: StoreLineage.freshSalt(), integratedSeq: 0, lastSeq: 0, sent: []),
                readyFile: ReadyFileDownload(stagingPath: stagingPath).request()))
        do {
            let fetched = try await receive(session, partition: partition, stagingPath: stagingPath, controller: controller)
            await controller?.downloadEnded(complete: true)
            try? await session.unbind()
            return fetched
        } catch {
            await controller?.downloadEnded(complete: false)
            // Shown as the partition's last error too (the reset logs the failed phase).
            if let error = error as? DiskSpaceError { await controller?.downloadRefused(error) }
            if case SessionInterruption.serverError(let refusal) = error, refusal.action == .deleteStore {
                await controller?.stateRefused(refusal)
            }
            try? await session.unbind()
            throw error
        }
    }

    private func receive(
        _ session: SyncSession, partition: PartitionName, stagingPath: String, controller: PartitionController?
    ) async throws -> FetchedState {
        var events = session.events.makeAsyncIterator()
        guard let first = await events.next() else { throw SessionInterruption.disconnected(nil) }
        switch first {
        case .bound(let reply):
            let storePath = await controller?.settings.storePath
            return try await StateDownload.receive(
                reply: reply, events: &events, partition: partition, stagingPath: stagingPath, storePath: storePath,
                progress: { await controller?.downloadProgress($0) })
        case .error(let error): throw SessionInterruption.serverError(error)
        case .disconnected(let error): throw SessionInterruption.disconnected(error)
        default: throw SessionInterruption.unbound
        }
    }
}
