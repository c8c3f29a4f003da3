import Testing
import TetherProtocol

/// Every (state, event) pair of the client's session state machine.
@Suite struct ClientSessionStateMachineTests {
    typealias Machine = ClientSessionStateMachine
    typealias State = Machine.State

    static let events: [(String, Machine.Event)] = [
        ("bind", .bindRequested(Fixtures.bind)),
        ("upload", .uploadRequested(Fixtures.upload)),
        ("unbind", .unbindRequested),
        ("bound", .boundReceived(Fixtures.reply())),
        ("boundWithState", .boundReceived(Fixtures.reply(stateFollows: true))),
        ("chunk", .stateReceived(Fixtures.chunk(isLast: false))),
        ("lastChunk", .stateReceived(Fixtures.chunk(isLast: true))),
        ("download", .downloadReceived(Fixtures.download())),
        ("error", .errorReceived(Fixtures.error)),
        ("unbound", .unboundReceived),
        ("lost", .connectionLost(nil)),
        ("credit", .creditRequested(2)),
        ("heal", .healRequested(Fixtures.healChunk)),
        ("healed", .healedReceived(Fixtures.healReply())),
    ]

    static let expected: [String: (State, [String])] = [
        "idle/bind": (.binding, ["send:bind"]),
        "idle/upload": (.idle, ["refuse"]),
        "idle/unbind": (.closed, ["forget"]),
        "idle/bound": (.closed, ["close:109"]),
        "idle/boundWithState": (.closed, ["close:109"]),
        "idle/chunk": (.closed, ["close:109"]),
        "idle/lastChunk": (.closed, ["close:109"]),
        "idle/download": (.closed, ["close:109"]),
        "idle/error": (.closed, ["close:109"]),
        "idle/unbound": (.closed, ["close:109"]),
        "idle/lost": (.closed, ["forget"]),
        "idle/credit": (.idle, []),
        "idle/heal": (.idle, ["refuse"]),
        "idle/healed": (.closed, ["close:109"]),

        "binding/bind": (.binding, ["refuse"]),
        "binding/upload": (.binding, ["refuse"]),
        "binding/unbind": (.unbinding, ["send:unbind"]),
        "binding/bound": (.active, ["deliver:bound"]),
        "binding/boundWithState": (.bootstrapping, ["deliver:bound"]),
        "binding/chunk": (.closed, ["close:109"]),
        "binding/lastChunk": (.closed, ["close:109"]),
        "binding/download": (.closed, ["close:109"]),
        "binding/error": (.unbinding, ["deliver:error", "send:unbind"]),
        "binding/unbound": (.closed, ["close:109"]),
        "binding/lost": (.closed, ["deliver:disconnected", "forget"]),
        "binding/credit": (.binding, []),
        "binding/heal": (.binding, ["refuse"]),
        "binding/healed": (.closed, ["close:109"]),

        "bootstrapping/bind": (.bootstrapping, ["refuse"]),
        "bootstrapping/upload": (.bootstrapping, ["refuse"]),
        "bootstrapping/unbind": (.unbinding, ["send:unbind"]),
        "bootstrapping/bound": (.closed, ["close:109"]),
        "bootstrapping/boundWithState": (.closed, ["close:109"]),
        "bootstrapping/chunk": (.bootstrapping, ["deliver:state"]),
        "bootstrapping/lastChunk": (.active, ["deliver:state"]),
        "bootstrapping/download": (.closed, ["close:109"]),
        "bootstrapping/error": (.unbinding, ["deliver:error", "send:unbind"]),
        "bootstrapping/unbound": (.closed, ["close:109"]),
        "bootstrapping/lost": (.closed, ["deliver:disconnected", "forget"]),
        "bootstrapping/credit": (.bootstrapping, ["send:credit"]),
        "bootstrapping/heal": (.bootstrapping, ["refuse"]),
        "bootstrapping/healed": (.closed, ["close:109"]),

        "active/bind": (.active, ["refuse"]),
        "active/upload": (.active, ["send:upload"]),
        "active/unbind": (.unbinding, ["send:unbind"]),
        "active/bound": (.closed, ["close:109"]),
        "active/boundWithState": (.closed, ["close:109"]),
        "active/chunk": (.closed, ["close:109"]),
        "active/lastChunk": (.closed, ["close:109"]),
        "active/download": (.active, ["deliver:download"]),
        "active/error": (.unbinding, ["deliver:error", "send:unbind"]),
        "active/unbound": (.closed, ["close:109"]),
        "active/lost": (.closed, ["deliver:disconnected", "forget"]),
        "active/credit": (.active, ["send:credit"]),
        "active/heal": (.active, ["send:heal"]),
        "active/healed": (.active, ["deliver:healed"]),

        "unbinding/bind": (.unbinding, ["refuse"]),
        "unbinding/upload": (.unbinding, ["refuse"]),
        "unbinding/unbind": (.unbinding, []),
        "unbinding/bound": (.unbinding, []),
        "unbinding/boundWithState": (.unbinding, []),
        "unbinding/chunk": (.unbinding, []),
        "unbinding/lastChunk": (.unbinding, []),
        "unbinding/download": (.unbinding, []),
        "unbinding/error": (.unbinding, []),
        "unbinding/unbound": (.closed, ["deliver:unbound", "forget"]),
        "unbinding/lost": (.closed, ["deliver:disconnected", "forget"]),
        "unbinding/credit": (.unbinding, []),
        "unbinding/heal": (.unbinding, ["refuse"]),
        "unbinding/healed": (.unbinding, []),

        "closed/bind": (.closed, ["refuse"]),
        "closed/upload": (.closed, ["refuse"]),
        "closed/unbind": (.closed, []),
        "closed/bound": (.closed, []),
        "closed/boundWithState": (.closed, []),
        "closed/chunk": (.closed, []),
        "closed/lastChunk": (.closed, []),
        "closed/download": (.closed, []),
        "closed/error": (.closed, []),
        "closed/unbound": (.closed, []),
        "closed/lost": (.closed, []),
        "closed/credit": (.closed, []),
        "closed/heal": (.closed, ["refuse"]),
        "closed/healed": (.closed, []),
    ]

