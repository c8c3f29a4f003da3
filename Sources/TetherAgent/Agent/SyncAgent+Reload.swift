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
    public func reload() async {
        notifier.reloading()
        defer { notifier.ready() }
        let path = configuration.file.isEmpty ? AgentConfiguration.defaultPath : configuration.file
        let next: AgentConfiguration
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
        let old = configuration
        configuration = next
        configuration.file = path
        events.configure(serverURL: next.server.url, workingDirectory: next.stateDir)
        for settings in old.partitions {
            let kept = next.partition(named: settings.name)
            if kept == nil || kept?.storePath != settings.storePath, let controller = controllers.removeValue(forKey: settings.name) {
                await controller.remove()
                logger.notice("partition \(settings.name) removed", metadata: ["tether.partition": .string(settings.name.rawValue)])
            }
        }
        for settings in next.partitions {
            if let controller = controllers[settings.name] {
                await controller.update(settings)
            } else {
                let controller = makeController(settings)
                controllers[settings.name] = controller
                additions?.yield(controller)
                logger.notice("partition \(settings.name) added", metadata: ["tether.partition": .string(settings.name.rawValue)])
            }
        }
        let serverChanged = old.server != next.server
        if serverChanged || connectionStopped != nil {
            connectionStopped = nil
            await reconnect()
        }
        logger.notice("configuration reloaded from \(path): \(next.partitions.count) partitions, log level \(next.logLevel.rawValue)")
        events.emit(AgentEvent(.reload, message: "\(next.partitions.count) partitions from \(path)", outcome: "applied"))
        statusSignal.yield()
    }
}
