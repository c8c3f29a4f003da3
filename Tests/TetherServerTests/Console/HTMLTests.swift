import Testing
@testable import TetherServer

/// The console's markup type: every interpolated value is text unless it is markup.
@Suite struct HTMLTests {
    @Test func interpolatedTextIsEscapedAndMarkupIsNot() {
        let name = "<img src=x onerror=alert(1)>"
        let cell: HTML = "<td>\(name)</td>"
        #expect(cell.text == "<td>&lt;img src=x onerror=alert(1)&gt;</td>")
        let row: HTML = "<tr>\(cell)</tr>"
        #expect(row.text == "<tr><td>&lt;img src=x onerror=alert(1)&gt;</td></tr>", "markup is not escaped twice")
        let count = 3
        let quoted = "a\"b"
        #expect(("<p title=\"\(quoted)\">\(count)</p>" as HTML).text == "<p title=\"a&quot;b\">3</p>")
        #expect(("\(raw: "<br>")" as HTML).text == "<br>")
        #expect(([HTML("<i>"), "\("&")"] as [HTML]).joined(separator: "|").text == "<i>|&amp;")
        let optional: String? = nil
        #expect(("\(optional ?? "<none>")" as HTML).text == "&lt;none&gt;")
    }
}
