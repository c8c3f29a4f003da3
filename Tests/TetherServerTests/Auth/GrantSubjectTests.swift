import Testing
@testable import TetherServer

/// A grant's subject: a name, `tag:K=V` or `device:*`; the prefixes are reserved.
@Suite struct GrantSubjectTests {
    @Test func theThreeFormsParseAndPrintBack() throws {
        #expect(try GrantSubject.parse("pos-17") == .user("pos-17"))
        #expect(try GrantSubject.parse("tag:store=17") == .tag(key: "store", value: "17"))
        #expect(try GrantSubject.parse("device:*") == .everyDevice)
        for text in ["pos-17", "tag:store=17", "device:*"] { #expect(try GrantSubject.parse(text).description == text) }
    }

    @Test(arguments: ["", "tag:", "tag:store", "tag:Store=1", "tag:store=a b", "device:", "device:till-1", "device:**", "a\nb", "tag:=1"])
    func otherTextIsRefusedWithAHint(_ text: String) {
        do throws(GrantSubjectProblem) {
            _ = try GrantSubject.parse(text)
            Issue.record("\(text.debugDescription) was taken")
        } catch {
            #expect(!error.hint.isEmpty)
        }
    }
}
