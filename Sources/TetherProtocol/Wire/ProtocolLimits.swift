/// Sizes the codec accepts. Anything larger is a 104 (limits exceeded) decode error.
public enum ProtocolLimits {
    /// Largest message, after WebSocket fragments are joined.
    public static let maxMessageBytes = 16 << 20
    /// Largest single WebSocket frame; larger messages are sent fragmented.
    public static let maxFrameBytes = 1 << 20
    /// Table and column names (the schema allows 64).
    public static let maxNameBytes = 256
    /// A partition name as sent (validated separately: illegal names get 204).
    public static let maxPartitionBytes = 1024
    public static let maxTokenBytes = 8192
    /// Error messages, hints and software names.
    public static let maxTextBytes = 65536
    public static let maxTables = 4096
    public static let maxColumns = 65536
    /// Target size of one download or state message the server sends.
    public static let targetBatchBytes = 512 << 10
}
