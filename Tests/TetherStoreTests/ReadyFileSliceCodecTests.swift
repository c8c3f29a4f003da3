import Testing
import TetherStore

/// A ready file's slices compressed and inflated (docs/protocol.md, `8a`): what comes out is
/// exactly what went in, and anything damaged or of another size is none.
@Suite struct ReadyFileSliceCodecTests {
    static let text = Array(String(repeating: "INSERT INTO t VALUES (1, 'a row as text');", count: 2000).utf8)

    @Test func whatIsDeflatedInflatesToTheSameBytes() throws {
        let stream = try #require(Self.text.withUnsafeBytes { ReadyFileSliceCodec.deflate($0) })
        #expect(stream.count < Self.text.count / 10)
        #expect(ReadyFileSliceCodec.inflate(stream, fileBytes: Self.text.count) == Self.text)
    }

    @Test func bytesThatDoNotCompressAreNotDeflated() {
        var random = SystemRandomNumberGenerator()
        let noise = (0..<65536).map { _ in UInt8.random(in: 0...255, using: &random) }
        #expect(noise.withUnsafeBytes { ReadyFileSliceCodec.deflate($0) } == nil)
        #expect([UInt8]().withUnsafeBytes { ReadyFileSliceCodec.deflate($0) } == nil)
    }

    @Test func aDamagedStreamOrAnotherSizeInflatesToNothing() throws {
        let stream = try #require(Self.text.withUnsafeBytes { ReadyFileSliceCodec.deflate($0) })
        #expect(ReadyFileSliceCodec.inflate(stream, fileBytes: Self.text.count - 1) == nil, "more than it may hold")
        #expect(ReadyFileSliceCodec.inflate(stream, fileBytes: Self.text.count + 1) == nil, "less than it says")
        var damaged = stream
        damaged[damaged.count / 2] ^= 0x5a
        #expect(ReadyFileSliceCodec.inflate(damaged, fileBytes: Self.text.count) == nil, "Adler-32 or the stream catches it")
        #expect(ReadyFileSliceCodec.inflate(Array(stream.dropLast()), fileBytes: Self.text.count) == nil, "cut short")
        #expect(ReadyFileSliceCodec.inflate(stream + [0], fileBytes: Self.text.count) == nil, "trailing bytes")
    }
}
