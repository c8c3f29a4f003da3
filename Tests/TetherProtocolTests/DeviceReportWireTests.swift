import Testing
import TetherProtocol

/// The protocol-6 device report on the wire (docs/protocol.md, "`08` report").
@Suite struct DeviceReportWireTests {
    static let example = DeviceReport(
        token: "tok", deviceID: "0123456789abcdef0123456789abcdef", deviceName: "till-07 (shop 3)", release: "0.1.0",
        entries: [
            .init(
                partition: "store-1", state: "reset-pending", serverVersion: 12, clientFile: 5, unsyncedChanges: 3, unsyncedFor: 40,
                lastUploadAgo: 100, lastError: .init(code: 211, ago: 7), resets: ["recovered": 2, "discarded": 1],
                pendingReset: "manual mode: run `tetherctl reset initiate`"),
            .init(partition: "store-2", state: "synced", serverVersion: 4),
        ])

    @Test func roundTrips() throws {
        let message = ClientMessage.report(Self.example)
        #expect(try ClientMessage.decode(message.encoded()) == message)
        #expect(message.name == "report")
        #expect(message.session == nil)
        let bare = DeviceReport(token: "t", deviceID: "d", deviceName: "n", release: "r", entries: [])
        #expect(hex(ClientMessage.report(bare).encoded()) == "08 01 74 01 64 01 6e 01 72 00")
    }

    /// The report's bytes with one field replaced.
    static func bytes(deviceID: String = "dev", name: String = "till", flags: UInt8 = 0, partitions: [String] = ["p"], outcomes: [String] = []) -> [UInt8] {
        var w = ByteWriter()
        w.raw([0x08])
        w.string("tok")
        w.string(deviceID)
        w.string(name)
        w.string("0.1.0")
        w.varint(partitions.count)
        for partition in partitions {
            w.string(partition)
            w.string("synced")
            w.raw([0x01, 0x02, 0x00, flags])
            w.varint(outcomes.count)
            for outcome in outcomes {
                w.string(outcome)
                w.varint(1)
            }
        }
        return w.bytes
    }

    /// What an operator is shown comes from the device: control characters (terminal escapes,
    /// bidirectional overrides), ids outside their alphabet, unknown flags and duplicates are
    /// refused with 103 before anything is kept.
    @Test func hostileReportsAre103() {
        #expect(code { try ClientMessage.decode(Self.bytes()) } == nil)
        for name in ["till\u{1b}[31m", "a\nb", "x\u{202e}y", "\u{7f}"] {
            #expect(code { try ClientMessage.decode(Self.bytes(name: name)) } == .badSyntax, "\(name.debugDescription)")
        }
        for id in ["", "a/b", "a b", String(repeating: "a", count: 65), "é"] {
            #expect(code { try ClientMessage.decode(Self.bytes(deviceID: id)) } != nil, "\(id.debugDescription)")
        }
        #expect(code { try ClientMessage.decode(Self.bytes(flags: 0x10)) } == .badSyntax)
        #expect(code { try ClientMessage.decode(Self.bytes(partitions: ["p", "p"])) } == .badSyntax)
        #expect(code { try ClientMessage.decode(Self.bytes(outcomes: ["recovered", "recovered"])) } == .badSyntax)
        #expect(code { try ClientMessage.decode(Self.bytes(outcomes: (0..<17).map { "o\($0)" })) } == .limitsExceeded)
        #expect(code { try ClientMessage.decode(Self.bytes(name: String(repeating: "n", count: 256))) } == .limitsExceeded)
        // After the entries, protocol 8's accepted actions (a count, here 0), then nothing.
        #expect(code { try ClientMessage.decode(Self.bytes() + [0x00, 0x00]) } == .badSyntax)
        // A server must not send one.
        #expect(code { try ServerMessage.decode(Self.bytes()) } == .unknownMessage)
    }
}
