import Testing
@testable import TetherAgent

/// ``CredentialFallback``: which credential a bind offers while the server refuses the token
/// file's, every input in every phase.
@Suite struct CredentialFallbackTests {
    static let current = "tdc1.dev.current"
    static let earlier = ["tdc1.dev.one", "tdc1.dev.two"]

    @Test func theTokenFilesCredentialIsOfferedUntilARefusal() {
        let fallback = CredentialFallback()
        #expect(fallback.offered(current: Self.current, earlier: Self.earlier) == Self.current)
        #expect(fallback.trying == nil)
    }

    @Test func refusalsWalkTheEarlierCredentialsNewestFirstThenStartOver() {
        var fallback = CredentialFallback()
        #expect(fallback.refused(Self.current, current: Self.current, earlier: Self.earlier) == .offerEarlier(0, log: true))
        #expect(fallback.offered(current: Self.current, earlier: Self.earlier) == "tdc1.dev.one")
        #expect(fallback.refused("tdc1.dev.one", current: Self.current, earlier: Self.earlier) == .offerEarlier(1, log: true))
        #expect(fallback.offered(current: Self.current, earlier: Self.earlier) == "tdc1.dev.two")
        #expect(fallback.refused("tdc1.dev.two", current: Self.current, earlier: Self.earlier) == .exhausted(log: true))
        #expect(fallback.offered(current: Self.current, earlier: Self.earlier) == Self.current, "the token file's again")
        // A second walk is not logged again.
        #expect(fallback.refused(Self.current, current: Self.current, earlier: Self.earlier) == .offerEarlier(0, log: false))
        #expect(fallback.refused("tdc1.dev.one", current: Self.current, earlier: Self.earlier) == .offerEarlier(1, log: false))
        #expect(fallback.refused("tdc1.dev.two", current: Self.current, earlier: Self.earlier) == .exhausted(log: false))
    }

    @Test func aRefusalOfACredentialNotOfferedNowChangesNothing() {
        var fallback = CredentialFallback()
        _ = fallback.refused(Self.current, current: Self.current, earlier: Self.earlier)
        // Another partition's bind, sent with the token file's before the first refusal.
        #expect(fallback.refused(Self.current, current: Self.current, earlier: Self.earlier) == .none)
        #expect(fallback.trying == 0, "the list is walked once, not once per partition")
        #expect(fallback.refused("tdc1.dev.elsewhere", current: Self.current, earlier: Self.earlier) == .none)
    }

    @Test func withoutEarlierCredentialsARefusalExhaustsTheList() {
        var fallback = CredentialFallback()
        #expect(fallback.refused(Self.current, current: Self.current, earlier: []) == .exhausted(log: true))
        #expect(fallback.trying == nil)
        #expect(fallback.refused(Self.current, current: Self.current, earlier: []) == .exhausted(log: false), "another partition's")
    }

    @Test func anAcceptedEarlierCredentialIsRestoredAndTheWalkEnds() {
        var fallback = CredentialFallback()
        _ = fallback.refused(Self.current, current: Self.current, earlier: Self.earlier)
        _ = fallback.refused("tdc1.dev.one", current: Self.current, earlier: Self.earlier)
        #expect(fallback.accepted("tdc1.dev.two", current: Self.current, earlier: Self.earlier) == .restore("tdc1.dev.two"))
        #expect(fallback.trying == nil)
        #expect(!fallback.walkedAll)
    }

    @Test func anAcceptanceOfTheTokenFilesCredentialRestoresNothing() {
        var fallback = CredentialFallback()
        #expect(fallback.accepted(Self.current, current: Self.current, earlier: Self.earlier) == .none)
        // Walked to the end, then the token file's was accepted (the server came back): the
        // next walk is logged again.
        for token in [Self.current] + Self.earlier { _ = fallback.refused(token, current: Self.current, earlier: Self.earlier) }
        #expect(fallback.walkedAll)
        #expect(fallback.accepted(Self.current, current: Self.current, earlier: Self.earlier) == .none)
        #expect(!fallback.walkedAll)
        #expect(fallback.refused(Self.current, current: Self.current, earlier: Self.earlier) == .offerEarlier(0, log: true))
    }

    @Test func anAcceptanceOfACredentialNotOfferedNowIsIgnored() {
        var fallback = CredentialFallback()
        _ = fallback.refused(Self.current, current: Self.current, earlier: Self.earlier)
        // A bind sent with the token file's before the refusal, accepted late.
        #expect(fallback.accepted(Self.current, current: Self.current, earlier: Self.earlier) == .none)
        #expect(fallback.trying == 0, "still offering the earlier one")
    }

    @Test func aChangedTokenFileStartsOver() {
        var fallback = CredentialFallback()
        _ = fallback.refused(Self.current, current: Self.current, earlier: Self.earlier)
        fallback.tokenFileChanged()
        #expect(fallback.offered(current: "tdc1.dev.rotated", earlier: [Self.current] + Self.earlier) == "tdc1.dev.rotated")
    }

    @Test func anIndexPastAShortenedListOffersTheTokenFilesCredential() {
        var fallback = CredentialFallback()
        _ = fallback.refused(Self.current, current: Self.current, earlier: Self.earlier)
        _ = fallback.refused("tdc1.dev.one", current: Self.current, earlier: Self.earlier)
        #expect(fallback.offered(current: Self.current, earlier: ["tdc1.dev.one"]) == Self.current)
    }
}
