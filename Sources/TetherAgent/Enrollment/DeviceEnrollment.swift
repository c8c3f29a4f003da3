import TetherProtocol
import TetherSyncClient

/// One enrollment of this device, its I/O in order: the key file read (``EnrollmentKeyFile``),
/// `POST /enroll` (``EnrollmentClient``), the credential written to `token_file`
/// (``CredentialWriter``). The agent's connection runs it when ``CredentialDecision`` says so,
/// `tetherctl enroll` when an operator asks. A failure before the write leaves `token_file`
/// as it was; the server gives the same device a fresh credential when it enrolls again.
package struct DeviceEnrollment: Sendable {
    /// The server's sync URL (`[server] url`), or any ws(s)/http(s) URL of its devices' listener.
    package var serverURL: String
    package var trust: ServerTrust
    package var keyFile: String
    package var tokenFile: String
    /// The state database's device id (``AgentStateDatabase/deviceID()``).
    package var deviceID: String
    /// The name asked for; nil: the server picks one.
    package var name: String?
    /// The owner of a token file that did not exist (``CredentialWriter``).
    package var newFileOwner: CredentialWriter.Owner?
    package var software: String

    package init(
        serverURL: String, trust: ServerTrust, keyFile: String, tokenFile: String, deviceID: String, name: String?,
        newFileOwner: CredentialWriter.Owner? = nil, software: String = "tetherd \(TetherVersion.release)"
    ) {
        self.serverURL = serverURL
        self.trust = trust
        self.keyFile = keyFile
        self.tokenFile = tokenFile
        self.deviceID = deviceID
        self.name = name
        self.newFileOwner = newFileOwner
        self.software = software
    }

    /// The agent's enrollment, as `[server]` and `[device]` say.
    package init(server: ServerSettings, keyFile: String, device: DeviceSettings, deviceID: String) {
        self.init(
            serverURL: server.url, trust: server.trust, keyFile: keyFile, tokenFile: server.tokenFile, deviceID: deviceID,
            name: device.configuredName.flatMap { DeviceIdentityRules.isValidName($0) ? $0 : nil })
    }

    /// Where the request goes (nil: the server URL is not one).
    package var enrollURL: String? { EnrollmentPost.enrollURL(forServer: serverURL) }

    /// Enrolls and writes the credential; the server's answer (the credential is in `tokenFile`).
    package func run() async throws(EnrollmentError) -> EnrollmentResponse {
        let key: EnrollmentKeyText
        do {
            key = try EnrollmentKeyFile.read(keyFile)
        } catch {
            throw .keyFile(error)
        }
        guard let client = EnrollmentClient(serverURL: serverURL, trust: trust, software: software) else {
            throw EnrollmentError(
                code: "bad_url", message: "\(serverURL) is not a ws://, wss://, http:// or https:// URL with a host",
                hint: "give the server's sync URL", isTransient: false)
        }
        let response = try await client.enroll(EnrollmentRequest(key: key.text, deviceID: deviceID, name: name, release: TetherVersion.release))
        await FaultInjection.enrollGateIfRequested()
        // This device's credential being replaced is kept, another device's (a clone's file)
        // dropped (``CredentialHistory``); a failure here shows at the write below (same directory).
        try? CredentialHistory.remember(currentOf: tokenFile, deviceID: deviceID)
        do {
            try CredentialWriter.write(response.credential, to: tokenFile, newFileOwner: newFileOwner)
        } catch {
            throw .credentialNotWritten(tokenFile, reason: error.reason)
        }
        return response
    }

    /// The credential check of an attempt: what `token_file` holds against this device's id.
    /// `refused`: the server refused every credential the device has (``CredentialDecision``).
    static func decision(_ server: ServerSettings, deviceID: String, refused: Bool = false) -> CredentialDecision {
        CredentialDecision.decide(
            token: TokenFile.inspect(server.tokenFile), tokenFile: server.tokenFile, enrollmentKey: server.enrollmentKeyFile != nil,
            deviceID: deviceID, refused: refused)
    }
}
