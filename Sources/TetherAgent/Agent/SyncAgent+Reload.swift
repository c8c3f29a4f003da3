import Foundation
import Logging
import TetherControl
import TetherProtocol
import TetherSystemd
import TetherTOML

extension SyncAgent {
    /// SIGHUP: re-reads the configuration. Partitions added or removed, log level, hooks and
    /// modes change without dropping unchanged partitions' sessions; an invalid file is
    /// logged and the running configuration kept.
    package func reload() async {
        notifier.reloading()
        defer { notifier.ready() }
        let running = await partitions.configuration()
        let path = running.file.isEmpty ? AgentConfiguration.defaultPath : running.file
        var next: AgentConfiguration
        do {
            next = try AgentConfiguration.load(path: path)
        } catch {
            for problem in error.problems { logger.error("reload refused, the running configuration is kept: \(problem)") }
            events.emit(AgentEvent(
                .reload, message: error.problems.map { "\($0)" }.joined(separator: "; ") + "; the running configuration is kept",
                outcome: "refused"))
            return
        }
        TetherLogging.level = next.logLevel
        next.file = path
        events.configure(serverURL: next.server.url, workingDirectory: next.stateDir)
        let old = await partitions.reload(next)
        await connection.reloaded(serverChanged: old.server != next.server)
        logger.notice("configuration reloaded from \(path): \(next.partitions.count) partitions, log level \(next.logLevel.rawValue)")
        events.emit(AgentEvent(.reload, message: "\(next.partitions.count) partitions from \(path)", outcome: "applied"))
        statusSignal.yield()
    }
}
