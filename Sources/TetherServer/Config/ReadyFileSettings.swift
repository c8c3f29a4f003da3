import TetherTOML

/// `[ready_files]` of `tether-server.toml` (docs/server.md, "Ready files"): whether new stores
/// and resets take a partition's state as a store file built once per version, where those
/// files are kept and how much disk they may take.
package struct ReadyFileSettings: Sendable, Hashable {
    /// `enabled`: serve ready files (default true); false sends every state as rows.
    package var enabled = true
    /// `cache_dir`: where the files are kept (default `<data_dir>/ready-files`). With several
    /// instances, each keeps its own.
    package var cacheDirectory: String
    /// `max_cache_bytes`: the files' total size; the least recently served go first.
    package var maxCacheBytes: Int64 = 4 << 30
    /// `min_rows`: a partition with fewer rows is sent as rows (a file is not worth building).
    package var minRows = 1000
    /// `compress`: keep each file's slices compressed too (zlib, built once with the file) and
    /// send those (default true); false sends the file's bytes as they are.
    package var compress = true
    /// `settle_seconds`: a written partition's file is built or brought up to date in the
    /// background once its writes have been quiet this long (0: only when a bind asks).
    package var settleSeconds = 2
    /// `settle_max_seconds`: a partition written without pause gets its build at the latest this
    /// long after the first write its file does not hold.
    package var settleMaxSeconds = 60

    package init(dataDirectory: String) {
        cacheDirectory = dataDirectory + "/ready-files"
    }

    /// Reads `[ready_files]`; absent keys keep their defaults.
    static func parse(_ table: ConfigTable?, dataDirectory: String) -> ReadyFileSettings {
        var settings = ReadyFileSettings(dataDirectory: dataDirectory)
        guard let table else { return settings }
        if let value = table.bool("enabled") { settings.enabled = value }
        if let value = table.absolutePath("cache_dir") { settings.cacheDirectory = value }
        if let value = table.integer("max_cache_bytes", range: (1 << 20)...(1 << 50)) { settings.maxCacheBytes = Int64(value) }
        if let value = table.integer("min_rows", range: 0...1_000_000_000) { settings.minRows = value }
        if let value = table.bool("compress") { settings.compress = value }
        if let value = table.integer("settle_seconds", range: 0...3600) { settings.settleSeconds = value }
        if let value = table.integer("settle_max_seconds", range: 1...86_400) { settings.settleMaxSeconds = value }
        return settings
    }
}
