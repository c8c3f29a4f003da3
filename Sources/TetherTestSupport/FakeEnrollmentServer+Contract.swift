import Foundation
import TetherProtocol

extension FakeEnrollmentServer {
    /// What the fake server knows: keys and the devices they enrolled, and the contract's
    /// decisions (docs/contract.md "Enrollment"): a key's tags go to each device it enrolls; a
    /// device enrolling again with the key that enrolled it keeps its id, name and tags and gets
    /// a fresh credential (200); a used-up key never enrolls another device; a refusal burns no use.
    package struct Contract: Sendable {
        package enum KeyState: Sendable { case active, expired, revoked }

        package struct Key: Sendable {
            package var text: String
            package var tags: [String: String]
            /// nil: reusable.
            package var uses: Int?
            package var used = 0
            package var state: KeyState
        }

        package struct Device: Sendable, Hashable {
            package var id: String
            package var name: String
            package var tags: [String: String]
            package var keyID: String
            /// The last credential given (the fake keeps it whole, for the tests' checks).
            package var credential: String
            /// How many times it enrolled (the first and every repeat).
            package var enrollments: Int
        }

        package var keys: [String: Key] = [:]
        package var devices: [String: Device] = [:]

        mutating func addKey(tags: [String: String], uses: Int?, state: KeyState) -> String {
            let id = Self.randomHex(8)
            let text = EnrollmentKeyText(keyID: id, secret: Self.randomSecret()).text
            keys[id] = Key(text: text, tags: tags, uses: uses, state: state)
            return text
        }

        /// The answer to a request's body.
        mutating func enroll(_ body: [UInt8]) -> Answer {
            guard let request = try? JSONDecoder().decode(EnrollmentRequest.self, from: Data(body)),  // not the contract's: refused as malformed
                DeviceReport.isValidDeviceID(request.deviceID)
            else { return .refusal(.malformed) }
            guard let parsed = EnrollmentKeyText(parsing: request.key), var key = keys[parsed.keyID], key.text == parsed.text else {
                return .refusal(.unknownKey)
            }
            switch key.state {
            case .expired: return .refusal(.expiredKey)
            case .revoked: return .refusal(.revokedKey)
            case .active: break
            }
            if let name = request.name, !DeviceIdentityRules.isValidName(name) { return .refusal(.invalidName) }
            if var device = devices[request.deviceID] {
                guard device.keyID == parsed.keyID else { return .refusal(.deviceEnrolled) }
                device.credential = DeviceCredential(deviceID: device.id, secret: Self.randomSecret()).text
                device.enrollments += 1
                devices[device.id] = device
                return Self.answer(200, device)
            }
            if let uses = key.uses, key.used >= uses { return .refusal(.usedUpKey) }
            let name = request.name ?? "device-\(request.deviceID.prefix(8))"
            if devices.values.contains(where: { $0.name == name }) { return .refusal(.nameTaken) }
            key.used += 1
            keys[parsed.keyID] = key
            let device = Device(
                id: request.deviceID, name: name, tags: key.tags, keyID: parsed.keyID,
                credential: DeviceCredential(deviceID: request.deviceID, secret: Self.randomSecret()).text, enrollments: 1)
            devices[device.id] = device
            return Self.answer(201, device)
        }

        static func answer(_ status: Int, _ device: Device) -> Answer {
            let response = EnrollmentResponse(deviceID: device.id, name: device.name, tags: device.tags, credential: device.credential)
            let body = (try? JSONEncoder().encode(response)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"  // a plain struct: encodes
            return Answer(status: status, body: body)
        }

        static func randomHex(_ bytes: Int) -> String {
            var generator = SystemRandomNumberGenerator()
            return (0..<bytes).map { _ in
                let byte = UInt8.random(in: 0...255, using: &generator)
                return (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }.joined()
        }

        /// 32 random bytes, base64url without padding (43 characters).
        static func randomSecret() -> String {
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }
}
