import Testing
import TetherProtocol

/// Every (state, event) pair of the server's session state machine.
@Suite struct ServerSessionStateMachineTests {
    typealias Machine = ServerSessionStateMachine
    typealias State = Machine.State

    static let events: [(String, Machine.Event)] = [
        ("bind", .bindReceived(Fixtures.bind)),
        ("upload", .uploadReceived(Fixtures.upload)),
        ("unbind", .unbindReceived),
        ("accepted", .bindAccepted(Fixtures.reply(), downloadAfter: Fixtures.version)),
        ("acceptedWithState", .bindAccepted(Fixtures.reply(stateFollows: true), downloadAfter: .none)),
        ("rejected", .bindRejected(SyncError(.badUserAuthentication, "bad token"))),
        ("chunk", .sendingStateChunk(isLast: false)),
        ("lastChunk", .sendingStateChunk(isLast: true)),
        ("failed", .failed(SyncError(.permissionDenied, "revoked"))),
        ("closed", .connectionClosed),
        ("credit", .creditReceived(3)),
        ("heal", .healReceived(Fixtures.healChunk)),
        ("healAnswered", .healAnswered(Fixtures.healReply())),
    ]

    /// state/event → (next state, actions summarised).
    static let expected: [String: (State, [String])] = [
        "awaitingBind/bind": (.binding, ["authorize"]),
        "awaitingBind/upload": (.closed, ["close:109"]),
        "awaitingBind/unbind": (.closed, ["close:109"]),
        "awaitingBind/accepted": (.awaitingBind, []),
        "awaitingBind/acceptedWithState": (.awaitingBind, []),
        "awaitingBind/rejected": (.awaitingBind, []),
        "awaitingBind/chunk": (.awaitingBind, []),
        "awaitingBind/lastChunk": (.awaitingBind, []),
        "awaitingBind/failed": (.closed, ["forget"]),
        "awaitingBind/closed": (.closed, []),
        "awaitingBind/credit": (.closed, ["close:109"]),
        "awaitingBind/heal": (.closed, ["close:109"]),
        "awaitingBind/healAnswered": (.awaitingBind, []),

        "binding/bind": (.closed, ["close:109"]),
        "binding/upload": (.closed, ["close:109"]),
        "binding/unbind": (.closed, ["close:109"]),
        "binding/accepted": (.active, ["send:bound", "downloads"]),
        "binding/acceptedWithState": (.bootstrapping, ["send:bound", "state"]),
        "binding/rejected": (.closing, ["send:error:203"]),
        "binding/chunk": (.binding, []),
        "binding/lastChunk": (.binding, []),
        "binding/failed": (.closing, ["send:error:206"]),
        "binding/closed": (.closed, []),
        "binding/credit": (.closed, ["close:109"]),
        "binding/heal": (.closed, ["close:109"]),
        "binding/healAnswered": (.binding, []),

        "bootstrapping/bind": (.closed, ["release", "close:109"]),
        "bootstrapping/upload": (.closed, ["release", "close:109"]),
        "bootstrapping/unbind": (.closed, ["release", "send:unbound", "forget"]),
        "bootstrapping/accepted": (.bootstrapping, []),
        "bootstrapping/acceptedWithState": (.bootstrapping, []),
        "bootstrapping/rejected": (.bootstrapping, []),
        "bootstrapping/chunk": (.bootstrapping, []),
        "bootstrapping/lastChunk": (.active, []),
        "bootstrapping/failed": (.closing, ["release", "send:error:206"]),
        "bootstrapping/closed": (.closed, ["release"]),
        "bootstrapping/credit": (.bootstrapping, ["grant:3"]),
        "bootstrapping/heal": (.closed, ["release", "close:109"]),
        "bootstrapping/healAnswered": (.bootstrapping, []),

        "active/bind": (.closed, ["release", "close:109"]),
        "active/upload": (.active, ["integrate"]),
        "active/unbind": (.closed, ["release", "send:unbound", "forget"]),
        "active/accepted": (.active, []),
        "active/acceptedWithState": (.active, []),
        "active/rejected": (.active, []),
        "active/chunk": (.active, []),
        "active/lastChunk": (.active, []),
        "active/failed": (.closing, ["release", "send:error:206"]),
        "active/closed": (.closed, ["release"]),
        "active/credit": (.active, ["grant:3"]),
        "active/heal": (.active, ["heal"]),
        "active/healAnswered": (.active, ["send:healed"]),

        "closing/bind": (.closed, ["close:109"]),
        "closing/upload": (.closing, []),
        "closing/unbind": (.closed, ["send:unbound", "forget"]),
        "closing/accepted": (.closing, []),
        "closing/acceptedWithState": (.closing, []),
        "closing/rejected": (.closing, []),
        "closing/chunk": (.closing, []),
        "closing/lastChunk": (.closing, []),
        "closing/failed": (.closing, []),
        "closing/closed": (.closed, []),
        "closing/credit": (.closing, []),
        "closing/heal": (.closing, []),
        "closing/healAnswered": (.closing, []),

        "closed/bind": (.closed, []),
        "closed/upload": (.closed, []),
        "closed/unbind": (.closed, []),
        "closed/accepted": (.closed, ["release"]),
        "closed/acceptedWithState": (.closed, ["release"]),
        "closed/rejected": (.closed, []),
        "closed/chunk": (.closed, []),
        "closed/lastChunk": (.closed, []),
        "closed/failed": (.closed, []),
        "closed/closed": (.closed, []),
        "closed/credit": (.closed, []),
        "closed/heal": (.closed, []),
        "closed/healAnswered": (.closed, []),
    ]

