import Testing
import TetherProtocol

@Suite struct ServerConnectionStateMachineTests {
    typealias Machine = ServerConnectionStateMachine

    static let hello = ClientMessage.hello(Hello(software: "test"))

    /// Every client message in every connection state, with no session bound.
    @Test func everyMessageInEveryState() {
        let messages: [(String, ClientMessage)] = [
            ("hello", Self.hello), ("badHello", .hello(Hello(protocolVersion: 99, software: "x"))),
            ("bind", .bind(Fixtures.bind)), ("upload", .upload(Fixtures.upload)), ("unbind", .unbind(7)), ("ping", .ping(5)),
            ("heal", .heal(Fixtures.healChunk)), ("report", .report(DeviceReportWireTests.example)),
            ("accepted", .credentialAccepted(digest: CredentialHandOverTests.digest)),
        ]
        let expected: [String: (Machine.State, [String])] = [
            "awaitingHello/hello": (.ready, ["send:welcome"]),
            "awaitingHello/badHello": (.closed, ["send:error:105", "close"]),
            "awaitingHello/bind": (.closed, ["send:error:109", "close"]),
            "awaitingHello/upload": (.closed, ["send:error:109", "close"]),
            "awaitingHello/unbind": (.closed, ["send:error:109", "close"]),
            "awaitingHello/ping": (.closed, ["send:error:109", "close"]),
            "awaitingHello/heal": (.closed, ["send:error:109", "close"]),
            "awaitingHello/report": (.closed, ["send:error:109", "close"]),
            "awaitingHello/accepted": (.closed, ["send:error:109", "close"]),
            "ready/accepted": (.closed, ["send:error:109", "close"]),
            "closed/accepted": (.closed, []),
            "ready/hello": (.closed, ["send:error:109", "close"]),
            "ready/badHello": (.closed, ["send:error:109", "close"]),
            "ready/bind": (.ready, ["7:authorize"]),
            "ready/upload": (.closed, ["send:error:109", "close"]),
            "ready/unbind": (.closed, ["send:error:109", "close"]),
            "ready/ping": (.ready, ["send:pong"]),
            "ready/heal": (.closed, ["send:error:109", "close"]),
            "ready/report": (.ready, ["record-report"]),
            "closed/hello": (.closed, []), "closed/badHello": (.closed, []), "closed/bind": (.closed, []),
            "closed/upload": (.closed, []), "closed/unbind": (.closed, []), "closed/ping": (.closed, []),
            "closed/heal": (.closed, []), "closed/report": (.closed, []),
        ]
        #expect(expected.count == Machine.State.allCases.count * messages.count)
        for state in Machine.State.allCases {
            for (name, message) in messages {
                var machine = Machine(state: state)
                let actions = machine.received(message).map(summary)
                let (next, expectedActions) = expected["\(state)/\(name)"]!
                #expect(machine.state == next, "\(state)/\(name)")
                #expect(actions == expectedActions, "\(state)/\(name)")
            }
        }
    }

    @Test func wrongVersionNamesBothVersions() {
        var machine = Machine(software: "server")
        let future = TetherVersion.syncProtocol + 3
        guard case .send(.error(let message)) = machine.received(.hello(Hello(protocolVersion: future, software: "x"))).first else {
            Issue.record("expected an error")
            return
        }
        #expect(message.session == nil)
        #expect(message.error.code == .wrongProtocolVersion)
        #expect(message.error.action == .fatal)
        #expect(message.error.message.contains("\(future)") && message.error.message.contains("\(TetherVersion.syncProtocol)"))
    }

    /// A server accepts its own protocol version and the one before it, and answers in the
    /// version the client announced; older and newer ones get 105 naming both versions.
    @Test(arguments: [1, 2, 5])
    func serverAcceptsItsOwnAndThePreviousProtocolVersion(server: Int) {
        for (client, accepted) in [(server - 2, false), (server - 1, true), (server, true), (server + 1, false)] {
            var machine = Machine(protocolVersion: server, software: "server")
            let actions = machine.received(.hello(Hello(protocolVersion: client, software: "agent")))
            if accepted {
                #expect(actions == [.send(.welcome(Welcome(protocolVersion: client, software: "server")))], "server \(server), client \(client)")
                #expect(machine.state == .ready)
                #expect(machine.negotiatedProtocolVersion == client)
            } else {
                #expect(actions.map(summary) == ["send:error:105", "close"], "server \(server), client \(client)")
                #expect(machine.negotiatedProtocolVersion == nil)
            }
        }
        #expect(TetherVersion.acceptedByServer() == (TetherVersion.syncProtocol - 1)...TetherVersion.syncProtocol)
    }

