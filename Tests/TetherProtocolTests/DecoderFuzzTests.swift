import Testing
import TetherTestSupport
import TetherProtocol

/// Random and mutated inputs: the decoders must return a message or throw a typed
/// ``WireDecodeError`` (102/103/104) — never trap, hang or allocate by a forged length.
@Suite struct DecoderFuzzTests {
    static let iterations = 100_000

    @Test func randomBytes() {
        var rng = SeededRandom(seed: 0x7E7_4E5)
        var decoded = 0
        for i in 0..<Self.iterations {
            let length = Int.random(in: 0...48, using: &rng)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Give most inputs a valid type byte so the bodies get exercised.
            if !bytes.isEmpty, i % 4 != 0 {
                let types = MessageType.allCases
                bytes[0] = types[Int.random(in: 0..<types.count, using: &rng)].rawValue
            }
            if fuzz(bytes) { decoded += 1 }
        }
        #expect(decoded < Self.iterations)
    }

    @Test func mutatedValidMessages() {
        var rng = SeededRandom(seed: 42)
        let seeds = Fixtures.clientMessages.map { $0.encoded() } + Fixtures.serverMessages.map { $0.encoded() }
        for _ in 0..<Self.iterations {
            var bytes = seeds[Int.random(in: 0..<seeds.count, using: &rng)]
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where !bytes.isEmpty:
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
                case 1 where !bytes.isEmpty:
                    bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &rng)...)
                case 2:
                    bytes.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...bytes.count, using: &rng))
                default:
                    if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = 0xFF }
                }
            }
            _ = fuzz(bytes)
        }
    }

    /// Accepted state rows are read in place without further checks: every row and field must
    /// be readable, and the rows must decode as the changeset they are.
    private func readEveryField(_ rows: StateRows) {
        var fields = 0
        let rowCount = rows.withCursor { cursor in
            var count = 0
            while let row = cursor.nextRow() {
                #expect(row.table < rows.tables.count)
                count += 1
                while cursor.fieldsLeft > 0 {
                    #expect(cursor.nextField().column < rows.columns.count)
                    fields += 1
                }
            }
            return count
        }
        #expect(rowCount == rows.count)
        #expect(rows.changeset.changes.reduce(0) { $0 + $1.fields.count } == fields)
    }

    /// The check a server runs on stored changesets accepts exactly what the decoder accepts.
    @Test func theChangesetCheckAgreesWithTheDecoder() {
        var rng = SeededRandom(seed: 0xC4EC)
        let seeds = [Fixtures.changeset.encoded, Changeset([.delete("t", .text("k")), .update("t", .integer(-3), ["a": .blob([1, 2])])]).encoded]
        for i in 0..<Self.iterations {
            var bytes = seeds[i % seeds.count]
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                switch Int.random(in: 0..<3, using: &rng) {
                case 0 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
                case 1 where !bytes.isEmpty: bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &rng)...)
                default: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...bytes.count, using: &rng))
                }
            }
            let decoded = (try? Changeset.decode(bytes)) != nil
            let checked = (try? Changeset.check(bytes)) != nil
            #expect(decoded == checked, "\(bytes)")
        }
    }

    /// True when either decoder accepted the bytes. An accepted message must re-encode to
    /// bytes that decode and encode again to the same bytes (compared as bytes: NaN ≠ NaN).
    private func fuzz(_ bytes: [UInt8]) -> Bool {
        var accepted = false
        do {
            let reencoded = try ClientMessage.decode(bytes).encoded()
            #expect((try? ClientMessage.decode(reencoded).encoded()) == reencoded)
            accepted = true
        } catch {
            #expect([.unknownMessage, .badSyntax, .limitsExceeded].contains(error.code))
        }
        do {
            let message = try ServerMessage.decode(bytes)
            let reencoded = message.encoded()
            #expect((try? ServerMessage.decode(reencoded).encoded()) == reencoded)
            if case .state(let chunk) = message { readEveryField(chunk.rows) }
            accepted = true
        } catch {
            #expect([.unknownMessage, .badSyntax, .limitsExceeded].contains(error.code))
        }
        return accepted
    }
}
