import Foundation
import Testing
@testable import TetherServer

/// What a device or an operator typed never becomes markup (``ConsoleHTML``).
@Suite struct ConsoleHTMLTests {
    @Test func textIsEscapedForElementsAndAttributes() {
        #expect(ConsoleHTML.escape("<script>alert('x')</script> & \"q\"") == "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;")
        #expect(ConsoleHTML.escape("till\u{1b}[31m") == "till\u{FFFD}[31m")
        #expect(ConsoleHTML.escape("caf\u{e9} 7") == "caf\u{e9} 7")
        #expect(ConsoleHTML.segment("a/b?c") == "a%2Fb%3Fc")
    }

    @Test func aDeviceNamedLikeMarkupStaysText() {
        let device = AdminAPI.Device(
            DeviceLedgerEntry(deviceID: "d1", deviceName: "<img src=x onerror=alert(1)>", user: "u", release: "0.1.0", partition: "p", state: "synced", reportedAt: .now),
            now: .now, staleBefore: .distantPast, wedgedBefore: .distantPast)
        let html = ConsolePages.deviceTable([device], caption: "c").text
        #expect(!html.contains("<img") && html.contains("&lt;img src=x onerror=alert(1)&gt;"))
    }
}
