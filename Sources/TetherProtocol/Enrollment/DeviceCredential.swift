/// The text forms of the secrets enrollment deals in. Each carries an id the server looks the
/// secret up by, and 256 random bits the server keeps only as a digest:
///
/// - a device credential: `tdc1.<device id>.<secret>` (the device id is the ledger's, so a
///   credential cannot speak for another device);
/// - an enrollment key: `tek1.<key id>.<secret>` (key id: 16 hex digits).
///
/// The secret is 43 characters of base64url without padding (32 bytes).
package struct DeviceCredential: Sendable, Hashable {
    package var deviceID: String
    package var secret: String

    package static let prefix = "tdc1"

    package init(deviceID: String, secret: String) {
        self.deviceID = deviceID
        self.secret = secret
    }

    /// Nil when `text` is not a credential's form (a `[[user]]` token, say).
    package init?(parsing text: String) {
        guard let (id, secret) = SecretText.split(text, prefix: Self.prefix), DeviceReport.isValidDeviceID(id) else { return nil }
        self.init(deviceID: id, secret: secret)
    }

    package var text: String { "\(Self.prefix).\(deviceID).\(secret)" }
}

/// An enrollment key's text form (see ``DeviceCredential``).
package struct EnrollmentKeyText: Sendable, Hashable {
    package var keyID: String
    package var secret: String

    package static let prefix = "tek1"

    package init(keyID: String, secret: String) {
        self.keyID = keyID
        self.secret = secret
    }

    package init?(parsing text: String) {
        guard let (id, secret) = SecretText.split(text, prefix: Self.prefix), id.utf8.count == 16,
            id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        self.init(keyID: id, secret: secret)
    }

    package var text: String { "\(Self.prefix).\(keyID).\(secret)" }
}

enum SecretText {
    /// `prefix.id.secret` with a 43-character base64url secret, surrounding whitespace ignored.
    static func split(_ text: String, prefix: String) -> (String, String)? {
        let parts = text.trimmingWhitespace().split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == prefix, parts[2].utf8.count == 43,
            parts[2].utf8.allSatisfy({ b in
                (0x30...0x39).contains(b) || (0x41...0x5a).contains(b) || (0x61...0x7a).contains(b) || b == 0x2d || b == 0x5f
            })
        else { return nil }
        return (String(parts[1]), String(parts[2]))
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> Substring {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return slice
    }
}
