import Testing
import TetherProtocol

@Suite struct TerminalTextTests {
    /// Every scalar that must be shown escaped (issue 46: terminal escapes and forged lines).
    static let dangerous: [UInt32] =
        Array(0x00...0x1F) + [0x7F] + Array(0x80...0x9F) + [0x2028, 0x2029] + Array(0x202A...0x202E) + Array(0x2066...0x2069)
        + [0x200E, 0x200F, 0x061C]

    @Test func everyControlAndBidiCharacterIsEscapedVisibly() {
        for value in Self.dangerous {
            let scalar = Unicode.Scalar(value)!
            #expect(TerminalText.needsEscape(scalar), "U+\(String(value, radix: 16))")
            let shown = TerminalText.safe("a" + String(Character(scalar)) + "b")
            #expect(shown.hasPrefix("a\\") && shown.hasSuffix("b"), "U+\(String(value, radix: 16)): \(shown.debugDescription)")
            #expect(!shown.unicodeScalars.contains { TerminalText.needsEscape($0) }, "U+\(String(value, radix: 16))")
            #expect(shown.unicodeScalars.allSatisfy { $0.isASCII }, "U+\(String(value, radix: 16)) is shown in ASCII")
        }
    }

    @Test func theCommonOnesHaveShortForms() {
        #expect(TerminalText.safe("\n") == "\\n")
        #expect(TerminalText.safe("\r") == "\\r")
        #expect(TerminalText.safe("\t") == "\\t")
        #expect(TerminalText.safe("\u{1B}[2J") == "\\e[2J")
        #expect(TerminalText.safe("\u{0}") == "\\u{00}")
        #expect(TerminalText.safe("\u{7}") == "\\u{07}")
        #expect(TerminalText.safe("\u{7F}") == "\\u{7F}")
        #expect(TerminalText.safe("\u{9B}31m") == "\\u{9B}31m")
        #expect(TerminalText.safe("\u{202E}gpj.exe") == "\\u{202E}gpj.exe")
        #expect(TerminalText.safe("\u{2028}") == "\\u{2028}")
    }

    @Test func everyOtherScalarOfTheFirstPlanesIsLeftAlone() {
        let dangerous = Set(Self.dangerous)
        for value in UInt32(0)...0x2FFF where !dangerous.contains(value) {
            guard let scalar = Unicode.Scalar(value) else { continue }
            #expect(!TerminalText.needsEscape(scalar), "U+\(String(value, radix: 16))")
        }
    }

    @Test func plainTextIsUnchanged() {
        for text in [
            "", "tether-server 1.4.0", "partition restored from a \"backup\" (hint: C:\\path)", "Gerät Küche — 東京 ✓ שלום مرحبا 🚀",
            "state=synced code=201", "e\u{301}", "👩‍👩‍👧",
        ] {
            #expect(TerminalText.safe(text) == text)
        }
    }

    @Test func mixedTextEscapesOnlyTheControls() {
        #expect(
            TerminalText.safe("fake-server\u{1B}[2J\nserver ok: connected\u{9B}0m Küche\u{202E}txt")
                == "fake-server\\e[2J\\nserver ok: connected\\u{9B}0m Küche\\u{202E}txt")
        #expect(!TerminalText.safe("a\nb\r\nc").contains("\n"))
    }
}
