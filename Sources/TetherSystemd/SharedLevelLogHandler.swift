import Logging

/// A log handler whose level is the agent's or server's shared, run-time changeable level
/// (``LogLevelBox``) unless one logger value was given its own, and whose metadata merges the
/// handler's, the provider's and the event's, later ones winning. The journal and stderr
/// handlers differ only in where a line goes.
package protocol SharedLevelLogHandler: LogHandler {
    var levelBox: LogLevelBox { get }
    /// This logger value's own level, if it was given one.
    var levelOverride: Logger.Level? { get set }
}

extension SharedLevelLogHandler {
    /// The shared level, unless this handler (this logger value) was given its own.
    package var logLevel: Logger.Level {
        get { levelOverride ?? levelBox.loggerLevel }
        set { levelOverride = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The handler's metadata, then the provider's, then `explicit` (an event's).
    func mergedMetadata(_ explicit: Logger.Metadata?) -> Logger.Metadata {
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { _, new in new }
        }
        if let explicit {
            merged.merge(explicit) { _, new in new }
        }
        return merged
    }
}
