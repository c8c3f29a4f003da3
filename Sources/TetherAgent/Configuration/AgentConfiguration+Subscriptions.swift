import TetherProtocol
import TetherStore

extension AgentConfiguration {
    /// `tetherd --check-config`'s check of the subscriptions against the stores that exist: each
    /// subscription of a partition whose store file is there is checked against the schema the
    /// store records (its table, its filter's columns and types). A store that is absent is not
    /// checked (it takes the server's schema when it bootstraps); one that cannot be read is
    /// named in `skipped`. The device parameters a filter names (`{tag:…}`, `{device:…}`) are
    /// the server's to resolve and are not checked here.
    package func subscriptionProblems() -> (problems: [String], skipped: [String]) {
        var problems: [String] = []
        var skipped: [String] = []
        for partition in partitions {
            guard let set = partition.subscriptions else { continue }
            let schema: Schema?
            do {
                schema = try PartitionStore.recordedSchema(path: partition.storePath)
            } catch {
                skipped.append("partition \(partition.name): the store \(partition.storePath) cannot be read, its subscriptions were not checked against it: \(error)")
                continue
            }
            guard let schema else { continue }
            for subscription in set.subscriptions {
                do {
                    _ = try subscription.checked(against: schema)
                } catch {
                    problems.append("partition \(partition.name): subscription \(subscription): \(error.reason.text) (store \(partition.storePath), schema version \(schema.version))")
                }
            }
        }
        return (problems, skipped)
    }
}

extension SubscriptionSetError.Reason {
    /// The reason without the subscription (the caller names it).
    fileprivate var text: String {
        switch self {
        case .unknownTable(let message), .tooMany(let message): message
        case .filter(let error): error.description
        }
    }
}
