/// Versions of this build: the release and the sync protocol it speaks.
public enum TetherVersion {
    /// The release, printed by every program's `--version`.
    public static let release = "0.1.0"
    /// The sync protocol version sent when binding; a server that speaks another answers 105.
    public static let syncProtocol = 1
}
