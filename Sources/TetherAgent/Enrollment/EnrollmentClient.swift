import Foundation
import TetherProtocol
import TetherSyncClient

/// Enrolls this device with a server: `POST <server>/enroll` (the sync URL with `ws`→`http`,
/// `wss`→`https` and its `/sync` replaced by `/enroll`) with an ``EnrollmentRequest``, over
/// the transport and trust of the sync connection (`ca_file`, `pin_sha256`,
/// `tls_min_version`). 200 or 201 carry an ``EnrollmentResponse``; any other status an
/// ``EnrollmentFailure``, thrown as ``EnrollmentError``. The key and the credential are never
/// logged or put in an error.
package struct EnrollmentClient: Sendable {
    /// The `/enroll` URL posted to.
    package let url: String
    let post: EnrollmentPost

    /// For the server of `[server] url` (or `tetherctl enroll --server`), trusted as `trust`
    /// says. Nil when `serverURL` is not a ws(s):// or http(s):// URL with a host.
    package init?(serverURL: String, trust: ServerTrust, software: String = "tetherd \(TetherVersion.release)") {
        guard let url = EnrollmentPost.enrollURL(forServer: serverURL) else { return nil }
        self.url = url
        post = EnrollmentPost(url: url, trust: trust, software: software)
    }

    /// Posts `request` and returns the server's answer, checked: the credential is one, for
    /// the device that asked.
    package func enroll(_ request: EnrollmentRequest) async throws(EnrollmentError) -> EnrollmentResponse {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(request))
        } catch {
            throw EnrollmentError(code: "malformed", message: "cannot encode the request: \(error)", hint: "", isTransient: false)
        }
        let answer: EnrollmentPost.Answer
        do {
            answer = try await post.send(body)
        } catch {
            throw .unreachable(error, url: url)
        }
        return try Self.interpret(answer, for: request).get()
    }

    /// What an answer means (pure): a checked response, or the error it says.
    package static func interpret(_ answer: EnrollmentPost.Answer, for request: EnrollmentRequest) -> Result<EnrollmentResponse, EnrollmentError> {
        let retryAfter = answer.retryAfterSeconds.map { Duration.seconds(max(0, min($0, 3_600))) }
        let data = Data(answer.body)
        guard answer.status == 200 || answer.status == 201 else {
            // The contract's body; a code this release does not know is kept as it came.
            if let failure = try? JSONDecoder().decode(LenientFailure.self, from: data) {  // not the contract's body: judged by its status below
                return .failure(
                    .refused(
                        code: failure.error.code, message: Self.printable(failure.error.message ?? failure.error.code),
                        hint: failure.error.hint.map(Self.printable), status: answer.status, retryAfter: retryAfter))
            }
            return .failure(.unexpectedAnswer("HTTP \(answer.status) without an enrollment error", status: answer.status, retryAfter: retryAfter))
        }
        let response: EnrollmentResponse
        do {
            response = try JSONDecoder().decode(EnrollmentResponse.self, from: data)
        } catch {
            return .failure(.unexpectedAnswer("HTTP \(answer.status) whose body is not an enrollment response (\(error))", status: answer.status))
        }
        guard response.deviceID == request.deviceID else {
            return .failure(.unexpectedAnswer("it enrolled device \(Self.printable(response.deviceID)), not \(request.deviceID)", status: answer.status))
        }
        guard let credential = DeviceCredential(parsing: response.credential), credential.deviceID == request.deviceID else {
            return .failure(.unexpectedAnswer("its credential is not a device credential (tdc1.…) of device \(request.deviceID)", status: answer.status))
        }
        guard DeviceIdentityRules.isValidName(response.name) else {
            return .failure(.unexpectedAnswer("the device name it gave is not a device name", status: answer.status))
        }
        return .success(response)
    }

    /// The error body, its code as a string (a newer server's code too), message and hint optional.
    private struct LenientFailure: Decodable {
        struct Body: Decodable {
            var code: String
            var message: String?
            var hint: String?
        }
        var error: Body
    }

    /// The server's words for a log line: control characters replaced, at most 300 characters.
    static func printable(_ text: String) -> String {
        String(String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : Character($0) }).prefix(300))
    }
}
