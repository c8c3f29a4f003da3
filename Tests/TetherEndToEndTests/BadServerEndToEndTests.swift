import Foundation
import Testing
import TetherControl
import TetherProtocol
import TetherTestSupport

/// tetherd against a server that breaks the protocol (issue 9, bad inputs): it logs a clear
/// error, keeps running, retries with backoff (or, for another protocol version, stops syncing
/// until a reload), its store is untouched and its control socket still answers.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct BadServerEndToEndTests {
    enum Scenario: String, CaseIterable, CustomTestStringConvertible {
        case randomBytes = "random-bytes"
        case truncatedFrame = "truncated-frame"
        /// The 101, a truncated frame and the end of the stream in one read, before the agent
        /// has sent its hello (CI, 2026-11-29: the agent only said it could not send it).
        case truncatedFrameAtOnce = "truncated-frame-at-once"
        case truncatedMessage = "truncated-message"
        case undecodableMessage = "undecodable-message"
        case textFrame = "text-frame"
        case oversizeMessage = "oversize-message"
        case wrongOrder = "wrong-order"
        case unknownProtocolVersion = "unknown-protocol-version"
        var testDescription: String { rawValue }

        var behaviour: FakeSyncServer.Behaviour {
            switch self {
            case .randomBytes:
                // 0xFF: FIN, all three reserved bits and a reserved opcode: never a valid frame.
                return .init(bytes: { [0xFF] + (0..<4096).map { _ in UInt8.random(in: 0...255) } }, closeAfter: true)
            case .truncatedFrame:
                return .init(bytes: { FakeSyncServer.frame(0x2, Array(repeating: 0x81, count: 10), announcedLength: 1000) }, closeAfter: true)
            case .truncatedFrameAtOnce:
                return .init(
                    bytes: { FakeSyncServer.frame(0x2, Array(repeating: 0x81, count: 10), announcedLength: 1000) }, closeAfter: true,
                    withTheAnswer: true)
            case .truncatedMessage:
                return .init(bytes: { FakeSyncServer.frame(0x2, [0x81]) }, closeAfter: false)
            case .undecodableMessage:
                return .init(bytes: { FakeSyncServer.frame(0x2, [0x42] + (0..<64).map { _ in UInt8.random(in: 0...255) }) }, closeAfter: false)
            case .textFrame:
                return .init(bytes: { FakeSyncServer.frame(0x1, Array("{\"hello\": \"world\"}".utf8)) }, closeAfter: false)
            case .oversizeMessage:
                return .init(bytes: { FakeSyncServer.frame(0x2, [UInt8](repeating: 0x84, count: (16 << 20) + 1)) }, closeAfter: false)
            case .wrongOrder:
                return .init(bytes: { FakeSyncServer.frame(0x2, FakeSyncServer.pong) }, closeAfter: false)
            case .unknownProtocolVersion:
                return .init(bytes: { FakeSyncServer.frame(0x2, FakeSyncServer.welcome(protocolVersion: 99)) }, closeAfter: false)
            }
        }

        /// What the agent's log must say (any of these).
        var expectedLog: [String] {
            switch self {
            case .randomBytes, .truncatedFrame, .truncatedFrameAtOnce:
                // Depending on the bytes: refused by the WebSocket layer, refused by the decoder,
                // or a frame header announcing more than was sent before the server closed.
                [
                    "reading from the sync server failed (invalid WebSocket data", "the sync server broke the protocol",
                    "the sync server closed the connection without an error",
                ]
            case .truncatedMessage: ["the sync server broke the protocol: error 103 (bad_syntax): message truncated"]
            case .undecodableMessage: ["the sync server broke the protocol: error 102 (unknown_message): unknown message type 0x42"]
            case .textFrame: ["the sync server broke the protocol: error 103 (bad_syntax): expected a binary WebSocket message"]
            case .oversizeMessage: ["the sync server broke the protocol: error 104 (limits_exceeded)"]
            case .wrongOrder: ["the sync server broke the protocol: error 109 (bad_message_order): pong is not allowed"]
            case .unknownProtocolVersion:
                ["error 105 (wrong_protocol_version): client speaks sync protocol \(TetherVersion.syncProtocol), server speaks sync protocol 99; syncing with"]
            }
        }
    }

    @Test(arguments: Scenario.allCases)
    func aBadServerNeitherStopsTheAgentNorTouchesItsStore(scenario: Scenario) async throws {
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            try await a.start()
            try await a.waitSynced("p")
            try await a.sql("p", "INSERT INTO orders (id, customer, total) VALUES ('kept', 'x', 1)")
            try await a.waitSynced("p")
            await a.stop()
            let before = try await a.sql("p", ".dump")
            let fake = try FakeSyncServer(scenario.behaviour)
            defer { fake.stop() }
            try Cluster.write(ClusterAgent.config(dir: a.dir, url: fake.url, partitions: ["p"], extra: ""), to: a.configPath)
            try await a.start()
            try await eventually("a clear error is logged", timeout: .seconds(60)) {
                scenario.expectedLog.contains { a.log.contains($0) }
            }
            if scenario == .unknownProtocolVersion {
                // 105: stop syncing with that server until a reload (docs/contract.md: Sync errors).
                try await consistently("no reconnect after 105", for: .seconds(3)) { fake.connections == 1 }
            } else {
                try await eventually("reconnects with backoff", timeout: .seconds(90)) { fake.connections >= 2 }
            }
            #expect(try await a.ctl(["status"]).status == 0, "the control socket still answers")
            #expect(try await a.status("p")?["state"] != "synced")
            let stopped = await a.stop()
            #expect(stopped?.status == 0 && stopped?.signalled == false, "still running, stops cleanly: \(String(describing: stopped))")
            #expect(try await a.sql("p", ".dump") == before, "the store is untouched")
        }
    }

    /// A malicious server's software string and error message hold a terminal escape (clear
    /// the screen) and a newline followed by a forged line: `tetherctl status` and `tetherctl
    /// events` show them escaped, on their own line, without an ESC byte (issue 46).
    @Test func whatAMaliciousServerSaysReachesTheTerminalEscaped() async throws {
        let evil = "\u{1B}[2J\nserver ok: forged line\u{202E}"
        let welcome = ServerMessage.welcome(Welcome(software: "fake" + evil)).encoded()
        let behaviour = FakeSyncServer.Behaviour(
            bytes: { FakeSyncServer.frame(0x2, welcome) }, closeAfter: false,
            reply: { payload in
                guard case .bind(let request)? = try? ClientMessage.decode(payload) else { return [] }
                let error = SyncError(.otherSessionError, "refused" + evil, action: .retry, retryAfterMilliseconds: 600_000)
                return FakeSyncServer.frame(0x2, ServerMessage.error(ErrorMessage(session: request.session, error: error)).encoded())
            })
        try await withCluster { cluster in
            let a = try cluster.agent("a", partitions: ["p"])
            let fake = try FakeSyncServer(behaviour)
            defer { fake.stop() }
            try Cluster.write(ClusterAgent.config(dir: a.dir, url: fake.url, partitions: ["p"], extra: ""), to: a.configPath)
            try await a.start()
            try await eventually("the server's error is the partition's last error", timeout: .seconds(60), pollInterval: .milliseconds(200)) {
                try await a.status("p")?["last_error"]?["message"]?.stringValue?.hasPrefix("refused") == true
            }
            // The connection line names the software while connected (the session error may
            // end a connection: the next one is welcomed the same way).
            let text = try await eventually("status shows the server's software", timeout: .seconds(60), pollInterval: .milliseconds(200)) { () -> String? in
                let status = try await a.ctl(["status"])
                return status.status == 0 && status.standardOutput.contains("connected since") ? status.standardOutput : nil
            }
            #expect(!text.utf8.contains(0x1B), "no ESC byte: \(text.debugDescription)")
            #expect(!text.unicodeScalars.contains("\u{202E}"), "no bidi override: \(text.debugDescription)")
            #expect(!text.split(separator: "\n").contains { $0.hasPrefix("server ok") }, "no forged line: \(text)")
            #expect(text.contains("fake\\e[2J\\nserver ok: forged line\\u{202E}"), "the software string, escaped: \(text)")
            #expect(text.contains("refused\\e[2J\\nserver ok: forged line\\u{202E}"), "the error, escaped: \(text)")
            let events = try await a.ctl(["events", "--no-follow"])
            #expect(events.status == 0, "\(events)")
            #expect(!events.standardOutput.utf8.contains(0x1B), "no ESC byte: \(events.standardOutput.debugDescription)")
            #expect(!events.standardOutput.split(separator: "\n").contains { $0.hasPrefix("server ok") }, "no forged line: \(events.standardOutput)")
            // --json is the encoder's: the message is there, escaped as JSON escapes it.
            #expect(try await a.status("p")?["last_error"]?["message"]?.stringValue == "refused" + evil)
            await a.stop()
        }
    }
}