    @Test func tableCoversEveryPair() {
        #expect(Self.expected.count == State.allCases.count * Self.events.count)
    }

    @Test(arguments: State.allCases)
    func everyEventInState(_ state: State) {
        for (name, event) in Self.events {
            var machine = Machine(session: 7, state: state, access: .readwrite)
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

    @Test func uploadToAReadOnlyPartitionIsRefusedLocally() {
        var machine = Machine(session: 7)
        _ = machine.handle(.bindRequested(Fixtures.bind))
        _ = machine.handle(.boundReceived(Fixtures.reply(access: .read)))
        #expect(machine.handle(.uploadRequested(Fixtures.upload)) == [.refuse(.readOnly)])
        #expect(machine.handle(.healRequested(Fixtures.healChunk)) == [.refuse(.readOnly)])
        #expect(machine.state == .active)
    }

    /// A heal chunk goes out as it is, and its answer reaches the owner between downloads.
    @Test func healChunksAndTheirAnswersPassThroughAnActiveSession() {
        var machine = Machine(session: 7)
        _ = machine.handle(.bindRequested(Fixtures.bind))
        _ = machine.handle(.boundReceived(Fixtures.reply()))
        #expect(machine.handle(.healRequested(Fixtures.healOffer)) == [.send(.heal(Fixtures.healOffer))])
        #expect(machine.handle(.downloadReceived(Fixtures.download())) == [.deliver(.download(Fixtures.download()))])
        let reply = Fixtures.healReply(outcome: .rebase)
        #expect(machine.handle(.healedReceived(reply)) == [.deliver(.healed(reply))])
        #expect(machine.state == .active)
    }
}

func summary(_ action: ClientSessionStateMachine.Action) -> String {
    switch action {
    case .send(let message): "send:\(message.name)"
    case .deliver(let event): "deliver:\(name(event))"
    case .refuse: "refuse"
    case .closeConnection(let error): "close:\(error.code.rawValue)"
    case .forget: "forget"
    }
}

func name(_ event: SessionEvent) -> String {
    switch event {
    case .bound: "bound"
    case .state: "state"
    case .download: "download"
    case .healed: "healed"
    case .compensatingWrites: "compensating-writes"
    case .subscriptionChunk: "subscription-chunk"
    case .error: "error"
    case .unbound: "unbound"
    case .disconnected: "disconnected"
    }
}
