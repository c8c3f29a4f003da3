/// The admin HTTP API's JSON bodies (docs/server.md, "Admin API"), shared by the server's
/// routes and ``AdminClient``. Keys are snake_case on the wire.
package enum AdminAPI {
    package struct Status: Codable, Sendable, Hashable {
        package var server: Server
        package var partitions: [Partition]

        package struct Server: Codable, Sendable, Hashable {
            package var release: String
            package var syncProtocol: Int
            package var syncTerminated: Bool
            package var clientRecovery: Bool
            package var schemaVersion: Int
            package var connections: Int
            package var sessions: Int
            enum CodingKeys: String, CodingKey {
                case release, connections, sessions
                case syncProtocol = "sync_protocol"
                case syncTerminated = "sync_terminated"
                case clientRecovery = "client_recovery"
                case schemaVersion = "schema_version"
            }
        }

        package struct Partition: Codable, Sendable, Hashable {
            package var name: String
            package var serverVersion: Int64
            package var compactedThrough: Int64
            package var historyEntries: Int
            package var historyBytes: Int64
            package var rows: Int
            package var clientFiles: Int
            package var connectedClients: Int
            /// The window the partition's last restore lost and how far devices gave it back;
            /// nil when it was never restored (since healing exists).
            package var heal: HealRecord?
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

    package struct Snapshot: Codable, Sendable, Hashable {
        package var partition: String
        package var snapshot: String
        package var serverVersion: Int64
        enum CodingKeys: String, CodingKey {
            case partition, snapshot
            case serverVersion = "server_version"
        }
    }

    package struct RestoreRequest: Codable, Sendable, Hashable {
        package var snapshot: String
        /// `heal` or `rollback`; absent: the server's `[history] devices_ahead`.
        package var mode: RestoreMode?
    }

    package struct Restored: Codable, Sendable, Hashable {
        package var partition: String
        package var snapshot: String
        package var serverVersion: Int64
        package var sessionsNotified: Int
        /// How the lost window is handled.
        package var mode: RestoreMode
        /// The window the restore dropped (nil when it dropped nothing).
        package var heal: HealRecord?
        enum CodingKeys: String, CodingKey {
            case partition, snapshot, mode, heal
            case serverVersion = "server_version"
            case sessionsNotified = "sessions_notified"
        }
    }

    package struct SyncState: Codable, Sendable, Hashable {
        package var syncTerminated: Bool
        package var clientFilesForgotten: Int
        package var sessionsNotified: Int
        enum CodingKeys: String, CodingKey {
            case syncTerminated = "sync_terminated"
            case clientFilesForgotten = "client_files_forgotten"
            case sessionsNotified = "sessions_notified"
        }
    }

    package struct Recovery: Codable, Sendable, Hashable {
        package var enabled: Bool
    }

    package struct SchemaApplyRequest: Codable, Sendable, Hashable {
        /// The new `schema.toml`'s text, and its name for error messages.
        package var schemaToml: String
        package var file: String
        package var allowBreaking: Bool
        enum CodingKeys: String, CodingKey {
            case file
            case schemaToml = "schema_toml"
            case allowBreaking = "allow_breaking"
        }
    }

    package struct SchemaApplied: Codable, Sendable, Hashable {
        package var applied: Bool
        package var breaking: Bool
        package var version: Int
        package var previousVersion: Int
        package var differences: [String]
        package var sessionsNotified: Int
        enum CodingKeys: String, CodingKey {
            case applied, breaking, version, differences
            case previousVersion = "previous_version"
            case sessionsNotified = "sessions_notified"
        }
    }

    package struct GrantRequest: Codable, Sendable, Hashable {
        package var user: String
        package var pattern: String
        /// `read` or `readwrite`; absent for a revoke.
        package var access: String?
    }

    package struct GrantChanged: Codable, Sendable, Hashable {
        package var user: String
        package var pattern: String
        package var access: String?
        package var sessionsNotified: Int
        enum CodingKeys: String, CodingKey {
            case user, pattern, access
            case sessionsNotified = "sessions_notified"
        }
    }

    package struct CompactRequest: Codable, Sendable, Hashable {
        /// History older than this many seconds is dropped; absent: `history_horizon_days`.
        package var horizonSeconds: Int?
        enum CodingKeys: String, CodingKey { case horizonSeconds = "horizon_seconds" }
    }

    package struct Compacted: Codable, Sendable, Hashable {
        package var removedEntries: [String: Int]
        enum CodingKeys: String, CodingKey { case removedEntries = "removed_entries" }
    }

    /// Every error response: a message and what an operator can do.
    package struct Failure: Codable, Sendable, Hashable {
        package var error: String
        package var hint: String?
    }
}
