/// Sizes and repetitions of one benchmark run: the full set, or the small `QUICK=1` version.
package struct BenchOptions: Sendable {
    package var quick: Bool
    /// Rows of the bulk propagation figure, inserted in `bulkTransactions` transactions.
    package var bulkRows: Int
    package var bulkTransactions = 100
    package var bulkRuns: Int
    package var latencyCommits: Int
    /// Store sizes for bootstrap and client reset (growth with size).
    package var scales: [Int]
    package var idlePartitions = 100
    package var idleSeconds: Int
    package var fanOutSessions: Int
    package var fanOutWrites: Int
    /// Devices connected at once to one instance (the connected-devices figure).
    package var connectedDevices: Int
    /// Fields changed in the bytes-on-the-wire workload.
    package var wireFields: Int
    package var resultsPath: String
    /// Devices enrolled from one reusable key in the enrollment figure (issue 48).
    package var enrollments: Int
    /// Binds per batch of the tag-template bind figure, and its runs (each a device batch and
    /// a `[[user]]` batch, alternating).
    package var templateBinds: Int
    package var templateBindRuns: Int
    /// Revocations timed (a new device each).
    package var revocationRuns: Int
    /// Entries of the ledger the console's pages are timed over (issue 49).
    package var ledgerEntries: Int
    /// The server's storage, and how many instances share it (PostgreSQL only).
    package var storage: Storage = .sqlite
    package var instances = 1

    package enum Storage: String, Sendable {
        case sqlite, postgresql
    }

    package init(quick: Bool, resultsPath: String) {
        self.quick = quick
        self.resultsPath = resultsPath
        bulkRows = quick ? 10_000 : 100_000
        bulkRuns = quick ? 1 : 3
        latencyCommits = quick ? 200 : 1_000
        scales = quick ? [10_000] : [10_000, 100_000, 1_000_000]
        idleSeconds = quick ? 10 : 60
        fanOutSessions = quick ? 50 : 200
        fanOutWrites = quick ? 10 : 30
        connectedDevices = quick ? 500 : 50_000
        wireFields = quick ? 1_000 : 10_000
        enrollments = quick ? 500 : 10_000
        templateBinds = quick ? 200 : 1_000
        templateBindRuns = quick ? 3 : 9
        revocationRuns = quick ? 3 : 5
        ledgerEntries = quick ? 20_000 : 100_000
    }

    /// Runs of bootstrap and client reset at `rows` rows: medians of three where cheap.
    package func scaleRuns(_ rows: Int) -> Int { quick || rows >= 1_000_000 ? 1 : 3 }

    /// Unsynced changes in the client reset workload: 1 % of the rows (10,000 of 1,000,000).
    package func unsyncedChanges(_ rows: Int) -> Int { max(100, rows / 100) }
}
