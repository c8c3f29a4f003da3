import Foundation
import Logging
import TetherControl
import TetherProtocol
import TetherStore

extension PartitionRegistry {
    /// `settings` (as configured) with the subscriptions in force: the set made at run time when
    /// there is one and the configured set is the one it was made over; otherwise the configured
    /// set, and a set made at run time over another configured set is forgotten (logged at
    /// notice). `moment` names what reads it (`start`, `reload`) for the log.
    func inForce(_ settings: PartitionSettings, at moment: String) -> PartitionSettings {
        let runtime: RuntimeSubscriptions?
        do {
            runtime = try stateDatabase.runtimeSubscriptions(of: settings.name)
        } catch {
            logger.error(
                "cannot read partition \(settings.name)'s subscriptions set at run time from the state database: \(error); the configured ones are in force",
                metadata: ["tether.partition": .string(settings.name.rawValue)])
            return settings
        }
        var result = settings
        switch RuntimeSubscriptions.inForce(configured: settings.subscriptions, runtime: runtime) {
        case .configured:
            break
        case .runtime(let set):
            result.subscriptions = set
        case .outdated(let old):
            logger.notice(
                "the configured subscriptions of \(settings.name) changed (digest \(SubscriptionSet.digestText(of: settings.subscriptions))) at this \(moment): the subscriptions set at run time (digest \(old.set.digestText)) are cleared, the configured ones are in force",
                metadata: ["tether.partition": .string(settings.name.rawValue)])
            do {
                try stateDatabase.setRuntimeSubscriptions(nil, of: settings.name)
            } catch {
                logger.error(
                    "cannot clear partition \(settings.name)'s subscriptions set at run time: \(error)",
                    metadata: ["tether.partition": .string(settings.name.rawValue)])
            }
        }
        return result
    }

    /// `set-subscriptions`: makes `set` the subscriptions `controller`'s partition wants (nil:
    /// clears the set made at run time, the configured one is in force again). Refused, with
    /// nothing changed, during a client reset or when the store's schema cannot serve `set`.
    /// Re-binds the partition as a reload that changed its subscriptions does.
    func changeSubscriptions(of controller: PartitionController, to set: SubscriptionSet?) async throws(SubscriptionChangeError) {
        let settings = await controller.settings
        let name = settings.name
        if let id = await controller.resetInProgress {
            throw .inReset(partition: name, resetID: id)
        }
        let active: ResetRecord?
        do { active = try stateDatabase.activeReset(partition: name) } catch { throw .stateDatabase(error) }
        if let active { throw .inReset(partition: name, resetID: active.id) }
        if let set, let schema = try await controller.storeSchema() {
            do {
                _ = try set.checked(against: schema)
            } catch {
                throw .notInSchema(error.description, schemaVersion: schema.version)
            }
        }
        let configured = await configuration().partition(named: name)?.subscriptions
        do {
            try stateDatabase.setRuntimeSubscriptions(
                set.map { RuntimeSubscriptions(set: $0, configured: configured, madeAt: Date().timeIntervalSince1970) }, of: name)
        } catch {
            throw .stateDatabase(error)
        }
        var next = settings
        next.subscriptions = set ?? configured
        logger.notice(
            set == nil
                ? "subscriptions of \(name) set at run time cleared by the operator: the configured ones (digest \(SubscriptionSet.digestText(of: configured))) are in force"
                : "subscriptions of \(name) set at run time by the operator (digest \(SubscriptionSet.digestText(of: set)), \(set?.subscriptions.count ?? 0) subscriptions)",
            metadata: ["tether.partition": .string(name.rawValue)])
        await controller.apply(next)
    }

    /// What `subscriptions` reports of `controller`'s partition: held, wanted and configured.
    func subscriptionsReport(of controller: PartitionController) async throws -> SubscriptionsReport {
        let name = await controller.settings.name
        let configured = await configuration().partition(named: name)?.subscriptions
        let runtime = try stateDatabase.runtimeSubscriptions(of: name) != nil
        return try await controller.subscriptionsReport(configured: configured, runtime: runtime)
    }

    /// The subscription set a `set-subscriptions` request asks for: nil for `clear`. Each
    /// subscription's table must be a legal name and its filter's syntax valid.
    static func requestedSet(_ request: ControlRequest) throws(SubscriptionChangeError) -> SubscriptionSet? {
        switch (request.clear ?? false, request.subscriptions) {
        case (true, nil):
            return nil
        case (true, .some):
            throw .badRequest("set-subscriptions takes subscriptions or clear, not both")
        case (false, nil):
            throw .badRequest("set-subscriptions needs subscriptions, or clear")
        case (false, .some(let list)):
            guard !list.isEmpty else {
                throw .badRequest("an empty list of subscriptions would hold no rows; clear goes back to the configured ones")
            }
            var subscriptions: [Subscription] = []
            for entry in list {
                if let reason = Schema.identifierProblem(entry.table) {
                    throw .invalid("subscription to \(entry.table): \(reason): not a table name")
                }
                let subscription = Subscription(table: entry.table, filter: entry.filter)
                do {
                    try subscription.checkSyntax()
                } catch {
                    // The error's description names the byte of the filter it is at.
                    throw .invalid("the filter of the subscription to \(entry.table) is not valid: \(error)")
                }
                subscriptions.append(subscription)
            }
            do {
                return try SubscriptionSet(subscriptions)
            } catch {
                throw .invalid(error.description)
            }
        }
    }
}
