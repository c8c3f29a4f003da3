/// A session's own machine, which a connection's machine keeps one of per bound session and
/// routes that session's events to (``ClientSessionStateMachine``, ``ServerSessionStateMachine``).
package protocol SessionMachine: Sendable {
    associatedtype Event
    associatedtype Action
    mutating func handle(_ event: Event) -> [Action]
}

extension ClientSessionStateMachine: SessionMachine {}
extension ServerSessionStateMachine: SessionMachine {}

extension Dictionary where Key == SessionID, Value: SessionMachine {
    /// Hands `event` to session `id`'s machine and keeps its new state; nil when no such
    /// session is bound (its events are dropped: it ended).
    mutating func handle(_ event: Value.Event, in id: SessionID) -> [Value.Action]? {
        guard var machine = self[id] else { return nil }
        let actions = machine.handle(event)
        self[id] = machine
        return actions
    }
}
