import Foundation
import Logging
import Synchronization
import TetherProtocol

/// Enrolls devices (`POST /enroll` on the devices' listener; docs/server.md "Enrollment"):
/// reads the request, mints the device's credential, and has the storage decide and write the
/// enrollment in one transaction (``EnrollmentPolicy`` inside
/// ``IdentityStorage/enroll(keyID:deviceID:name:decide:)``). A peer whose requests keep being
/// refused waits, as the console's sign-in does (``SignInThrottle``): after a few refusals its
/// requests are answered 429 with `Retry-After` before they are read; an enrollment clears it.
///
/// Logs one line per enrollment (device name, id, key id) and per refusal (code, key id, peer);
/// never the key or the credential.
package final class EnrollmentService: Sendable {
    /// What became of one request.
    package enum Outcome: Sendable, Hashable {
        /// `isNew`: 201 for a new device, 200 for one enrolled again with its key.
        case enrolled(EnrollmentResponse, isNew: Bool)
        case refused(EnrollmentFailure)
        /// The peer must wait this many seconds (429, `Retry-After`).
        case throttled(retryAfter: Int)

        package var httpStatus: Int {
            switch self {
            case .enrolled(_, let isNew): isNew ? 201 : 200
            case .refused(let failure): failure.error.code.httpStatus
            case .throttled: EnrollmentErrorCode.rateLimited.httpStatus
            }
        }
    }

    let identity: any IdentityStorage
    let policy: ServerPolicy
    let now: @Sendable () -> Date
    let logger: Logger
    private let throttle: Mutex<SignInThrottle>
    /// Notified after each re-enrollment (the device's credential changed: its cached record,
    /// here and on other instances).
    let changed: @Sendable (DeviceIdentityRecord) async -> Void

    package init(
        identity: any IdentityStorage, policy: ServerPolicy, now: @escaping @Sendable () -> Date, logger: Logger,
        changed: @escaping @Sendable (DeviceIdentityRecord) async -> Void = { _ in }
    ) {
        self.identity = identity
        self.policy = policy
        self.now = now
        self.logger = logger
        self.changed = changed
        var throttle = SignInThrottle()
        throttle.wording = SignInThrottle.Wording(refused: "enrollment refused", cause: "its request was refused")
        self.throttle = Mutex(throttle)
    }

    /// Whether `peer` may be answered now (asked before its body is read).
    package func admit(_ peer: String, at instant: ContinuousClock.Instant = .now) -> Outcome? {
        let (admission, line) = throttle.withLock { $0.admit(peer, now: instant) }
        if let line { logger.notice("\(line.message)", metadata: ["peer": "\(line.peer)"]) }
        if case .wait(let seconds) = admission { return .throttled(retryAfter: seconds) }
        return nil
    }

    /// A request body as the route read it (at most ``EnrollmentLimits/maxRequestBytes``).
    package func enroll(body: [UInt8], peer: String, at instant: ContinuousClock.Instant = .now) async -> Outcome {
        let request: EnrollmentRequest
        do {
            request = try JSONDecoder().decode(EnrollmentRequest.self, from: Data(body))
        } catch {
            return refused(EnrollmentFailure(.malformed, "the request is not an enrollment request's JSON"), keyID: nil, peer: peer, at: instant)
        }
        return await enroll(request, peer: peer, at: instant)
    }

    package func enroll(_ request: EnrollmentRequest, peer: String, at instant: ContinuousClock.Instant = .now) async -> Outcome {
        if let failure = EnrollmentPolicy.precheck(deviceID: request.deviceID, requestedName: request.name) {
            return refused(failure, keyID: nil, peer: peer, at: instant)
        }
        guard let key = EnrollmentKeyText(parsing: request.key) else {
            return refused(EnrollmentFailure(.unknownKey, "the key is not an enrollment key"), keyID: nil, peer: peer, at: instant)
        }
        let (credential, digest) = CredentialMinter.credential(for: request.deviceID)
        let attempt = EnrollmentPolicy.Attempt(
            keyID: key.keyID, presentedKeyDigest: SecretDigest.of(key.secret), deviceID: request.deviceID,
            requestedName: request.name, credentialDigest: digest, now: now())
        let decider = EnrollmentPolicy(configUsers: Set(await policy.snapshot.users.entries.map(\.name)))
        let decision: EnrollmentDecision
        do {
            decision = try await identity.enroll(keyID: key.keyID, deviceID: request.deviceID, name: attempt.name) { key, device, holder in
                decider.decide(attempt, key: key, device: device, nameTakenBy: holder)
            }
        } catch {
            logger.error("enrollment failed in storage", metadata: [
                "device": "\(request.deviceID)", "key": "\(key.keyID)", "error": "\(SyncService.oneLine(error))",
            ])
            return .refused(EnrollmentFailure(.unavailable, "the server cannot enroll now"))
        }
        switch decision {
        case .enroll(let record, _), .reenroll(let record, _):
            let isNew = if case .enroll = decision { true } else { false }
            throttle.withLock { $0.succeeded(peer) }
            if !isNew { await changed(record) }
            logger.notice(isNew ? "device enrolled" : "device enrolled again", metadata: [
                "device": "\(record.name)", "device_id": "\(record.id)", "key": "\(key.keyID)", "release": "\(request.release.prefix(64))",
                "peer": "\(peer)",
            ])
            let response = EnrollmentResponse(deviceID: record.id, name: record.name, tags: record.tags, credential: credential.text)
            return .enrolled(response, isNew: isNew)
        case .refuse(let failure):
            return refused(failure, keyID: key.keyID, peer: peer, at: instant)
        }
    }

    /// A refusal, counted for the peer's wait and logged (never the key's secret).
    private func refused(_ failure: EnrollmentFailure, keyID: String?, peer: String, at instant: ContinuousClock.Instant) -> Outcome {
        let line = throttle.withLock { $0.failed(peer, now: instant).log }
        if let line { logger.notice("\(line.message)", metadata: ["peer": "\(line.peer)"]) }
        logger.info("enrollment refused: \(failure.error.message)", metadata: [
            "code": "\(failure.error.code.rawValue)", "key": "\(keyID ?? "none")", "peer": "\(peer)",
        ])
        return .refused(failure)
    }
}
