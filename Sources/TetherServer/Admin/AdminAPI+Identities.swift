import Foundation

extension AdminAPI {
    /// `POST /admin/enrollment-keys`: a new enrollment key. Neither `uses` nor `reusable`: one use.
    package struct EnrollmentKeyCreate: Codable, Sendable, Hashable {
        /// Given to every device the key enrolls.
        package var tags: [String: String]
        /// How many devices it may enroll (1 to 1,000,000).
        package var uses: Int?
        /// Any number of devices (until it expires or is revoked).
        package var reusable: Bool
        /// Seconds from now until it stops enrolling; absent: it does not expire.
        package var expiresSeconds: Int?
        /// For people (at most 256 bytes, no control characters).
        package var note: String

        package init(tags: [String: String] = [:], uses: Int? = nil, reusable: Bool = false, expiresSeconds: Int? = nil, note: String = "") {
            self.tags = tags
            self.uses = uses
            self.reusable = reusable
            self.expiresSeconds = expiresSeconds
            self.note = note
        }

        enum CodingKeys: String, CodingKey {
            case tags, uses, reusable, note
            case expiresSeconds = "expires_seconds"
        }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            tags = try c.decodeIfPresent([String: String].self, forKey: .tags) ?? [:]
            uses = try c.decodeIfPresent(Int.self, forKey: .uses)
            reusable = try c.decodeIfPresent(Bool.self, forKey: .reusable) ?? false
            expiresSeconds = try c.decodeIfPresent(Int.self, forKey: .expiresSeconds)
            note = try c.decodeIfPresent(String.self, forKey: .note) ?? ""
        }
    }

    /// An enrollment key as the API shows it (never its secret). Times are RFC 3339, UTC.
    package struct EnrollmentKey: Codable, Sendable, Hashable {
        package var id: String
        package var tags: [String: String]
        /// Nil: reusable.
        package var usesAllowed: Int?
        package var usesSpent: Int
        package var expiresAt: String?
        package var revokedAt: String?
        package var note: String
        package var createdAt: String
        package var createdBy: String
        /// `active`, `expired`, `revoked` or `used-up`.
        package var state: String

        enum CodingKeys: String, CodingKey {
            case id, tags, note, state
            case usesAllowed = "uses_allowed"
            case usesSpent = "uses_spent"
            case expiresAt = "expires_at"
            case revokedAt = "revoked_at"
            case createdAt = "created_at"
            case createdBy = "created_by"
        }

        package init(_ record: EnrollmentKeyRecord, now: Date) {
            id = record.id
            tags = record.tags
            usesAllowed = record.usesAllowed
            usesSpent = record.usesSpent
            expiresAt = record.expiresAt.map(Device.timestamp)
            revokedAt = record.revokedAt.map(Device.timestamp)
            note = record.note
            createdAt = Device.timestamp(record.createdAt)
            createdBy = record.createdBy
            state = Self.state(record, now: now)
        }

        static func state(_ record: EnrollmentKeyRecord, now: Date) -> String {
            if record.revokedAt != nil { return "revoked" }
            if let expires = record.expiresAt, expires <= now { return "expired" }
            if let allowed = record.usesAllowed, record.usesSpent >= allowed { return "used-up" }
            return "active"
        }
    }

    /// The answer to a created key: its text, shown this once, and the key as listed.
    package struct EnrollmentKeyCreated: Codable, Sendable, Hashable {
        /// `tek1.<id>.<secret>`: the server keeps only its digest.
        package var key: String
        package var enrollmentKey: EnrollmentKey
        enum CodingKeys: String, CodingKey {
            case key
            case enrollmentKey = "enrollment_key"
        }
    }

    /// `GET /admin/enrollment-keys`: every key, newest first.
    package struct EnrollmentKeys: Codable, Sendable, Hashable {
        package var keys: [EnrollmentKey]
        package var at: String
    }

    /// A device identity: an enrolled device, or a `[[user]]` of the config file (`source`
    /// `config`, which has only a name). Times are RFC 3339, UTC; ages in seconds to `at` of the answer.
    package struct Identity: Codable, Sendable, Hashable {
        package var name: String
        /// `enrolled` or `config`.
        package var source: String
        package var deviceID: String?
        package var tags: [String: String]
        package var enrolledWithKey: String?
        package var createdAt: String?
        package var credentialIssuedAt: String?
        package var credentialAgeSeconds: Int64?
        /// A rotation was handed out and the device has not shown it holds the new credential.
        package var rotationPending: Bool
        package var lastSeenAt: String?
        package var lastSeenSecondsAgo: Int64?
        /// `active` or `revoked`.
        package var state: String
        package var revokedAt: String?

        enum CodingKeys: String, CodingKey {
            case name, source, tags, state
            case deviceID = "device_id"
            case enrolledWithKey = "enrolled_with_key"
            case createdAt = "created_at"
            case credentialIssuedAt = "credential_issued_at"
            case credentialAgeSeconds = "credential_age_seconds"
            case rotationPending = "rotation_pending"
            case lastSeenAt = "last_seen_at"
            case lastSeenSecondsAgo = "last_seen_seconds_ago"
            case revokedAt = "revoked_at"
        }

        package init(_ record: DeviceIdentityRecord, now: Date) {
            name = record.name
            source = "enrolled"
            deviceID = record.id
            tags = record.tags
            enrolledWithKey = record.enrolledWithKey
            createdAt = Device.timestamp(record.createdAt)
            credentialIssuedAt = Device.timestamp(record.credentialIssuedAt)
            credentialAgeSeconds = Self.seconds(from: record.credentialIssuedAt, to: now)
            rotationPending = record.rotationPending
            lastSeenAt = record.lastSeenAt.map(Device.timestamp)
            lastSeenSecondsAgo = record.lastSeenAt.map { Self.seconds(from: $0, to: now) }
            state = record.revokedAt == nil ? "active" : "revoked"
            revokedAt = record.revokedAt.map(Device.timestamp)
        }

        /// A `[[user]]` of the config file.
        package init(configUser name: String) {
            self.name = name
            source = "config"
            tags = [:]
            rotationPending = false
            state = "active"
        }

        static func seconds(from date: Date, to now: Date) -> Int64 { Int64(max(0, now.timeIntervalSince(date)).rounded()) }
    }

    /// `GET /admin/identities`: a page of identities in name order.
    package struct Identities: Codable, Sendable, Hashable {
        package var identities: [Identity]
        /// Pass as `after` for the next page; absent on the last page.
        package var nextAfter: String?
        package var at: String
        enum CodingKeys: String, CodingKey {
            case identities, at
            case nextAfter = "next_after"
        }
    }

    /// `POST /admin/identities/{name}/tags`: tags to set and tags to remove.
    package struct TagRequest: Codable, Sendable, Hashable {
        package var set: [String: String]
        package var remove: [String]

        package init(set: [String: String] = [:], remove: [String] = []) {
            self.set = set
            self.remove = remove
        }

        enum CodingKeys: String, CodingKey { case set, remove }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            set = try c.decodeIfPresent([String: String].self, forKey: .set) ?? [:]
            remove = try c.decodeIfPresent([String].self, forKey: .remove) ?? []
        }
    }

    /// A device changed (tags, rotate, revoke) or removed (`identity.state` `removed`), and how
    /// many of its bound sessions were told (201 to bind again after a tag change, 203 after a
    /// revoke or removal).
    package struct IdentityChanged: Codable, Sendable, Hashable {
        package var identity: Identity
        package var sessionsNotified: Int
        enum CodingKeys: String, CodingKey {
            case identity
            case sessionsNotified = "sessions_notified"
        }
    }

    /// One audit record.
    package struct AuditEntry: Codable, Sendable, Hashable {
        package var id: Int64
        package var at: String
        package var actor: String
        package var action: String
        package var subject: String
        package var detail: String

        package init(_ record: AuditRecord) {
            id = record.id
            at = Device.timestamp(record.at)
            actor = record.actor
            action = record.action
            subject = record.subject
            detail = record.detail
        }
    }

    /// `GET /admin/audit`: audit records oldest first, after `after`.
    package struct Audit: Codable, Sendable, Hashable {
        package var records: [AuditEntry]
        /// Pass as `after` for the next page; absent on the last page.
        package var nextAfter: Int64?
        enum CodingKeys: String, CodingKey {
            case records
            case nextAfter = "next_after"
        }
    }
}
