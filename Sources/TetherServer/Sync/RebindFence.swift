import TetherProtocol

/// How bound sessions learn that what they bound to changed under them and they must bind
/// again (201, retry at once): a restore, terminate-sync or a schema change, run here or by
/// another instance sharing the storage. Two paths reach a session, and both end here:
/// the instance that knows pushes the error to the sessions it holds (``rebind(where:because:)``),
/// and the storage refuses an upload or history read of a session bound before the partition's
/// epoch changed (``StorageError/fenced``, ``fenced(_:)``), which covers a session another
/// instance has not heard about yet and a bind that raced the change.
///
/// The ``SyncService`` makes one over its hub (uploads and downloads meet the storage's
/// fence); the admin API's control uses the service's (admin commands and cluster events push
/// the rebind), so Sync never reaches into Admin and both reach the same sessions.
package struct RebindFence: Sendable {
    /// The sessions it reaches.
    package let hub: SyncHub

    package init(hub: SyncHub) {
        self.hub = hub
    }

    /// The error of a session the storage fenced by its partition's epoch: another instance
    /// restored the partition or terminated sync since the session bound.
    package func fenced(_ what: String) -> SyncError {
        BindRules.rebind("\(what) was restored, or sync was terminated, since this session bound")
    }

    /// Tells every bound session `predicate` selects to bind again, because of `reason`;
    /// returns how many were told.
    package func rebind(where predicate: @Sendable (BoundSession) -> Bool, because reason: String) async -> Int {
        let sessions = await hub.bound(where: predicate)
        await push(sessions.map { ($0, BindRules.rebind(reason)) })
        return sessions.count
    }

    /// Pushes each error to its session, concurrently, so one slow connection does not delay the rest.
    package func push(_ failures: [(BoundSession, SyncError)]) async {
        await withDiscardingTaskGroup { group in
            for (session, error) in failures {
                group.addTask { await session.fail(error) }
            }
        }
    }
}
