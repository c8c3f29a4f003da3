import HTTPTypes

/// The admin API's refusals about enrollment keys and device identities, each with its hint.
extension AdminError {
    static func unknownDevice(_ name: String) -> AdminError {
        AdminError(.notFound, "no enrolled device is named \(name.debugDescription)", hint: "`tether-server admin devices` lists the identities")
    }

    /// A `[[user]]` of the config file named where an enrolled device is needed.
    static func configuredUser(_ name: String) -> AdminError {
        AdminError(
            .conflict, "\(name.debugDescription) is a [[user]] of the config file, not an enrolled device",
            hint: "its token is its token_file (`tether-server token new \(name)`); remove it from the config file to take it out")
    }

    static func unknownKey(_ id: String) -> AdminError {
        AdminError(.notFound, "no enrollment key has the id \(id.debugDescription)", hint: "`tether-server admin enroll-key list` lists the keys")
    }

    static func keyRevoked(_ id: String) -> AdminError {
        AdminError(.conflict, "enrollment key \(id) is revoked already", hint: "`tether-server admin enroll-key list` shows each key's state")
    }

    static func deviceRevoked(_ name: String) -> AdminError {
        AdminError(
            .conflict, "device \(name) is revoked",
            hint: "a revoked device keeps no credential; `tether-server admin device remove \(name)` lets it enroll again")
    }

    static func badTag(_ problem: TagProblem) -> AdminError {
        AdminError(.badRequest, problem.description, hint: TagProblem.hint)
    }

    static func badKeyRequest(_ message: String, hint: String) -> AdminError {
        AdminError(.badRequest, message, hint: hint)
    }

    static func badPage(_ message: String) -> AdminError {
        AdminError(.badRequest, message, hint: "`after` is the `next_after` of the previous page; `limit` is 1 to 1000")
    }

    /// The storage cannot answer (it does not keep identities, or is unreachable).
    static func identitiesUnavailable(_ error: StorageError) -> AdminError {
        AdminError(.serviceUnavailable, "\(error)", hint: "the server's storage must keep enrolled devices: check its log")
    }
}
