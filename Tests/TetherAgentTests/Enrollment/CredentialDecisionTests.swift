import Testing
@testable import TetherAgent

/// ``CredentialDecision``: every kind of token file, with and without an enrollment key.
@Suite struct CredentialDecisionTests {
    static let me = String(repeating: "a1", count: 16)
    static let golden = String(repeating: "b2", count: 16)

    func decide(_ token: TokenFile, key: Bool) -> CredentialDecision {
        CredentialDecision.decide(token: token, tokenFile: "/var/lib/tether/token", enrollmentKey: key, deviceID: Self.me)
    }

    @Test func nothingToBindWithEnrollsWhenAKeyIsSet() {
        for token in [TokenFile.missing, .empty] {
            #expect(decide(token, key: true) == .enroll(.noToken), "\(token)")
            #expect(decide(token, key: false) == .useToken, "\(token): the bind says it is missing, as it always did")
        }
    }

    @Test func thisDevicesCredentialAnotherTokenOrAnUnreadableFileIsUsedAsItIs() {
        for key in [true, false] {
            #expect(decide(.credential(deviceID: Self.me), key: key) == .useToken)
            #expect(decide(.token, key: key) == .useToken, "a [[user]] token")
            #expect(decide(.unreadable("EACCES"), key: key) == .useToken, "the bind reports it")
        }
    }

    @Test func aClonedCredentialEnrollsWithAKeyAndStopsWithoutOne() {
        #expect(decide(.credential(deviceID: Self.golden), key: true) == .enroll(.clonedCredential(issuedTo: Self.golden)))
        guard case .stop(let error) = decide(.credential(deviceID: Self.golden), key: false) else {
            Issue.record("\(decide(.credential(deviceID: Self.golden), key: false))")
            return
        }
        #expect(error.code == "cloned_credential" && !error.isTransient)
        #expect(error.message.contains(Self.golden) && error.message.contains(Self.me) && error.message.contains("/var/lib/tether/token"))
        #expect(error.hint.contains("enrollment_key_file") && error.hint.contains("tetherctl enroll"))
    }

    /// The server refused this device's credential and every earlier one: with a key the
    /// device enrolls again; without one it binds on (the refusal is logged with a hint).
    @Test func aCredentialRefusedEverywhereEnrollsWithAKey() {
        func decide(_ token: TokenFile, key: Bool) -> CredentialDecision {
            CredentialDecision.decide(token: token, tokenFile: "/var/lib/tether/token", enrollmentKey: key, deviceID: Self.me, refused: true)
        }
        #expect(decide(.credential(deviceID: Self.me), key: true) == .enroll(.credentialRefused))
        #expect(decide(.credential(deviceID: Self.me), key: false) == .useToken)
        #expect(decide(.token, key: true) == .useToken, "a [[user]] token is not a device's to replace")
        #expect(decide(.credential(deviceID: Self.golden), key: true) == .enroll(.clonedCredential(issuedTo: Self.golden)), "a clone is a clone")
        #expect(decide(.missing, key: true) == .enroll(.noToken))
    }

    @Test func theReasonSaysWhy() {
        #expect("\(EnrollmentReason.credentialRefused)".contains("refused this device's credential and every earlier one"))
        #expect("\(EnrollmentReason.noToken)" == "token_file is missing or empty")
        #expect("\(EnrollmentReason.clonedCredential(issuedTo: Self.golden))".contains("credential of device \(Self.golden)"))
    }
}