    /// Protocol 4's heal reaches an active session and its answer goes back; on a connection
    /// that negotiated protocol 3 it is a protocol violation (109), bound sessions released.
    @Test(arguments: [TetherVersion.healing - 1, TetherVersion.healing])
    func healNeedsProtocol4(negotiated: Int) {
        var machine = Machine(protocolVersion: TetherVersion.healing, software: "s")
        _ = machine.received(.hello(Hello(protocolVersion: negotiated, software: "agent")))
        _ = machine.received(.bind(Fixtures.bind))
        _ = machine.sessionEvent(7, .bindAccepted(Fixtures.reply(), downloadAfter: Fixtures.version))
        let actions = machine.received(.heal(Fixtures.healChunk))
        if negotiated >= TetherVersion.healing {
            #expect(actions.map(summary) == ["7:heal"])
            #expect(machine.sessionEvent(7, .healAnswered(Fixtures.healReply())).map(summary) == ["send:healed"])
            #expect(machine.state == .ready)
        } else {
            #expect(actions.map(summary) == ["send:error:109", "7:release", "close"])
            guard case .send(.error(let message)) = actions.first else { return }
            #expect(message.error.message.contains("sync protocol \(negotiated)"))
            #expect(machine.state == .closed)
        }
    }

    /// Protocol 6's device report is recorded (no answer) and leaves the sessions alone; on a
    /// connection that negotiated protocol 5 it is a protocol violation (109).
    @Test(arguments: [TetherVersion.deviceReports - 1, TetherVersion.deviceReports])
    func reportNeedsProtocol6(negotiated: Int) {
        var machine = Machine(protocolVersion: TetherVersion.deviceReports, software: "s")
        _ = machine.received(.hello(Hello(protocolVersion: negotiated, software: "agent")))
        _ = machine.received(.bind(Fixtures.bind))
        _ = machine.sessionEvent(7, .bindAccepted(Fixtures.reply(), downloadAfter: Fixtures.version))
        let actions = machine.received(.report(DeviceReportWireTests.example))
        if negotiated >= TetherVersion.deviceReports {
            #expect(actions == [.recordReport(DeviceReportWireTests.example)])
            #expect(machine.sessionState(7) != nil)
            #expect(machine.state == .ready)
        } else {
            #expect(actions.map(summary) == ["send:error:109", "7:release", "close"])
            #expect(machine.state == .closed)
        }
    }

    /// A heal chunk's answer for a session that failed meanwhile is not sent.
    @Test func healAnswerAfterTheSessionFailedIsDropped() {
        var machine = Machine(state: .ready)
        _ = machine.received(.bind(Fixtures.bind))
        _ = machine.sessionEvent(7, .bindAccepted(Fixtures.reply(), downloadAfter: Fixtures.version))
        #expect(machine.received(.heal(Fixtures.healChunk)).map(summary) == ["7:heal"])
        #expect(machine.sessionEvent(7, .failed(SyncError(.permissionDenied, "revoked"))).map(summary) == ["7:release", "send:error:206"])
        #expect(machine.sessionEvent(7, .healAnswered(Fixtures.healReply())).isEmpty)
        #expect(machine.received(.heal(Fixtures.healChunk)).isEmpty)
    }

    @Test func decodeFailuresCloseWithTheirCode() {
        var machine = Machine(state: .ready)
        #expect(machine.decodeFailed(.messageTooLarge(size: 10, limit: 5)).map(summary) == ["send:error:104", "close"])
        #expect(machine.state == .closed)
        #expect(machine.decodeFailed(.emptyMessage).isEmpty)
    }

    @Test func protocolViolationReleasesBoundSessions() {
        var machine = Machine(software: "s")
        _ = machine.received(Self.hello)
        _ = machine.received(.bind(Fixtures.bind))
        _ = machine.sessionEvent(7, .bindAccepted(Fixtures.reply(), downloadAfter: Fixtures.version))
        _ = machine.received(.bind(Fixtures.newDeviceBind))
        // A second bind on session 7 while it is active: 109, and both sessions end.
        let actions = machine.received(.bind(Fixtures.bind)).map(summary)
        #expect(actions == ["7:release", "send:error:109", "close"])
        #expect(machine.sessions.isEmpty)
    }

