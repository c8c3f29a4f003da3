import Testing
import TetherProtocol

/// The protocol-4 heal messages on the wire (docs/protocol.md, "`07` heal" and "`88` healed"):
/// the documented bytes, and strict decoding of everything else.
@Suite struct HealWireTests {
    static let example = HealChunk(
        session: 1, contribution: 5, view: ServerVersion(version: 3, salt: 9), base: 4, isFinal: true,
        unknown: ChangeRows(Changeset([.delete("t", .integer(2))])),
        rows: ChangeRows(Changeset([.insert("t", .integer(1), ["a": .text("x")])])))

    @Test func healMatchesTheDocumentedBytes() throws {
        let bytes = ClientMessage.heal(Self.example).encoded()
        #expect(hex(bytes) == "07 01 05 03 09 04 01 01 01 74 00 01 02 00 01 04 01 01 74 01 01 61 01 00 00 01 02 01 00 03 01 78")
        #expect(try ClientMessage.decode(bytes) == .heal(Self.example))
        #expect(ClientMessage.heal(Self.example).name == "heal")
        #expect(ClientMessage.heal(Self.example).session == 1)
    }

    @Test func theOfferIsEmptyAndNotFinal() throws {
        let offer = HealChunk.offer(session: 1, contribution: 5, view: ServerVersion(version: 3, salt: 9), base: 4)
        #expect(hex(ClientMessage.heal(offer).encoded()) == "07 01 05 03 09 04 00 00 00 00 00 00 00")
    }

    @Test func healedMatchesTheDocumentedBytes() throws {
        let reply = HealReply(session: 1, contribution: 5, outcome: .completed, healedChanges: 3)
        #expect(hex(ServerMessage.healed(reply).encoded()) == "88 01 05 01 03 00")
        let refused = HealReply(session: 1, contribution: 5, outcome: .notWanted, healedChanges: 0, reason: "no")
        #expect(hex(ServerMessage.healed(refused).encoded()) == "88 01 05 02 00 02 6e 6f")
        #expect(try ServerMessage.decode(ServerMessage.healed(refused).encoded()) == .healed(refused))
        #expect(ServerMessage.healed(reply).session == 1)
        let covered = HealReply(session: 1, contribution: 5, outcome: .covered, healedChanges: 0, reason: "no")
        #expect(hex(ServerMessage.healed(covered).encoded()) == "88 01 05 04 00 02 6e 6f")
        #expect(try ServerMessage.decode(ServerMessage.healed(covered).encoded()) == .healed(covered))
    }

    /// The heal bytes with `flags`, `unknown` and `rows` in place of the example's.
    static func heal(flags: UInt8 = 1, unknown: Changeset? = nil, rows: Changeset? = nil) -> [UInt8] {
        var w = ByteWriter()
        w.raw([0x07, 0x01, 0x05, 0x03, 0x09, 0x04, flags])
        (unknown.map(ChangeRows.init) ?? example.unknown).encode(into: &w)
        (rows.map(ChangeRows.init) ?? example.rows).encode(into: &w)
        return w.bytes
    }

    @Test func malformedHealsAre103() {
        #expect(code { try ClientMessage.decode(Self.heal()) } == nil)
        // Flags other than bit 0 (final).
        for flags: UInt8 in [0x02, 0x03, 0x80] {
            #expect(code { try ClientMessage.decode(Self.heal(flags: flags)) } == .badSyntax, "flags \(flags)")
        }
        // Unknown keys are deletes only.
        for change: RowChange in [.insert("t", .integer(2), ["a": .null]), .update("t", .integer(2), ["a": .null])] {
            #expect(code { try ClientMessage.decode(Self.heal(unknown: Changeset([change]))) } == .badSyntax, "\(change)")
        }
        // A view's rows are inserts or deletes, never updates.
        #expect(code { try ClientMessage.decode(Self.heal(rows: Changeset([.update("t", .integer(1), ["a": .text("y")])]))) } == .badSyntax)
        #expect(code { try ClientMessage.decode(Self.heal(rows: Changeset([.delete("t", .integer(1))]))) } == nil)
        // Trailing bytes after the rows.
        #expect(code { try ClientMessage.decode(Self.heal() + [0x00]) } == .badSyntax)
        // A session id beyond 32 bits.
        #expect(code { try ClientMessage.decode([0x07, 0x80, 0x80, 0x80, 0x80, 0x10, 0x05, 0x03, 0x09, 0x04, 0x00, 0, 0, 0, 0, 0, 0]) } == .badSyntax)
    }

    @Test func malformedHealedAre103() {
        // Outcomes are 0 to 4.
        #expect(code { try ServerMessage.decode([0x88, 0x01, 0x05, 0x04, 0x00, 0x00]) } == nil)
        #expect(code { try ServerMessage.decode([0x88, 0x01, 0x05, 0x05, 0x00, 0x00]) } == .badSyntax)
        #expect(code { try ServerMessage.decode([0x88, 0x01, 0x05, 0xFF, 0x00, 0x00]) } == .badSyntax)
        // Healed changes beyond Int64, a truncated reason, trailing bytes.
        #expect(code { try ServerMessage.decode([0x88, 0x01, 0x05, 0x01] + [UInt8](repeating: 0xFF, count: 9) + [0x01, 0x00]) } == .badSyntax)
        #expect(code { try ServerMessage.decode([0x88, 0x01, 0x05, 0x01, 0x03, 0x02, 0x6e]) } == .badSyntax)
        #expect(code { try ServerMessage.decode([0x88, 0x01, 0x05, 0x01, 0x03, 0x00, 0x00]) } == .badSyntax)
        // A client must not send healed, a server must not send heal.
        #expect(code { try ClientMessage.decode([0x88, 0x01, 0x05, 0x01, 0x03, 0x00]) } == .unknownMessage)
        #expect(code { try ServerMessage.decode(Self.heal()) } == .unknownMessage)
    }
}
