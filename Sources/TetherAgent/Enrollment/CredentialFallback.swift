/// Which credential the agent binds with when the server refuses the one in `[server]
/// token_file` (203): a server whose database was put back from a backup taken before the
/// device's last rotation knows it by an earlier one (``CredentialHistory``). Pure: the
/// credentials come in as texts, one method per input, each returning what the caller does.
///
/// ```text
/// current ─refused─▶ trying(0) ─refused─▶ trying(1) … ─refused (none left: exhausted)─▶ current
///    ▲                  │ accepted: restore it as token_file
///    └──────────────────┘
/// ```
///
/// A refusal or an acceptance of a credential other than the one offered now (another
/// partition's bind that started before) changes nothing, so binds running side by side walk
/// the list once, not once each. Every step waits for the session's backoff.
package struct CredentialFallback: Sendable, Hashable {
    /// The earlier credential offered now (an index into the list the caller reads), nil:
    /// the token file's.
    package private(set) var trying: Int? = nil
    /// The list was walked to its end since the last acceptance: a walk again is not logged.
    package private(set) var walkedAll = false

    package init() {}

    /// What a refusal of the offered credential leads to.
    package enum Refusal: Sendable, Hashable {
        /// Nothing changes (not the credential offered now).
        case none
        /// The next bind offers the earlier credential at this index (0: the newest); `log`:
        /// the first walk since an acceptance.
        case offerEarlier(Int, log: Bool)
        /// Every earlier one (if any) was refused too: the token file's again, or an enrollment
        /// when the device may enroll; `log` as above.
        case exhausted(log: Bool)
    }

    /// What an accepted bind leads to.
    package enum Acceptance: Sendable, Hashable {
        case none
        /// The server knows the device by this earlier credential: it becomes the token file's
        /// again (the current one the newest earlier one).
        case restore(String)
    }

    /// The credential to bind with: the token file's `current`, or the earlier one offered.
    package func offered(current: String, earlier: [String]) -> String {
        guard let trying, trying < earlier.count else { return current }
        return earlier[trying]
    }

    /// The server refused `token` (203).
    package mutating func refused(_ token: String, current: String, earlier: [String]) -> Refusal {
        guard token == offered(current: current, earlier: earlier) else { return .none }
        let next = trying.map { $0 + 1 } ?? 0
        guard next < earlier.count else {
            trying = nil
            defer { walkedAll = true }
            return .exhausted(log: !walkedAll)
        }
        trying = next
        return .offerEarlier(next, log: !walkedAll)
    }

    /// The server accepted a bind with `token`.
    package mutating func accepted(_ token: String, current: String, earlier: [String]) -> Acceptance {
        guard token == offered(current: current, earlier: earlier) else { return .none }
        trying = nil
        walkedAll = false
        return token == current ? .none : .restore(token)
    }

    /// The token file changed under the agent (a rotation, an enrollment, an operator): the
    /// list it offered from is another.
    package mutating func tokenFileChanged() {
        trying = nil
        walkedAll = false
    }
}
