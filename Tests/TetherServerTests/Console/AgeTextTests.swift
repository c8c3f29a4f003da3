import Testing
@testable import TetherServer

/// Ages in words: the largest whole unit, rounded down.
@Suite struct AgeTextTests {
    @Test(arguments: [
        (0, "just now"), (59, "just now"), (-5, "just now"), (60, "1 min ago"), (3599, "59 min ago"), (3600, "1 h ago"),
        (3 * 3600 + 1800, "3 h ago"), (86_399, "23 h ago"), (86_400, "1 d ago"), (2 * 86_400 + 7, "2 d ago"), (400 * 86_400, "400 d ago"),
    ])
    func agesInWords(seconds: Int, words: String) {
        #expect(AgeText.words(seconds: seconds) == words)
    }

    @Test func spansInTheirLargestUnit() {
        #expect(AgeText.span(seconds: 45) == "45 s")
        #expect(AgeText.span(seconds: Int64(720)) == "12 min")
        #expect(AgeText.span(seconds: -3) == "0 s")
        #expect(AgeText.span(seconds: Int64.max) == "\(Int.max / 86_400) d")
    }
}
