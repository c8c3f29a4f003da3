import Synchronization
import TetherProtocol

/// Identifies one session on one connection.
package struct SessionKey: Sendable, Hashable, CustomStringConvertible {
    package var connection: UInt64
    package var session: SessionID
    package init(connection: UInt64, session: SessionID) {
        self.connection = connection
        self.session = session
    }
    package var description: String { "connection \(connection) session \(session)" }
}

/// A bound session as the rest of the server sees it.
package struct BoundSession: Sendable {
    package var key: SessionKey
    package var partition: PartitionName
    package var clientFile: Int64
    package var user: String
    /// Whom the session's token named: `.user(user)`, or the enrolled device it is.
    package var subject: AccessSubject
    package var tokenDigest: TokenDigest
    package var access: PartitionAccess
    /// The partition's epoch when the session bound (``ServerStorage/epoch(of:)``).
    package var epoch: Int64
    /// The salt the session's uploads are integrated under (``StoreLineage``; 0 for an agent
    /// older than protocol 3).
    package var uploadSalt: Int64
    /// Ends the session with a session-level error (pushed to the device).
    package var fail: @Sendable (SyncError) async -> Void
    /// What the session may hold and write (its subscriptions narrowed by what its grants
    /// impose; ``SubscriptionScope/whole`` for a session without either).
    package var scope: SubscriptionScope = .whole
    /// What its grants imposed when it bound (`[[grant.subscription]]`; nil: nothing): a reload
    /// that changes it makes the session bind again (``BindRules/revalidate(_:against:)``).
    package var imposed: SubscriptionSet?
    /// Its grants' write rules (``WriteRules``), checked with ``scope`` on its uploads.
    package var writeRules: WriteRules = .none
    /// What its uploads and heal views may write: ``scope`` and ``writeRules``.
    package var writeScope: WriteScope { WriteScope(read: scope, rules: writeRules) }
    /// When the store holds another scope than ``scope``: the change its downloads start with.
    package var subscriptionChange: SubscriptionChange?
    /// Whether its connection speaks protocol 9 (``TetherVersion/subscriptions``): only then is it
    /// sent `compensating-writes` (an older agent gets the reverts alone).
    package var hearsCompensatingWrites = true

    package init(
        key: SessionKey, partition: PartitionName, clientFile: Int64, user: String, tokenDigest: TokenDigest,
        access: PartitionAccess, epoch: Int64 = 0, uploadSalt: Int64 = 0, subject: AccessSubject? = nil,
        fail: @escaping @Sendable (SyncError) async -> Void
    ) {
        self.subject = subject ?? .user(user)
        self.epoch = epoch
        self.uploadSalt = uploadSalt
        self.key = key
        self.partition = partition
        self.clientFile = clientFile
        self.user = user
        self.tokenDigest = tokenDigest
        self.access = access
        self.fail = fail
    }
}

