import Logging
import ServiceLifecycle
import TetherSystemd
import UnixSignals

/// The agent as a swift-service-lifecycle service: runs the sync, reloads on SIGHUP, and on
/// graceful shutdown (SIGTERM) tells systemd `STOPPING=1` and stops after the current
/// transaction (store writes are not interrupted: cancellation is only seen between them).
package struct AgentService: Service {
    let agent: SyncAgent
    let notifier: SystemdNotifier

    package init(agent: SyncAgent, notifier: SystemdNotifier = SystemdNotifier()) {
        self.agent = agent
        self.notifier = notifier
    }

    package func run() async throws {
        let agent = self.agent
        let notifier = self.notifier
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await agent.run() }
                    group.addTask {
                        for await _ in await UnixSignalsSequence(trapping: .sighup) {
                            await agent.reload()
                        }
                    }
                    await group.next()
                    group.cancelAll()
                }
            }
        } onGracefulShutdown: {
            notifier.stopping()
            agent.logger.notice("stopping: SIGTERM received")
        }
    }
}
