/// The `[reset]` table, or a partition's `[partition.reset]` after inheriting `[reset]`.
package struct ResetSettings: Sendable, Hashable {
    package var mode: ResetMode
    package var beforeHook: String?
    package var afterHook: String?
    package var manualHook: String?
    package var hookTimeoutSeconds: Int
    package var recoveryDir: String
    package var keepBackups: Int

    package init(
        mode: ResetMode = .recoverUnsyncedChanges, beforeHook: String? = nil, afterHook: String? = nil,
        manualHook: String? = nil, hookTimeoutSeconds: Int = 60, recoveryDir: String, keepBackups: Int = 5
    ) {
        self.mode = mode
        self.beforeHook = beforeHook
        self.afterHook = afterHook
        self.manualHook = manualHook
        self.hookTimeoutSeconds = hookTimeoutSeconds
        self.recoveryDir = recoveryDir
        self.keepBackups = keepBackups
    }

    /// Every configured hook with the key that names it, for validation and logs.
    package var hooks: [(key: String, path: String)] {
        [("before_hook", beforeHook), ("after_hook", afterHook), ("manual_hook", manualHook)]
            .compactMap { key, path in path.map { (key, $0) } }
    }
}
