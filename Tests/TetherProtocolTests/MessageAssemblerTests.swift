import Testing
import TetherProtocol

@Suite struct MessageAssemblerTests {
    @Test func joinsFragments() {
        var assembler = MessageAssembler(limit: 10)
        #expect(assembler.append(.binary, [1, 2], fin: false) == .incomplete)
        #expect(assembler.append(.continuation, [3], fin: false) == .incomplete)
        #expect(assembler.append(.continuation, [4], fin: true) == .message([1, 2, 3, 4]))
        #expect(assembler.append(.binary, [5], fin: true) == .message([5]))
    }

    @Test func refusesTextStrayContinuationsAndOversize() {
        var assembler = MessageAssembler(limit: 4)
        #expect(assembler.append(.text, Array("hi".utf8), fin: true) == .failure(.notBinary))
        #expect(assembler.append(.continuation, [1], fin: true) == .failure(.malformed(field: "frame", reason: "a continuation frame without a message")))
        #expect(assembler.append(.binary, [1, 2, 3], fin: false) == .incomplete)
        #expect(assembler.append(.continuation, [4, 5], fin: true) == .failure(.messageTooLarge(size: 5, limit: 4)))
        #expect(assembler.append(.binary, [1, 2, 3, 4, 5], fin: true) == .failure(.messageTooLarge(size: 5, limit: 4)))
        #expect(assembler.append(.binary, [1], fin: false) == .incomplete)
        if case .failure(let error) = assembler.append(.binary, [2], fin: true) {
            #expect(error.code == .badSyntax)
        } else {
            Issue.record("a new message before the previous ended was accepted")
        }
    }
}
