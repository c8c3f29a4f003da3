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