    @Test func sessionsAreMultiplexedAndReusableAfterUnbind() {
        var machine = Machine(software: "s")
        _ = machine.received(Self.hello)
        _ = machine.received(.bind(Fixtures.bind))
        _ = machine.received(.bind(Fixtures.newDeviceBind))
        #expect(machine.sessionEvent(7, .bindAccepted(Fixtures.reply(), downloadAfter: Fixtures.version)).map(summary)
            == ["send:bound", "7:downloads"])
        #expect(machine.sessionEvent(8, .bindRejected(SyncError(.permissionDenied, "no"))).map(summary) == ["send:error:206"])
        #expect(machine.sessionState(8) == .closing)
        #expect(machine.received(.upload(Upload(session: 8, changesets: []))).isEmpty)
        #expect(machine.received(.unbind(8)).map(summary) == ["send:unbound", "8:forget"])
        #expect(machine.sessionState(8) == nil)
        #expect(machine.received(.bind(Fixtures.newDeviceBind)).map(summary) == ["8:authorize"])
        #expect(machine.received(.upload(Fixtures.upload)).map(summary) == ["7:integrate"])
    }

    @Test func lateBindVerdictAfterCloseReleasesTheReservation() {
        var machine = Machine(software: "s")
        _ = machine.received(Self.hello)
        _ = machine.received(.bind(Fixtures.bind))
        #expect(machine.connectionClosed().isEmpty)
        #expect(machine.sessionEvent(7, .bindAccepted(Fixtures.reply(), downloadAfter: .none)).map(summary) == ["7:release"])
    }

    @Test func sessionLimitIs104() {
        var machine = Machine(state: .ready, maxSessions: 1)
        _ = machine.received(.bind(Fixtures.bind))
        #expect(machine.received(.bind(Fixtures.newDeviceBind)).map(summary) == ["send:error:104", "close"])
    }

    @Test func connectionCloseReleasesEveryBoundSession() {
        var machine = Machine(state: .ready)
        _ = machine.received(.bind(Fixtures.bind))
        _ = machine.sessionEvent(7, .bindAccepted(Fixtures.reply(), downloadAfter: .none))
        #expect(machine.connectionClosed().map(summary) == ["7:release"])
        #expect(machine.state == .closed)
    }

    private func summary(_ action: Machine.Action) -> String {
        switch action {
        case .send(let message): TetherProtocolTests.summary(message)
        case .session(let id, let action): "\(id):\(TetherProtocolTests.summary(action))"
        case .close: "close"
        case .recordReport: "record-report"
        case .completeRotation(let device, _): "complete-rotation:\(device)"
        case .finishAction(let action, _): "finish-action:\(action.id)"
        }
    }
}

@Suite struct ClientConnectionStateMachineTests {
    typealias Machine = ClientConnectionStateMachine

    @Test func everyServerMessageInEveryState() {
        let messages: [(String, ServerMessage)] = [
            ("welcome", .welcome(Welcome(software: "s"))), ("bound", .bound(Fixtures.reply())),
            ("state", .state(Fixtures.chunk(isLast: true))), ("download", .download(Fixtures.download())),
            ("unbound", .unbound(7)), ("pong", .pong(1)), ("healed", .healed(Fixtures.healReply())),
            ("sessionError", .error(ErrorMessage(session: 7, error: Fixtures.error))),
            ("connectionError", .error(ErrorMessage(session: nil, error: SyncError(.wrongProtocolVersion, "v")))),
            ("credential", .credential(CredentialHandOverTests.credential)),
        ]
        // No session bound: every session message is a violation.
        let expected: [String: (Machine.State, [String])] = [
            "awaitingWelcome/welcome": (.ready, ["connected"]),
            "awaitingWelcome/bound": (.closed, ["close:109"]),
            "awaitingWelcome/state": (.closed, ["close:109"]),
            "awaitingWelcome/download": (.closed, ["close:109"]),
            "awaitingWelcome/unbound": (.closed, ["close:109"]),
            "awaitingWelcome/pong": (.closed, ["close:109"]),
            "awaitingWelcome/healed": (.closed, ["close:109"]),
            "awaitingWelcome/sessionError": (.closed, ["close:109"]),
            "awaitingWelcome/connectionError": (.closed, ["close:105"]),
            "awaitingWelcome/credential": (.closed, ["close:109"]),
            "ready/credential": (.ready, ["credential"]),
            "closed/credential": (.closed, []),
            "ready/welcome": (.closed, ["close:109"]),
            "ready/bound": (.closed, ["close:109"]),
            "ready/state": (.closed, ["close:109"]),
            "ready/download": (.closed, ["close:109"]),
            "ready/unbound": (.closed, ["close:109"]),
            "ready/pong": (.ready, ["pong"]),
            "ready/healed": (.closed, ["close:109"]),
            "ready/sessionError": (.closed, ["close:109"]),
            "ready/connectionError": (.closed, ["close:105"]),
            "closed/welcome": (.closed, []), "closed/bound": (.closed, []), "closed/state": (.closed, []),
            "closed/download": (.closed, []), "closed/unbound": (.closed, []), "closed/pong": (.closed, []),
            "closed/sessionError": (.closed, []), "closed/connectionError": (.closed, []), "closed/healed": (.closed, []),
        ]
        #expect(expected.count == Machine.State.allCases.count * messages.count)
        for state in Machine.State.allCases {
            for (name, message) in messages {
                var machine = Machine(state: state)
                let actions = machine.received(message).map(summary)
                let (next, expectedActions) = expected["\(state)/\(name)"]!
                #expect(machine.state == next, "\(state)/\(name)")
                #expect(actions == expectedActions, "\(state)/\(name)")
            }
        }
    }

