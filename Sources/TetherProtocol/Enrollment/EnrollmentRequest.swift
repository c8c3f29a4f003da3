/// What a device posts to `/enroll` on the devices' listener (JSON, at most
/// ``EnrollmentLimits/maxRequestBytes``): its enrollment key, the device id the ledger knows it
/// by, and the name it asks for. The key is never logged.
package struct EnrollmentRequest: Sendable, Hashable, Codable {
    /// The enrollment key, as `tether-server admin enroll-key create` printed it (``EnrollmentKeyText``).
    package var key: String
    /// The agent's device id (32 hex digits, kept in its state database; a clone gets a new one).
    package var deviceID: String
    /// The name asked for (``DeviceIdentityRules/isValidName(_:)``); the server picks one when nil.
    package var name: String?
    /// The agent's release, for the ledger.
    package var release: String

    package init(key: String, deviceID: String, name: String?, release: String) {
        self.key = key
        self.deviceID = deviceID
        self.name = name
        self.release = release
    }

    enum CodingKeys: String, CodingKey {
        case key, deviceID = "device_id", name, release
    }
}

/// The server's answer to an enrollment it accepted (HTTP 201, or 200 when the same device
/// enrolled again with the same key and was given a fresh credential).
package struct EnrollmentResponse: Sendable, Hashable, Codable {
    package var deviceID: String
    package var name: String
    /// The device's tags (from its key), which grants by tag and templates use.
    package var tags: [String: String]
    /// The device credential (``DeviceCredential``): written to `[server] token_file`, mode
    /// 0600, and sent in every bind. Never logged.
    package var credential: String

    package init(deviceID: String, name: String, tags: [String: String], credential: String) {
        self.deviceID = deviceID
        self.name = name
        self.tags = tags
        self.credential = credential
    }

    enum CodingKeys: String, CodingKey {
        case deviceID = "device_id", name, tags, credential
    }
}

/// The body of every refused enrollment: `{"error": {"code": …, "message": …, "hint": …}}`,
/// with the HTTP status of ``EnrollmentErrorCode/httpStatus``.
package struct EnrollmentFailure: Sendable, Hashable, Codable, Error, CustomStringConvertible {
    package struct Body: Sendable, Hashable, Codable {
        package var code: EnrollmentErrorCode
        package var message: String
        package var hint: String
    }

    package var error: Body

    package init(_ code: EnrollmentErrorCode, _ message: String) {
        self.error = Body(code: code, message: message, hint: code.hint)
    }

    package var description: String { "\(error.message) (\(error.code.rawValue); hint: \(error.hint))" }
}

/// Limits of an enrollment request.
package enum EnrollmentLimits {
    /// The largest request body the server reads.
    package static let maxRequestBytes = 4_096
}
