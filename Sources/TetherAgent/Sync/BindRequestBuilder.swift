import Logging
import TetherProtocol
import TetherStore

/// What a bind asks the server, from the store as it is: its identity and server version, its
/// schema version, its lineage with a fresh upload salt for the session, and its subscriptions
/// (protocol 9: the set the store holds — nil for a new store, and for one that records none,
/// the whole partition — and the set configured). A store that cannot be read ends the session
/// before the bind: damaged, or retried.
struct BindRequestBuilder: Sendable {
    enum Outcome: Sendable {
        case request(BindRequest, uploadSalt: Int64)
        /// The store could not be read: the session ends so, without a bind.
        case ended(PartitionStateMachine.SessionEnd)
    }

    let settings: PartitionSettings
    let context: any AgentContext
    let log: Logger

    /// The bind request for `store` (nil: none yet, a new device) with `token`.
    func request(for store: PartitionStore?, token: String) async -> Outcome {
        // The store's identity decides whether the server sees a known store or a new device:
        // a failed read must not bind it as a new one.
        let metadata: StoreMetadata?
        do {
            metadata = try await store?.metadata()
        } catch let error where error.isCorruption {
            return .ended(.storeDamaged(error))
        } catch {
            log.error("cannot read the sync identity of the store \(settings.storePath), retrying: \(error)")
            return .ended(.retry(nil))
        }
        // A new salt for this session's uploads; the store's lineage lets the server tell an
        // older image or a copy of the store from a store that missed an acknowledgement.
        let uploadSalt = StoreLineage.freshSalt()
        let lineage: StoreLineage
        do {
            lineage = try await store?.lineage(uploadSalt: uploadSalt)
                ?? StoreLineage(uploadSalt: uploadSalt, integratedSeq: 0, lastSeq: 0, sent: [])
        } catch let error where error.isCorruption {
            return .ended(.storeDamaged(error))
        } catch {
            log.error("cannot read the upload records of the store \(settings.storePath), retrying: \(error)")
            return .ended(.retry(nil))
        }
        // Without an identity the state follows, of the wanted set: as a ready file when the
        // server has one (a download cut earlier resumes where it stopped) and the partition is
        // wanted whole (a ready file is the whole partition).
        let wanted = settings.subscriptions
        let held = metadata?.clientFile == nil ? nil : metadata?.subscriptions
        let readyFile = metadata?.clientFile == nil && wanted == nil
            ? ReadyFileDownload(stagingPath: StoreBootstrap.stagingPath(stateDir: await context.configuration().stateDir, partition: settings.name))
                .request()
            : nil
        let request = BindRequest(
            session: await context.nextSessionID(), partition: settings.name.rawValue, token: token,
            identity: metadata?.clientFile, lastServerVersion: metadata?.serverVersion ?? .zero,
            schemaVersion: store?.schema.version ?? 0, lineage: lineage, readyFile: readyFile,
            subscriptions: SubscriptionRequest(
                held: held, heldToken: metadata?.clientFile == nil ? 0 : metadata?.subscriptionToken ?? 0, wanted: wanted))
        return .request(request, uploadSalt: uploadSalt)
    }
}
