/// The admin HTTP API's JSON bodies (docs/server.md, "Admin API"), shared by the server's
/// routes and ``AdminClient``. Keys are snake_case on the wire.
public enum AdminAPI {
    public struct Status: Codable, Sendable, Hashable {
        public var server: Server
        public var partitions: [Partition]

        public struct Server: Codable, Sendable, Hashable {
            public var release: String
            public var syncProtocol: Int
            public var syncTerminated: Bool
            public var clientRecovery: Bool
            public var schemaVersion: Int
            public var connections: Int
            public var sessions: Int
            enum CodingKeys: String, CodingKey {
                case release, connections, sessions
                case syncProtocol = "sync_protocol"
                case syncTerminated = "sync_terminated"
                case clientRecovery = "client_recovery"
                case schemaVersion = "schema_version"
            }
        }

        public struct Partition: Codable, Sendable, Hashable {
            public var name: String
            public var serverVersion: Int64
            public var compactedThrough: Int64
            public var historyEntries: Int
            public var historyBytes: Int64
            public var rows: Int
            public var clientFiles: Int
            public var connectedClients: Int
            /// The window the partition's last restore lost and how far devices gave it back;
            /// nil when it was never restored (since healing exists).
            public var heal: HealRecord?
            enum CodingKeys: String, CodingKey {
                case name, rows, heal
                case serverVersion = "server_version"
                case compactedThrough = "compacted_through"
                case historyEntries = "history_entries"
                case historyBytes = "history_bytes"
                case clientFiles = "client_files"
                case connectedClients = "connected_clients"
            }
        }
    }

    public struct Snapshot: Codable, Sendable, Hashable {
        public var partition: String
        public var snapshot: String
        public var serverVersion: Int64
        enum CodingKeys: String, CodingKey {
            case partition, snapshot
            case serverVersion = "server_version"
        }
    }

    public struct RestoreRequest: Codable, Sendable, Hashable {
        public var snapshot: String
        /// `heal` or `rollback`; absent: the server's `[history] devices_ahead`.
        public var mode: RestoreMode?
    }

    public struct Restored: Codable, Sendable, Hashable {
        public var partition: String
        public var snapshot: String
        public var serverVersion: Int64
        public var sessionsNotified: Int
        /// How the lost window is handled.
        public var mode: RestoreMode
        /// The window the restore dropped (nil when it dropped nothing).
        public var heal: HealRecord?
        enum CodingKeys: String, CodingKey {
            case partition, snapshot, mode, heal
            case serverVersion = "server_version"
            case sessionsNotified = "sessions_notified"
        }
    }

    public struct SyncState: Codable, Sendable, Hashable {
        public var syncTerminated: Bool
        public var clientFilesForgotten: Int
        public var sessionsNotified: Int
        enum CodingKeys: String, CodingKey {
            case syncTerminated = "sync_terminated"
            case clientFilesForgotten = "client_files_forgotten"
            case sessionsNotified = "sessions_notified"
        }
    }

    public struct Recovery: Codable, Sendable, Hashable {
        public var enabled: Bool
    }

    public struct SchemaApplyRequest: Codable, Sendable, Hashable {
        /// The new `schema.toml`'s text, and its name for error messages.
        public var schemaToml: String
        public var file: String
        public var allowBreaking: Bool
        enum CodingKeys: String, CodingKey {
            case file
            case schemaToml = "schema_toml"
            case allowBreaking = "allow_breaking"
        }
    }

    public struct SchemaApplied: Codable, Sendable, Hashable {
        public var applied: Bool
        public var breaking: Bool
        public var version: Int
        public var previousVersion: Int
        public var differences: [String]
        public var sessionsNotified: Int
        enum CodingKeys: String, CodingKey {
            case applied, breaking, version, differences
            case previousVersion = "previous_version"
            case sessionsNotified = "sessions_notified"
        }
    }

    public struct GrantRequest: Codable, Sendable, Hashable {
        public var user: String
        public var pattern: String
        /// `read` or `readwrite`; absent for a revoke.
        public var access: String?
    }

    public struct GrantChanged: Codable, Sendable, Hashable {
        public var user: String
        public var pattern: String
        public var access: String?
        public var sessionsNotified: Int
        enum CodingKeys: String, CodingKey {
            case user, pattern, access
            case sessionsNotified = "sessions_notified"
        }
    }

    public struct CompactRequest: Codable, Sendable, Hashable {
        /// History older than this many seconds is dropped; absent: `history_horizon_days`.
        public var horizonSeconds: Int?
        enum CodingKeys: String, CodingKey { case horizonSeconds = "horizon_seconds" }
    }

    public struct Compacted: Codable, Sendable, Hashable {
        public var removedEntries: [String: Int]
        enum CodingKeys: String, CodingKey { case removedEntries = "removed_entries" }
    }

    /// Every error response: a message and what an operator can do.
    public struct Failure: Codable, Sendable, Hashable {
        public var error: String
        public var hint: String?
    }
}