    @Test func tableCoversEveryPair() {
        #expect(Self.expected.count == State.allCases.count * Self.events.count)
    }

    @Test(arguments: State.allCases)
    func everyEventInState(_ state: State) {
        for (name, event) in Self.events {
            var machine = Machine(session: 7, state: state)
            let actions = machine.handle(event).map(summary)
            let key = "\(state)/\(name)"
            guard let (next, expectedActions) = Self.expected[key] else {
                Issue.record("no expectation for \(key)")
                continue
            }
            #expect(machine.state == next, "\(key)")
            #expect(actions == expectedActions, "\(key)")
        }
    }

    @Test func wrongOrderNamesTheStateAndSession() {
        var machine = Machine(session: 9, state: .bootstrapping)
        guard case .closeConnection(let error) = machine.handle(.uploadReceived(Fixtures.upload)).last else {
            Issue.record("expected a protocol violation")
            return
        }
        #expect(error.code == .badMessageOrder)
        #expect(error.message.contains("session 9"))
        #expect(error.message.contains("bootstrapping"))
    }

    @Test func fullLifecycle() {
        var machine = Machine(session: 1)
        #expect(machine.handle(.bindReceived(Fixtures.newDeviceBind)).map(summary) == ["authorize"])
        #expect(machine.handle(.bindAccepted(Fixtures.reply(stateFollows: true), downloadAfter: .none)).map(summary) == ["send:bound", "state"])
        _ = machine.handle(.sendingStateChunk(isLast: false))
        _ = machine.handle(.sendingStateChunk(isLast: true))
        #expect(machine.state == .active)
        #expect(machine.handle(.uploadReceived(Fixtures.upload)).map(summary) == ["integrate"])
        #expect(machine.handle(.creditReceived(1)).map(summary) == ["grant:1"])
        #expect(machine.handle(.unbindReceived).map(summary) == ["release", "send:unbound", "forget"])
    }
}

func summary(_ action: ServerSessionStateMachine.Action) -> String {
    switch action {
    case .authorizeBind: "authorize"
    case .send(let message): summary(message)
    case .streamState: "state"
    case .streamDownloads: "downloads"
    case .integrate: "integrate"
    case .heal: "heal"
    case .grantCredit(let messages): "grant:\(messages)"
    case .release: "release"
    case .forget: "forget"
    case .closeConnection(let error): "close:\(error.code.rawValue)"
    }
}

func summary(_ message: ServerMessage) -> String {
    if case .error(let error) = message { return "send:error:\(error.error.code.rawValue)" }
    return "send:\(message.name)"
}
