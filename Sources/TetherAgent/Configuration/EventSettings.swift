/// The `[events]` table, or a partition's `[partition.events]` after inheriting `[events]`
/// (docs/configuration.md "[events]").
package struct EventSettings: Sendable, Hashable {
    /// Runs for every sync error (folded, beside sync); nil: no error hook.
    package var errorHook: String?
    /// Repeats of one (partition, code) inside this many seconds are folded into one run.
    package var errorHookMinIntervalSeconds: Int
    /// Then SIGTERM to the hook's process group, SIGKILL 5 s later.
    package var hookTimeoutSeconds: Int

    package init(errorHook: String? = nil, errorHookMinIntervalSeconds: Int = 60, hookTimeoutSeconds: Int = 60) {
        self.errorHook = errorHook
        self.errorHookMinIntervalSeconds = errorHookMinIntervalSeconds
        self.hookTimeoutSeconds = hookTimeoutSeconds
    }
}
