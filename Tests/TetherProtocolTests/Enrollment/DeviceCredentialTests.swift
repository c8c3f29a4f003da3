import Foundation
import Testing

@testable import TetherProtocol

/// The text forms of credentials and keys, and the rules for names and tags, as an attacker
/// would probe them.
@Suite struct DeviceCredentialTests {
    static let secret = String(repeating: "A", count: 42) + "_"

    @Test func aCredentialNamesItsDeviceAndNothingElseParses() {
        let credential = DeviceCredential(deviceID: "0123456789abcdef0123456789abcdef", secret: Self.secret)
        #expect(DeviceCredential(parsing: credential.text) == credential)
        #expect(DeviceCredential(parsing: " \(credential.text)\n") == credential)
        for bad in [
            "", "tdc1", "tdc1..\(Self.secret)", "tdc2.abc.\(Self.secret)", "tdc1.abc.\(Self.secret)x",
            "tdc1.abc.\(Self.secret.dropLast())", "tdc1.a/b.\(Self.secret)", "tdc1.abc.\(Self.secret).x",
            "tdc1.abc.\(Self.secret.dropLast())=", "a-plain-user-token",
        ] {
            #expect(DeviceCredential(parsing: bad) == nil, "\(bad.debugDescription) is not a credential")
        }
    }

    @Test func aKeyIdIsSixteenLowercaseHexDigits() {
        let key = EnrollmentKeyText(keyID: "00ff00ff00ff00ff", secret: Self.secret)
        #expect(EnrollmentKeyText(parsing: key.text) == key)
        #expect(EnrollmentKeyText(parsing: "tek1.00FF00FF00FF00FF.\(Self.secret)") == nil)
        #expect(EnrollmentKeyText(parsing: "tek1.00ff00ff00ff00f.\(Self.secret)") == nil)
        #expect(EnrollmentKeyText(parsing: "tdc1.00ff00ff00ff00ff.\(Self.secret)") == nil)
    }

    @Test func namesAndTagsAreWhatATemplateCanPutInAPartitionName() {
        #expect(DeviceIdentityRules.isValidName("pos-17"))
        #expect(!DeviceIdentityRules.isValidName(""))
        #expect(!DeviceIdentityRules.isValidName("-pos"))
        #expect(!DeviceIdentityRules.isValidName("pos\u{1b}[31m"))
        #expect(!DeviceIdentityRules.isValidName(String(repeating: "a", count: 65)))
        #expect(DeviceIdentityRules.parseTag("store=0042")! == ("store", "0042"))
        #expect(DeviceIdentityRules.parseTag("Store=1") == nil)
        #expect(DeviceIdentityRules.parseTag("store=") == nil)
        #expect(DeviceIdentityRules.parseTag("store") == nil)
        #expect(DeviceIdentityRules.parseTag("store=a\nb") == nil)
        #expect(DeviceIdentityRules.parseTag("role=till=1") == nil)
    }

    @Test func everyRefusalHasAStatusAHintAndAStableCode() throws {
        for code in EnrollmentErrorCode.allCases {
            #expect((400...599).contains(code.httpStatus))
            #expect(!code.hint.isEmpty)
        }
        let failure = EnrollmentFailure(.usedUpKey, "key 00ff00ff00ff00ff has enrolled 3 of 3 devices")
        let json = String(decoding: try JSONEncoder().encode(failure), as: UTF8.self)
        #expect(json.contains(#""code":"used_up_key""#))
        #expect(try JSONDecoder().decode(EnrollmentFailure.self, from: Data(json.utf8)) == failure)
        let request = EnrollmentRequest(key: "k", deviceID: "d", name: nil, release: "1.0")
        #expect(String(decoding: try JSONEncoder().encode(request), as: UTF8.self).contains(#""device_id":"d""#))
    }
}
