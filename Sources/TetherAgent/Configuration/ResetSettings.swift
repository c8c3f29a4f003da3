/// The `[reset]` table, or a partition's `[partition.reset]` after inheriting `[reset]`.
public struct ResetSettings: Sendable, Hashable {
    public var mode: ResetMode
    public var beforeHook: String?
    public var afterHook: String?
    public var manualHook: String?
    public var hookTimeoutSeconds: Int
    public var recoveryDir: String
    public var keepBackups: Int

    public init(
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
    public var hooks: [(key: String, path: String)] {
        [("before_hook", beforeHook), ("after_hook", afterHook), ("manual_hook", manualHook)]
            .compactMap { key, path in path.map { (key, $0) } }
    }
}
