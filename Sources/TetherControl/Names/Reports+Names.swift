extension PartitionReport {
    /// ``state`` as an enum.
    public var partitionState: Tether.PartitionState { Tether.PartitionState(rawValue: state) }
}

extension PartitionStateReport {
    /// ``state`` as an enum.
    public var partitionState: Tether.PartitionState { Tether.PartitionState(rawValue: state) }
}

extension ResetReport {
    /// ``strategy`` as an enum.
    public var resetStrategy: Tether.ResetStrategy { Tether.ResetStrategy(rawValue: strategy) }
    /// ``phase`` as an enum.
    public var resetPhase: Tether.ResetPhase { Tether.ResetPhase(rawValue: phase) }
    /// ``outcome`` as an enum.
    public var resetOutcome: Tether.ResetOutcome { Tether.ResetOutcome(rawValue: outcome) }
}
