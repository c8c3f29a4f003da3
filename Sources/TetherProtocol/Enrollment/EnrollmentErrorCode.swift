/// Why an enrollment was refused: the `code` of ``EnrollmentFailure``, with its HTTP status,
/// whether trying again later may succeed, and the operator's hint. Codes are part of the
/// contract (docs/contract.md "Enrollment"): added, never renamed.
package enum EnrollmentErrorCode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Not JSON, a field missing or of the wrong type, a device id that is not one.
    case malformed = "malformed"
    /// The body is larger than ``EnrollmentLimits/maxRequestBytes``.
    case tooLarge = "too_large"
    /// No key has this id, or its secret does not match.
    case unknownKey = "unknown_key"
    case expiredKey = "expired_key"
    case revokedKey = "revoked_key"
    /// A key of N uses has enrolled N devices.
    case usedUpKey = "used_up_key"
    /// The name asked for has characters outside `[A-Za-z0-9._-]`, or is longer than 64.
    case invalidName = "invalid_name"
    /// Another device (or a `[[user]]` of the config file) has the name asked for.
    case nameTaken = "name_taken"
    /// This device id was revoked: it cannot enroll again until an operator removes it.
    case deviceRevoked = "device_revoked"
    /// The device id is enrolled already by another key.
    case deviceEnrolled = "device_enrolled"
    /// Too many attempts from this peer: try again after the `Retry-After` seconds.
    case rateLimited = "rate_limited"
    /// The server cannot enroll now (storage unavailable, shutting down).
    case unavailable = "unavailable"

    package var httpStatus: Int {
        switch self {
        case .malformed, .invalidName: 400
        case .unknownKey: 401
        case .expiredKey, .revokedKey, .usedUpKey, .deviceRevoked: 403
        case .nameTaken, .deviceEnrolled: 409
        case .tooLarge: 413
        case .rateLimited: 429
        case .unavailable: 503
        }
    }

    /// Whether the same request may succeed later without anyone changing anything.
    package var isTransient: Bool { self == .rateLimited || self == .unavailable }

    package var hint: String {
        switch self {
        case .malformed: "the agent and the server disagree on the request; check both releases"
        case .tooLarge: "the request is larger than 4 KiB; check the name and the key file"
        case .unknownKey: "check the key file: it must hold a key printed by tether-server admin enroll-key create"
        case .expiredKey: "create a new key (tether-server admin enroll-key create --expires …) and install it"
        case .revokedKey: "the key was revoked; install a current key"
        case .usedUpKey: "every use of the key is spent; create another key or a reusable one"
        case .invalidName: "a device name is 1 to 64 of A-Z a-z 0-9 . _ - starting with a letter or digit"
        case .nameTaken: "choose another name ([device] name or --name), or remove the other device"
        case .deviceRevoked: "this device was revoked; tether-server admin device remove lets it enroll again"
        case .deviceEnrolled: "this device id is enrolled with another key; tether-server admin device remove to start over"
        case .rateLimited: "wait and try again; the agent does so by itself"
        case .unavailable: "the server cannot reach its storage; the agent tries again by itself"
        }
    }
}
