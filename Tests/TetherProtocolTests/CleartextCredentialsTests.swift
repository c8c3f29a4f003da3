import Testing
import TetherProtocol

@Suite struct CleartextCredentialsTests {
    @Test func onlyUnencryptedURLsToOtherMachinesExposeAToken() {
        #expect(CleartextCredentials.exposedHost(in: "ws://sync.example.com:7800/sync") == "sync.example.com")
        #expect(CleartextCredentials.exposedHost(in: "http://10.1.2.3:7800") == "10.1.2.3")
        #expect(CleartextCredentials.exposedHost(in: "HTTP://[2001:db8::1]:7800/") == "2001:db8::1")
        #expect(CleartextCredentials.exposedHost(in: "ws://user@128.0.0.1/sync") == "128.0.0.1")
        #expect(CleartextCredentials.exposedHost(in: "ws://127.0.0.1:7800/sync") == nil)
        #expect(CleartextCredentials.exposedHost(in: "ws://127.45.6.7/sync") == nil)
        #expect(CleartextCredentials.exposedHost(in: "http://localhost:7800") == nil)
        #expect(CleartextCredentials.exposedHost(in: "http://[::1]:7800") == nil)
        #expect(CleartextCredentials.exposedHost(in: "wss://sync.example.com/sync") == nil)
        #expect(CleartextCredentials.exposedHost(in: "https://10.1.2.3:7800") == nil)
    }
}
