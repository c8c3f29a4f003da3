import TetherControl
import TetherProtocol
import TetherStore

extension PartitionController {
    /// `tetherctl subscriptions`: the set the store records (read from the open store, or from
    /// the file when none is open) and the set configured.
    func subscriptionsReport() async throws -> SubscriptionsReport {
        let held: SubscriptionSet?
        let hasStore: Bool
        if let store {
            held = try await store.heldSubscriptions()
            hasStore = true
        } else if let metadata = try PartitionStore.metadata(ofStoreAt: settings.storePath) {
            held = metadata.subscriptions
            hasStore = true
        } else {
            held = nil
            hasStore = false
        }
        let wanted = settings.subscriptions
        return SubscriptionsReport(
            partition: settings.name.rawValue, hasStore: hasStore, held: held.map { $0.subscriptions.map(\.description) },
            heldDigest: SubscriptionSet.digestText(of: held), wanted: wanted.map { $0.subscriptions.map(\.description) },
            wantedDigest: SubscriptionSet.digestText(of: wanted), changePending: hasStore && held != wanted)
    }
}
