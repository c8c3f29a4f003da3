/// Before each connection attempt: may the agent bind with what `[server] token_file` holds,
/// must it enroll first, or must it stop? Pure; the executor (``AgentConnection``) reads the
/// file (``TokenFile``) and the device id (the state database's) and performs the answer.
///
/// | token file | key set | decision |
/// |---|---|---|
/// | missing or empty | yes | enroll (no token) |
/// | a credential of this device the server refused, and every earlier one (`refused`) | yes | enroll (credential refused) |
/// | a credential of this device, another token, unreadable | either | use it (a bind reports what is wrong with it) |
/// | a credential of another device (a clone) | yes | enroll (cloned credential) |
/// | a credential of another device | no | stop until a reload (`cloned_credential`) |
/// | missing or empty | no | use it (the bind says it is missing, as it always did) |
package enum CredentialDecision: Sendable, Hashable {
    case useToken
    case enroll(EnrollmentReason)
    case stop(EnrollmentError)

    /// `refused`: the server refused the token file's credential and every earlier one the
    /// device keeps, since the last attempt (``CredentialFallback``).
    package static func decide(
        token: TokenFile, tokenFile: String, enrollmentKey: Bool, deviceID: String, refused: Bool = false
    ) -> CredentialDecision {
        switch token {
        case .missing, .empty:
            return enrollmentKey ? .enroll(.noToken) : .useToken
        case .credential(let issuedTo) where issuedTo == deviceID && refused && enrollmentKey:
            return .enroll(.credentialRefused)
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
    /// The server refused `token_file`'s credential and every earlier one: it does not know this
    /// device (its database put back from before the enrollment, the device's disk put back
    /// from before a rotation, or the device removed). A refusal of this enrollment does not
    /// stop the agent: it binds with the token file again and may enroll once more later.
    case credentialRefused

    package var description: String {
        switch self {
        case .noToken: "token_file is missing or empty"
        case .clonedCredential(let issuedTo): "token_file holds the credential of device \(issuedTo), not of this machine (a clone of an enrolled image)"
        case .credentialRefused:
            "the server refused this device's credential and every earlier one (its database put back from before the enrollment, this disk put back from before a rotation, or the device removed)"
        }
    }
}
