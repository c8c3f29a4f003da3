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

    /// Resolves the sets a bind names for `subject` against `schema`, each narrowed by what the
    /// grants impose (``imposedSubscriptions(for:partition:snapshot:)``, nil: nothing): the
    /// wanted set with the device's parameters, the time now and today's imposition; the held
    /// set (a bound store's, or the whole partition) with the values and the imposition it was
    /// given, as recorded for `clientFile` (``AppliedScopes``). A set that cannot be resolved is
    /// refused with 227 (`bad_query`), naming the subscription and why.
    func bindScopes(
        _ request: SubscriptionRequest, imposed: SubscriptionSet?, subject: AccessSubject, schema: Schema, clientFile: Int64?
    ) async throws -> Result<BindScopes, SyncError> {
        let parameters = subject.filterParameters
        let at = now().timeIntervalSince1970
        let wanted: SubscriptionScope
        do {
            wanted = try SubscriptionScope(resolving: request.wanted, schema: schema, parameters: parameters, now: at)
        } catch {
            return .failure(Self.badQuery(error))
        }
        let imposedScope: SubscriptionScope
        do {
            imposedScope = try SubscriptionScope(imposing: imposed, schema: schema, parameters: parameters, now: at)
        } catch {
            return .failure(Self.badImposition(error))
        }
        let effective = wanted.narrowed(by: imposedScope, schema: schema)
        let applied = AppliedScope(set: request.wanted, imposed: imposed, parameters: parameters, now: at)
        guard let clientFile else {
            // A store taking the whole partition under no imposition has nothing to record.
            let record = request.wanted != nil || imposed != nil
            return .success(BindScopes(wanted: effective, change: nil, applied: record ? applied : nil, initial: true))
        }
        // The values the store's rows were chosen with, named by the token its last change gave
        // it (0: its state's); a store whose record is gone (a server restored from before it)
        // or names another set is taken at today's values and under no imposition (so that rows
        // a grant does not allow leave it).
        let recorded = try await storage.integration.appliedScopes(of: clientFile)?.scope(token: request.heldToken)
            .flatMap { $0.set == request.held ? $0 : nil }
        if recorded == nil, let heldSet = request.held {
            logger.info("a store's subscriptions are resolved at today's values: the server has no record of the ones it holds", metadata: [
                "client_file": "\(clientFile)", "set": "\(heldSet.digestText)",
            ])
        }
        let held: SubscriptionScope
        do {
            held = try SubscriptionScope(
                resolving: request.held, schema: schema, parameters: recorded?.parameters ?? parameters, now: recorded?.now ?? at)
        } catch {
            return .failure(Self.badQuery(error, held: true))
        }
        let heldImposed: SubscriptionScope
        do {
            heldImposed = try SubscriptionScope(
                imposing: recorded?.imposed, schema: schema, parameters: recorded?.parameters ?? parameters, now: recorded?.now ?? at)
        } catch {
            return .failure(Self.badImposition(error))
        }
        let heldEffective = held.narrowed(by: heldImposed, schema: schema)
        let change = heldEffective == effective
            ? nil : SubscriptionChange(held: heldEffective, digest: SubscriptionSet.digest(of: request.wanted), token: applied.token)
        return .success(BindScopes(wanted: effective, change: change, applied: change == nil ? nil : applied))
    }

    static func badQuery(_ error: SubscriptionSetError, held: Bool = false) -> SyncError {
        let which = held ? "the subscriptions this store holds" : "a subscription"
        return SyncError(
            .badQuery, "\(which) cannot be served: \(error)",
            hint: "fix the partition's [[partition.subscription]] (or the device's tags on the server) and reload the agent; nothing was applied")
    }
}
