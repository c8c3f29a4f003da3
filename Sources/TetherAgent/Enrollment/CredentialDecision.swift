/// Before each connection attempt: may the agent bind with what `[server] token_file` holds,
/// must it enroll first, or must it stop? Pure; the executor (``AgentConnection``) reads the
/// file (``TokenFile``) and the device id (the state database's) and performs the answer.
///
/// | token file | key set | decision |
/// |---|---|---|
/// | missing or empty | yes | enroll (no token) |
/// | a credential of this device, another token, unreadable | either | use it (a bind reports what is wrong with it) |
/// | a credential of another device (a clone) | yes | enroll (cloned credential) |
/// | a credential of another device | no | stop until a reload (`cloned_credential`) |
/// | missing or empty | no | use it (the bind says it is missing, as it always did) |
package enum CredentialDecision: Sendable, Hashable {
    case useToken
    case enroll(EnrollmentReason)
    case stop(EnrollmentError)

    package static func decide(token: TokenFile, tokenFile: String, enrollmentKey: Bool, deviceID: String) -> CredentialDecision {
        switch token {
        case .missing, .empty:
            return enrollmentKey ? .enroll(.noToken) : .useToken
        case .credential(let issuedTo) where issuedTo != deviceID:
            guard enrollmentKey else {
                return .stop(.clonedCredential(tokenFile: tokenFile, issuedTo: issuedTo, device: deviceID))
            }
            return .enroll(.clonedCredential(issuedTo: issuedTo))
        case .credential, .token, .unreadable:
            return .useToken
        }
    }
}

/// Why the agent enrolls.
package enum EnrollmentReason: Sendable, Hashable, CustomStringConvertible {
    /// `token_file` is missing or empty.
    case noToken
    /// `token_file` holds the credential of device `issuedTo`, not of this one.
    case clonedCredential(issuedTo: String)

    package var description: String {
        switch self {
        case .noToken: "token_file is missing or empty"
        case .clonedCredential(let issuedTo): "token_file holds the credential of device \(issuedTo), not of this machine (a clone of an enrolled image)"
        }
    }
}