    @Test func bindsArePipelinedAndErrorsReachTheirSession() {
        var machine = Machine()
        #expect(machine.request(7, .bindRequested(Fixtures.bind)).map(summary) == ["send:bind"])
        #expect(machine.request(9, .uploadRequested(Fixtures.upload)).map(summary) == ["refuse"])
        _ = machine.received(.welcome(Welcome(software: "s")))
        #expect(machine.received(.bound(Fixtures.reply())).map(summary) == ["deliver:bound"])
        #expect(machine.request(7, .uploadRequested(Fixtures.upload)).map(summary) == ["send:upload"])
        #expect(machine.request(7, .healRequested(Fixtures.healChunk)).map(summary) == ["send:heal"])
        #expect(machine.received(.healed(Fixtures.healReply())).map(summary) == ["deliver:healed"])
        #expect(machine.request(9, .healRequested(Fixtures.healChunk)).map(summary) == ["refuse"])
        #expect(machine.received(.error(ErrorMessage(session: 7, error: Fixtures.error))).map(summary)
            == ["deliver:error", "send:unbind"])
        #expect(machine.received(.unbound(7)).map(summary) == ["deliver:unbound"])
        #expect(machine.sessionState(7) == nil)
    }

    @Test func connectionErrorDisconnectsEverySession() {
        var machine = Machine(state: .ready)
        _ = machine.request(1, .bindRequested(Fixtures.bind))
        _ = machine.request(2, .bindRequested(Fixtures.newDeviceBind))
        let actions = machine.received(.error(ErrorMessage(session: nil, error: SyncError(.wrongProtocolVersion, "v"))))
        #expect(actions.map(summary) == ["deliver:disconnected", "deliver:disconnected", "close:105"])
        #expect(machine.request(1, .bindRequested(Fixtures.bind)).map(summary) == ["refuse"])
    }

    @Test func undecodableServerMessageCloses() {
        var machine = Machine(state: .ready)
        #expect(machine.decodeFailed(.unknownMessageType(0x42)).map(summary) == ["close:102"])
        #expect(machine.connectionLost().isEmpty)
    }

    /// A server that welcomes with another protocol version is refused as 105, naming both
    /// versions, and every session pipelined before the welcome is disconnected with it.
    @Test func welcomeWithAnotherProtocolVersionClosesWith105() {
        var machine = Machine()
        _ = machine.request(1, .bindRequested(Fixtures.bind))
        let actions = machine.received(.welcome(Welcome(protocolVersion: TetherVersion.syncProtocol + 98, software: "future")))
        #expect(actions.map(summary) == ["deliver:disconnected", "close:105"])
        guard case .close(let error?) = actions.last else {
            Issue.record("no close action")
            return
        }
        #expect(error.message.contains("client speaks sync protocol \(TetherVersion.syncProtocol)"))
        #expect(error.message.contains("server speaks sync protocol \(TetherVersion.syncProtocol + 98)"))
        #expect(machine.state == .closed)
    }

    private func summary(_ action: Machine.Action) -> String {
        switch action {
        case .send(let message): "send:\(message.name)"
        case .deliver(_, let event): "deliver:\(name(event))"
        case .refuse: "refuse"
        case .connected: "connected"
        case .pong: "pong"
        case .credential: "credential"
        case .action(let action): "action:\(action.id)"
        case .close(let error): "close:\(error.map { String($0.code.rawValue) } ?? "-")"
        }
    }
}
