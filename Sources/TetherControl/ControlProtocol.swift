/// The control socket's protocol (docs/control-protocol.md): requests and answers as JSON
/// objects, one per line, and the events streamed after an `events` request with `follow`.
///
/// **Compatibility rule.** A release of `tetherd` answers every request of its own protocol
/// version and of every earlier one: a field or command is never removed or renamed, and a
/// new one is added only with a new version. A client sends the version it speaks in `hello`;
/// an agent whose version is older refuses with `protocol-too-new`, and a client that gets an
/// answer to `hello` uses only what the agent's version and capabilities name. Unknown fields
/// in answers and unknown event kinds are ignored by readers.
public enum ControlProtocol {
    /// 1: the commands of release 0.1 (`status`, `resets`, `reset-initiate`, `wait-synced`,
    /// `pause`, `resume`, `log-level`, `metrics`, `events`). 2: `hello`; error `code`s; event
    /// numbers kept across restarts and `events` with `after`; `changes-applied` and `synced`
    /// events; reset events with `store_path` and `backup_path`.
    public static let version = 2

    /// What this agent can do beyond its version's commands; a client checks before using one.
    /// `retry-now`: the command of that name; `reset-backup`: the event of that name.
    /// `diagnostics`: the command of that name; `remote-action`: the event of that name.
    /// `subscriptions`: the command of that name. `set-subscriptions`: the command of that name,
    /// and `runtime`, `configured` and `configured_digest` in its ``SubscriptionsReport``. `compensating-write`: the event of that name and the status fields `compensating_writes`,
    /// `last_compensating_write` and `subscriptions_pending`.
    public static let capabilities = [
        "events-after", "changes-applied", "synced", "reset-paths", "error-codes", "retry-now", "reset-backup", "diagnostics", "remote-action",
        "compensating-write", "subscriptions", "set-subscriptions",
    ]
}
