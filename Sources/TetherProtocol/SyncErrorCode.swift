/// A sync error number (docs/contract.md: Sync errors). The numbers follow Realm's sync protocol so that people
/// coming from Atlas Device Sync recognise them. Unknown numbers are representable: the
/// agent follows the action the server sent with them.
package struct SyncErrorCode: RawRepresentable, Sendable, Hashable, Comparable, Codable,
    CustomStringConvertible
{
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }
    package init(_ rawValue: Int) { self.rawValue = rawValue }

    // Connection-level errors (1xx): the connection is closed.
    /// Any other connection-level error.
    package static let otherError = Self(101)
    /// A message type the peer does not know.
    package static let unknownMessage = Self(102)
    /// A message that cannot be decoded.
    package static let badSyntax = Self(103)
    /// A message or frame larger than the peer accepts.
    package static let limitsExceeded = Self(104)
    package static let wrongProtocolVersion = Self(105)
    package static let clientFileBoundInOtherSession = Self(108)
    /// A message that is not allowed in the session's current state.
    package static let badMessageOrder = Self(109)

    // Session-level errors (2xx): only the affected partition is concerned.
    /// Any other session-level error; also sent while sync is terminated on the server.
    package static let otherSessionError = Self(201)
    package static let accessTokenExpired = Self(202)
    package static let badUserAuthentication = Self(203)
    package static let illegalPartitionName = Self(204)
    package static let permissionDenied = Self(206)
    package static let badServerFileIdentifier = Self(207)
    package static let badClientFileIdentifier = Self(208)
    package static let badServerVersion = Self(209)
    package static let badClientVersion = Self(210)
    package static let divergingHistories = Self(211)
    package static let badClientFile = Self(217)
    package static let clientFileExpired = Self(222)
    package static let invalidSchemaChange = Self(225)
    /// A subscription the server cannot serve: its filter does not parse or check against the
    /// schema, names a parameter the device lacks, or the set is too large (Realm's `bad_query`).
    package static let badQuery = Self(227)
    /// A change the server did not integrate and reverted (outside the subscriptions or the
    /// grant's write rule): not sent as an error message but as `compensating-writes`; the
    /// agent reports it under this code.
    package static let compensatingWrite = Self(231)
    package static let badSchemaVersion = Self(235)

    /// Every code this project sends or handles, in numeric order.
    package static let known: [SyncErrorCode] = [
        .otherError, .unknownMessage, .badSyntax, .limitsExceeded, .wrongProtocolVersion,
        .clientFileBoundInOtherSession, .badMessageOrder, .otherSessionError,
        .accessTokenExpired, .badUserAuthentication, .illegalPartitionName, .permissionDenied,
        .badServerFileIdentifier, .badClientFileIdentifier, .badServerVersion,
        .badClientVersion, .divergingHistories, .badClientFile, .clientFileExpired,
        .invalidSchemaChange, .badQuery, .compensatingWrite, .badSchemaVersion,
    ]

    package var isKnown: Bool { Self.known.contains(self) }

    /// Connection-level codes close the whole connection; session-level ones one partition.
    package var isConnectionLevel: Bool { rawValue < 200 }

    /// The snake_case name used in logs and docs (`diverging_histories`), or `code_<n>` for a number this build does not know.
    package var name: String {
        switch rawValue {
        case 101: "other_error"
        case 102: "unknown_message"
        case 103: "bad_syntax"
        case 104: "limits_exceeded"
        case 105: "wrong_protocol_version"
        case 108: "bound_in_other_session"
        case 109: "bad_message_order"
        case 201: "other_session_error"
        case 202: "token_expired"
        case 203: "bad_authentication"
        case 204: "illegal_partition_name"
        case 206: "permission_denied"
        case 207: "bad_server_file_ident"
        case 208: "bad_client_file_ident"
        case 209: "bad_server_version"
        case 210: "bad_client_version"
        case 211: "diverging_histories"
        case 217: "bad_client_file"
        case 222: "client_file_expired"
        case 225: "invalid_schema_change"
        case 227: "bad_query"
        case 231: "compensating_write"
        case 235: "bad_schema_version"
        default: "code_\(rawValue)"
        }
    }

    /// The action docs/contract.md "Sync errors" assigns to this code. The server sends the action with every
    /// error; this is what it sends by default, and what an agent assumes for a message
    /// that lacks one.
    package var defaultAction: ErrorAction {
        switch rawValue {
        case 105, 204, 227: .fatal
        case 202, 203: .reauth
        case 206: .deleteStore
        case 207, 208, 209, 210, 211, 217, 222, 225, 235: .clientReset
        default: .retry
        }
    }

    /// True when automatic reset modes must fall back to manual (breaking schema change).
    package var forcesManualReset: Bool { self == .invalidSchemaChange || self == .badSchemaVersion }

    /// What an operator can do about it: one sentence, safe to log.
    package var hint: String {
        switch rawValue {
        case 101, 102, 103, 104, 109:
            "the peer sent something this version cannot handle; check that agent and server versions match, the connection is retried"
        case 105:
            "agent and server speak different protocol versions; upgrade one of them, then reload the agent"
        case 108:
            "another session is bound to the same store: check that two agents do not share one state_dir or token"
        case 201:
            "the server refused the session for now (for example sync is terminated); it is retried with backoff"
        case 202:
            "the access token expired; write a fresh token to the token file, it is re-read on the next attempt"
        case 203:
            "the server rejected the token; check [server] token_file and the server's [[user]] entry"
        case 204:
            "the partition name is not legal on the server; fix the [[partition]] name and reload"
        case 206:
            "the user has no access to this partition: grant it on the server (tether-server admin grant); meanwhile a delete-store action waits for `tetherctl reset initiate` (or a restart), which backs the store up and empties it, and the partition then takes the server's state once access is back"
        case 207, 208, 209, 210, 211, 217, 222:
            "the server can no longer sync with this store (restored from backup, sync terminated, or device away too long); a client reset follows"
        case 227:
            "a subscription of this partition cannot be served (see the message); fix its [[partition.subscription]] or the device's tags, then reload: the partition syncs again without a reset"
        case 231:
            "a change outside the partition's subscriptions or its grant's write rule was reverted to the server's version; the rest syncs on, nothing waits"
        case 225, 235:
            "the server's schema changed in a breaking way; the reset waits for `tetherctl reset initiate` after applications are updated"
        default:
            "unknown error code; the action the server sent with it is followed"
        }
    }

    package var description: String { "\(rawValue) (\(name))" }
    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    package init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(Int.self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
