import Foundation
import Testing
import TetherProtocol

@Test func everyKnownCodeHasANameAndTheSpecAction() {
    for code in SyncErrorCode.known {
        #expect(!code.name.hasPrefix("code_"))
        #expect(!code.hint.isEmpty)
    }
    #expect(SyncErrorCode.permissionDenied.defaultAction == .deleteStore)
    #expect(SyncErrorCode.divergingHistories.defaultAction == .clientReset)
    #expect(SyncErrorCode.badUserAuthentication.defaultAction == .reauth)
    #expect(SyncErrorCode.wrongProtocolVersion.defaultAction == .fatal)
    #expect(SyncErrorCode(299).defaultAction == .retry)
    #expect(SyncErrorCode(299).name == "code_299")
    #expect(SyncErrorCode.badSchemaVersion.forcesManualReset)
}

/// docs/errors.md lists every known code, with the name and the default action this build
/// uses, and nothing else: a new code is added in both places or the test says which is missing.
@Test func theErrorsPageListsEveryKnownCodeWithItsNameAndAction() throws {
    let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/errors.md")
    let text = try String(contentsOf: page, encoding: .utf8)
    var documented: [Int: (name: String, action: String)] = [:]
    for line in text.split(separator: "\n") {
        let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard cells.count > 4, let code = Int(cells[1]) else { continue }
        documented[code] = (cells[2].trimmingCharacters(in: CharacterSet(charactersIn: "`")), cells[3])
    }
    #expect(Set(documented.keys) == Set(SyncErrorCode.known.map(\.rawValue)))
    for code in SyncErrorCode.known {
        #expect(documented[code.rawValue]?.name == code.name, "code \(code.rawValue)")
        #expect(documented[code.rawValue]?.action == code.defaultAction.rawValue, "code \(code.rawValue)")
    }
}
