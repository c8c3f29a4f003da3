import TetherControl
import TetherProtocol
import TetherStore

extension PartitionController {
    /// `tetherctl subscriptions`: the set the store records (read from the open store, or from
    /// the file when none is open), the set wanted, and the set configured (`configured`;
    /// `runtime`: the wanted set was made at run time).
    func subscriptionsReport(configured: SubscriptionSet?, runtime: Bool) async throws -> SubscriptionsReport {
        let (hasStore, held) = try await heldSubscriptions()
        let wanted = settings.subscriptions
        return SubscriptionsReport(
            partition: settings.name.rawValue, hasStore: hasStore, held: held.map { $0.subscriptions.map(\.description) },
            heldDigest: SubscriptionSet.digestText(of: held), wanted: wanted.map { $0.subscriptions.map(\.description) },
            wantedDigest: SubscriptionSet.digestText(of: wanted), changePending: hasStore && held != wanted, runtime: runtime,
            configured: configured.map { $0.subscriptions.map(\.description) }, configuredDigest: SubscriptionSet.digestText(of: configured))
    }

    /// Whether the partition has a store, and the set it records (nil: the whole partition).
    private func heldSubscriptions() async throws -> (hasStore: Bool, held: SubscriptionSet?) {
        if let store { return (true, try await store.heldSubscriptions()) }
        if let metadata = try PartitionStore.metadata(ofStoreAt: settings.storePath) { return (true, metadata.subscriptions) }
        return (false, nil)
    }

    /// New settings whose subscriptions may have changed (a reload, `set-subscriptions`):
    /// ``update(_:)``; when they changed and the store holds another set, the change is pending
    /// at once, so that `wait-synced` waits for the bind that makes it (not for the one before).
    func apply(_ next: PartitionSettings) async {
        let changed = next.subscriptions != settings.subscriptions
        update(next)
        guard changed, let (hasStore, held) = try? await heldSubscriptions(), hasStore, held != next.subscriptions else { return }
        subscriptionsPending(true)
    }

    /// The id of the client reset that holds the partition now (pending or under way), if any.
    var resetInProgress: String? {
        switch machine.phase {
        case .resetPending(let pending), .resetting(let pending): pending.id
        case .paused(let pending): pending?.id
        case .starting, .connecting, .bootstrapping, .syncing, .offline, .resetFinished, .stopped, .removed: nil
        }
    }

    /// The schema of the partition's store (nil: no store yet; it takes the server's).
    func storeSchema() throws(SubscriptionChangeError) -> Schema? {
        if let store { return store.schema }
        do {
            return try PartitionStore.recordedSchema(path: settings.storePath)
        } catch {
            throw .storeUnreadable("\(error)")
        }
    }
}
