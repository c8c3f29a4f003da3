import Foundation
import Logging
import TetherProtocol

extension SyncService {
    /// The write rules of the grants that let `subject` write `partition` (``WriteRules``),
    /// resolved for it against `schema`: per table, one alternative per effective readwrite grant
    /// of the config file with a rule for it; a table some effective readwrite grant has no rule
    /// for (a grant made at run time never has one) is unrestricted. A rule that cannot be
    /// resolved for the device (an unknown column, a tag it lacks) refuses every write to its
    /// table through that grant, and is logged.
    func writeRules(for subject: AccessSubject, partition: PartitionName, snapshot: PolicySnapshot, now at: Double) -> WriteRules {
        let parameters = subject.filterParameters
        let schema = snapshot.schemas.current
        let overridden = Set(snapshot.runtimeGrants.map { AccessPolicy.Key(user: $0.user, pattern: $0.pattern) })
        var perGrant: [[String: WriteRules.Rule]] = []
        for (key, access) in snapshot.access.grants where access == .readwrite && key.subject?.covers(subject) == true {
            guard case .pattern(let pattern) = key.pattern.expanded(for: subject), pattern.matches(partition.rawValue) else { continue }
            let rules = overridden.contains(key) ? [] : snapshot.configuredGrants
                .filter { $0.user == key.user && $0.access == .readwrite && $0.patterns.contains(key.pattern) }
                .flatMap(\.writeRules)
            var byTable: [String: WriteRules.Rule] = [:]
            for rule in rules { byTable[rule.table] = resolve(rule, schema: schema, parameters: parameters, now: at, partition: partition) }
            perGrant.append(byTable)
        }
        guard !perGrant.isEmpty else { return .none }
        // A table is restricted only when every readwrite grant has a rule for it.
        let restricted = perGrant.dropFirst().reduce(Set(perGrant[0].keys)) { $0.intersection($1.keys) }
        var tables: [String: [WriteRules.Rule]] = [:]
        var primaryKeys: [String: String] = [:]
        for table in restricted {
            tables[table] = perGrant.compactMap { $0[table] }
            primaryKeys[table] = schema.table(table)?.primaryKey
        }
        return WriteRules(tables: tables, primaryKeys: primaryKeys)
    }

    private func resolve(
        _ rule: ServerConfiguration.WriteRule, schema: Schema, parameters: FilterParameters, now: Double, partition: PartitionName
    ) -> WriteRules.Rule {
        do {
            guard let table = schema.table(rule.table) else {
                throw SubscriptionSetError(.unknownTable("the schema has no table \(rule.table)"), subscription: nil)
            }
            for column in rule.readOnly where table.column(column) == nil {
                throw SubscriptionSetError(.unknownTable("table \(rule.table) has no column \(column)"), subscription: nil)
            }
            var filter: ResolvedFilter? = nil
            if let text = rule.filter {
                do {
                    filter = try SubscriptionFilter(text, table: table).resolved(with: parameters, now: now, schema: table)
                } catch {
                    throw SubscriptionSetError(.filter(error), subscription: nil)
                }
            }
            return WriteRules.Rule(filter: filter, readOnly: Set(rule.readOnly))
        } catch {
            logger.warning("a grant's write rule cannot be resolved for this device: its writes to the table are refused", metadata: [
                "partition": "\(partition)", "table": "\(rule.table)", "device": "\(parameters.name)", "error": "\(error)",
            ])
            return WriteRules.Rule(filter: nil, refuseAll: true)
        }
    }
}
