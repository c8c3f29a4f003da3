import TetherProtocol

/// A session's events, in order (see ``SyncSession``). Taking the next event after a state
/// chunk, a download or a subscription chunk grants the server one more such message (protocol 2 flow control,
/// docs/protocol.md): a consumer asks for the next event only once it is done with the
/// previous one — the agent has committed it — so what waits in memory for one session is
/// bounded by the window, however large the partition and however slow its store.
package struct SessionEvents: AsyncSequence, Sendable {
    package typealias Element = SessionEvent
    package typealias Failure = Never

    let stream: AsyncStream<SessionEvent>
    let grant: @Sendable (Int) async -> Void

    /// `grant` tells the server it may send that many more state or download messages.
    package init(_ stream: AsyncStream<SessionEvent>, grant: @escaping @Sendable (Int) async -> Void) {
        self.stream = stream
        self.grant = grant
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), grant: grant)
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        package typealias Element = SessionEvent
        package typealias Failure = Never

        var base: AsyncStream<SessionEvent>.AsyncIterator
        let grant: @Sendable (Int) async -> Void
        /// Flow-controlled messages handed out and not yet granted back.
        var owed = 0

        package mutating func next() async -> SessionEvent? {
            await settle()
            return count(await base.next())
        }

        package mutating func next(isolation actor: isolated (any Actor)?) async -> SessionEvent? {
            await settle(isolation: actor)
            return count(await base.next(isolation: actor))
        }

        private mutating func settle(isolation actor: isolated (any Actor)? = #isolation) async {
            guard owed > 0 else { return }
            let messages = owed
            owed = 0
            await grant(messages)
        }

        private mutating func count(_ event: SessionEvent?) -> SessionEvent? {
            switch event {
            case .state, .download, .subscriptionChunk: owed += 1
            default: break
            }
            return event
        }
    }
}
