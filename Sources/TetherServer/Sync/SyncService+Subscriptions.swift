import Foundation
import Logging
import TetherProtocol

extension SyncService {
    /// What a bind's subscriptions come to: the scope the session wants, the change its store
    /// needs first (nil: none), and the scope to record for the store (nil: the whole partition,
    /// or nothing new) — `initial` for a new store's state, else a change's.
    struct BindScopes: Sendable {
        var wanted: SubscriptionScope
        var change: SubscriptionChange?
        var applied: AppliedScope?
        var initial = false
    }

    /// Resolves the sets a bind names for `subject` against `schema`: the wanted set with the
    /// device's parameters and the time now; the held set (a bound store's) with the values it
    /// was given, as recorded for `clientFile` (``AppliedScopes``). A set that cannot be
    /// resolved is refused with 227 (`bad_query`), naming the subscription and why.
    func bindScopes(
        _ request: SubscriptionRequest, subject: AccessSubject, schema: Schema, clientFile: Int64?
    ) async throws -> Result<BindScopes, SyncError> {
        let parameters = subject.filterParameters
        let at = now().timeIntervalSince1970
        let wanted: SubscriptionScope
        do {
            wanted = try SubscriptionScope(resolving: request.wanted, schema: schema, parameters: parameters, now: at)
        } catch {
            return .failure(Self.badQuery(error))
        }
        let applied = request.wanted.map { AppliedScope(set: $0, parameters: parameters, now: at) }
        guard let clientFile else { return .success(BindScopes(wanted: wanted, change: nil, applied: applied, initial: true)) }
        let held: SubscriptionScope
        if let heldSet = request.held {
            // The values the store's rows were chosen with, named by the token its last change
            // gave it (0: its state's); a store whose record is gone (a server restored from
            // before it) or names another set is taken at today's values.
            let recorded = try await storage.integration.appliedScopes(of: clientFile)?.scope(token: request.heldToken)
                .flatMap { $0.set == heldSet ? $0 : nil }
            if recorded == nil {
                logger.info("a store's subscriptions are resolved at today's values: the server has no record of the ones it holds", metadata: [
                    "client_file": "\(clientFile)", "set": "\(heldSet.digestText)",
                ])
            }
            do {
                held = try SubscriptionScope(
                    resolving: heldSet, schema: schema, parameters: recorded?.parameters ?? parameters, now: recorded?.now ?? at)
            } catch {
                return .failure(Self.badQuery(error, held: true))
            }
        } else {
            held = .whole
        }
        let change = held == wanted ? nil : SubscriptionChange(held: held, digest: request.wanted?.digest ?? 0, token: applied?.token ?? 0)
        return .success(BindScopes(wanted: wanted, change: change, applied: change == nil ? nil : applied))
    }

    static func badQuery(_ error: SubscriptionSetError, held: Bool = false) -> SyncError {
        let which = held ? "the subscriptions this store holds" : "a subscription"
        return SyncError(
            .badQuery, "\(which) cannot be served: \(error)",
            hint: "fix the partition's [[partition.subscription]] (or the device's tags on the server) and reload the agent; nothing was applied")
    }
}
