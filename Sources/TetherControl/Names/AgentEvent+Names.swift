extension AgentEvent {
    /// `state`: the partition's new state.
    public var partitionState: Tether.PartitionState? {
        event == .state ? state.map(Tether.PartitionState.init(rawValue:)) : nil
    }

    /// `sync-error`: what the agent does about it.
    public var errorAction: Tether.ErrorAction? {
        event == .syncError ? action.map(Tether.ErrorAction.init(rawValue:)) : nil
    }

    /// `reset-phase`, `reset-backup`: the reset's phase (a `download` event's `phase` is not one).
    public var resetPhase: Tether.ResetPhase? {
        event == .resetPhase || event == .resetBackup ? phase.map(Tether.ResetPhase.init(rawValue:)) : nil
    }

    /// `reset-phase`, `reset-backup`: the reset's strategy, the first word of `message`.
    public var resetStrategy: Tether.ResetStrategy? {
        guard event == .resetPhase || event == .resetBackup, let message, !message.isEmpty else { return nil }
        let word = message.prefix { $0 != "," && $0 != " " }
        return Tether.ResetStrategy(rawValue: String(word))
    }

    /// `reset-outcome`: how the reset ended.
    public var resetOutcome: Tether.ResetOutcome? {
        event == .resetOutcome ? outcome.map(Tether.ResetOutcome.init(rawValue:)) : nil
    }
}