/// The server's live sessions: which client files are bound where (108), who to wake when
/// a partition gets a new version, and whom to notify when grants, flags or history change.
package actor SyncHub {
    private struct ClientFileKey: Hashable {
        var partition: PartitionName
        var id: Int64
    }

    private var sessions: [SessionKey: BoundSession] = [:]
    private var owners: [ClientFileKey: SessionKey] = [:]
    /// The client files each session holds (``owners`` the other way round): a release looks
    /// its own up instead of scanning every owner — a scan (and the copy of the dictionary its
    /// removals made) per release cost a 5,000-device storm's teardown O(n²).
    private var ownedFiles: [SessionKey: [ClientFileKey]] = [:]
    private var listeners: [PartitionName: [SessionKey: DownloadWakeup]] = [:]
    private var connections: [UInt64: ServerConnection] = [:]
    private let nextConnection = Atomic<UInt64>(1)
    /// Where each device's remote actions go: its id → the connections whose accepted reports
    /// speak for it (protocol 8), and back, so that delivering a device's actions costs a
    /// lookup, not a visit to every connection.
    private var actionConnections: [String: [UInt64: DeviceKey]] = [:]
    private var actionDevices: [UInt64: DeviceKey] = [:]

    package init() {}

    /// The id of a new connection (taken on its event loop, before the connection reaches the hub).
    nonisolated func newConnectionID() -> UInt64 {
        nextConnection.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Keeps a new connection until ``closeConnection(_:)``, for what reaches a connection
    /// rather than a session (a credential hand-over, remote actions).
    func adopt(_ connection: ServerConnection) {
        connections[connection.id] = connection
    }

    /// The connection with this id, while it is open.
    func connection(_ id: UInt64) -> ServerConnection? { connections[id] }

    package func closeConnection(_ id: UInt64) {
        connections[id] = nil
        speaks(for: nil, connection: id)
    }

    /// Records that the connection `id` now speaks for `device` (nil: for none), where that
    /// device's remote actions go.
    func speaks(for device: DeviceKey?, connection id: UInt64) {
        if let old = actionDevices.removeValue(forKey: id) {
            actionConnections[old.deviceID]?[id] = nil
            if actionConnections[old.deviceID]?.isEmpty == true { actionConnections[old.deviceID] = nil }
        }
        guard let device, connections[id] != nil else { return }
        actionDevices[id] = device
        actionConnections[device.deviceID, default: [:]][id] = device
    }

    /// The open connections that speak for the devices with these ids, by device, each
    /// device's in the order they opened.
    func actionConnections(forDeviceIDs deviceIDs: some Sequence<String>) -> [DeviceKey: [ServerConnection]] {
        var found: [DeviceKey: [ServerConnection]] = [:]
        for deviceID in Set(deviceIDs) {
            for (id, key) in (actionConnections[deviceID] ?? [:]).sorted(by: { $0.key < $1.key }) {
                if let connection = connections[id] { found[key, default: []].append(connection) }
            }
        }
        return found
    }

    /// How many devices have a connection here their remote actions go to.
    var actionDeviceCount: Int { actionConnections.count }

    /// Reserves a client file for a session; false when another session holds it (108).
    package func reserve(_ clientFile: Int64, of partition: PartitionName, for key: SessionKey) -> Bool {
        let fileKey = ClientFileKey(partition: partition, id: clientFile)
        if let owner = owners[fileKey] { return owner == key }
        owners[fileKey] = key
        ownedFiles[key, default: []].append(fileKey)
        return true
    }

    /// Records an accepted bind and returns what wakes its downloads (woken once at once, then
    /// whenever the partition gets a new version).
    package func register(_ session: BoundSession) -> DownloadWakeup {
        sessions[session.key] = session
        let wakeup = DownloadWakeup()
        listeners[session.partition, default: [:]][session.key] = wakeup
        return wakeup
    }

    /// Ends a session's registration: frees its client file and stops its downloads. Returns
    /// the client files it freed.
    @discardableResult
    package func release(_ key: SessionKey) -> [Int64] {
        var freed: [Int64] = []
        for fileKey in ownedFiles.removeValue(forKey: key) ?? [] where owners[fileKey] == key {
            owners[fileKey] = nil
            freed.append(fileKey.id)
        }
        guard let session = sessions.removeValue(forKey: key) else { return freed }
        listeners[session.partition]?.removeValue(forKey: key)?.finish()
        if listeners[session.partition]?.isEmpty == true { listeners[session.partition] = nil }
        return freed
    }

    /// Wakes every session of the partition (a new version was committed).
    package func publish(_ partition: PartitionName) {
        for wakeup in listeners[partition, default: [:]].values { wakeup.wake() }
    }

    package func bound(where predicate: (BoundSession) -> Bool = { _ in true }) -> [BoundSession] {
        sessions.values.filter(predicate).sorted { ($0.key.connection, $0.key.session) < ($1.key.connection, $1.key.session) }
    }

    package var connectionCount: Int { connections.count }

    package func sessionCounts() -> [PartitionName: Int] {
        sessions.values.reduce(into: [:]) { $0[$1.partition, default: 0] += 1 }
    }
}
