import Crypto
import Foundation

/// The machine this agent runs on, as systemd's convention names it (machine-id(5)): tetherd
/// records an application-specific id derived from `/etc/machine-id` — never the raw id — and
/// a different one at a start means the state directory came from another machine (a golden
/// image's first boot regenerates the machine id), so the stores' sync identities are not
/// this machine's to use (docs/client-reset.md, "Restored and cloned devices").
package enum MachineIdentity {
    /// The file the machine id is read from. `TETHER_MACHINE_ID_FILE` replaces it for tests and
    /// for containers whose machine id lives elsewhere.
    package static var path: String {
        ProcessInfo.processInfo.environment["TETHER_MACHINE_ID_FILE"] ?? "/etc/machine-id"
    }

    /// Tether's application id (a fixed random UUID): the key systemd's
    /// `sd_id128_get_machine_app_specific()` would be given.
    static let applicationID: [UInt8] = [
        0x5b, 0x2e, 0x91, 0xc4, 0x0d, 0x7a, 0x4f, 0x36, 0xa8, 0x13, 0x6c, 0xe2, 0x94, 0x51, 0xb7, 0x0f,
    ]

    package enum Failure: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case malformed(path: String)

        package var description: String {
            switch self {
            case .unreadable(let path, let reason): "cannot read the machine id from \(path): \(reason)"
            case .malformed(let path): "\(path) does not hold a machine id (32 hexadecimal digits)"
            }
        }
    }

    /// The app-specific id of the machine id in the file at `path`, as 32 lowercase hex digits.
    package static func current(path: String = path) throws(Failure) -> String {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
        guard let machine = parse(text) else { throw .malformed(path: path) }
        return appSpecific(machine: machine)
    }

    /// What `sd_id128_get_machine_app_specific()` computes: HMAC-SHA256 keyed with the machine
    /// id over the application id, its first 16 bytes made a version-4 UUID.
    static func appSpecific(machine: [UInt8]) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: applicationID, using: SymmetricKey(data: machine))
        var id = Array(code.prefix(16))
        id[6] = (id[6] & 0x0F) | 0x40
        id[8] = (id[8] & 0x3F) | 0x80
        return id.map { String(format: "%02x", $0) }.joined()
    }

    /// The 16 bytes of a machine-id file's first line (32 hex digits).
    static func parse(_ text: String) -> [UInt8]? {
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard line.count == 32 else { return nil }
        var bytes: [UInt8] = []
        var index = line.startIndex
        while index < line.endIndex {
            let next = line.index(index, offsetBy: 2)
            guard let byte = UInt8(line[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
