import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import Synchronization
import TetherProtocol

/// The TLS context new connections get. SIGHUP replaces it with one made from the renewed
/// certificate and key files; connections already open keep the context they started with,
/// so a renewed certificate does not drop the fleet.
final class TLSContextBox: Sendable {
    private let current: Mutex<NIOSSLContext>

    init(_ context: NIOSSLContext) { current = Mutex(context) }

    var context: NIOSSLContext { current.withLock { $0 } }

    func replace(with context: NIOSSLContext) { current.withLock { $0 = context } }

    /// A server context from PEM files (the certificate file may hold a chain), refusing
    /// clients older than `tls_min_version` (NIOSSL's own default would accept TLS 1.0).
    static func makeContext(_ files: ServerConfiguration.TLSFiles) throws -> NIOSSLContext {
        try NIOSSLContext(configuration: makeConfiguration(files))
    }

    static func makeConfiguration(_ files: ServerConfiguration.TLSFiles) throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(files.certificate).map { NIOSSLCertificateSource.certificate($0) }
        guard !chain.isEmpty else { throw TLSFileError(message: "\(files.certificate) holds no PEM certificate") }
        let key = try NIOSSLPrivateKey(file: files.key, format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = switch files.minimumVersion {
        case .tls12: .tlsv12
        case .tls13: .tlsv13
        }
        return configuration
    }
}

struct TLSFileError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A child channel that puts TLS in front of `base` with the box's context at the time the
/// connection is accepted.
struct ReloadableTLSChannel<BaseChannel: ServerChildChannel>: ServerChildChannel {
    typealias Value = BaseChannel.Value
    let base: BaseChannel
    let box: TLSContextBox

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let context = box.context
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
