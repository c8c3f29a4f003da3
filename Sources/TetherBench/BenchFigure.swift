/// One measured figure: its median over runs, the floor measured in the same run, and the target.
package struct BenchFigure: Sendable, Codable {
    /// Short name, as in the table ("bulk propagation", "bootstrap 1000000 rows", …).
    package var name: String
    package var workload: String
    /// The headline result (median of runs) in `unit`.
    package var value: Double
    package var unit: String
    /// Every run's result in `unit`.
    package var runs: [Double]
    /// Median wall time of the figure's operation and of its floor, in seconds, when it has one.
    package var seconds: Double?
    package var floorSeconds: Double?
    /// `seconds / floorSeconds`.
    package var ratio: Double?
    /// Peak RSS of the agent doing the work during the phase (`VmHWM`), in bytes.
    package var peakResidentBytes: Int?
    package var target: String
    /// Whether the target was met; nil when the figure has no target.
    package var met: Bool?
    /// Further numbers (percentiles, CPU, bytes…), by name.
    package var extra: [String: Double]
    package var notes: [String]

    package init(
        name: String, workload: String, value: Double, unit: String, runs: [Double], seconds: Double? = nil,
        floorSeconds: Double? = nil, peakResidentBytes: Int? = nil, target: String = "—", met: Bool? = nil,
        extra: [String: Double] = [:], notes: [String] = []
    ) {
        self.name = name
        self.workload = workload
        self.value = value
        self.unit = unit
        self.runs = runs
        self.seconds = seconds
        self.floorSeconds = floorSeconds
        self.ratio = seconds.flatMap { s in floorSeconds.flatMap { Statistics.ratio(s, floor: $0) } }
        self.peakResidentBytes = peakResidentBytes
        self.target = target
        self.met = met
        self.extra = extra
        self.notes = notes
    }
}
