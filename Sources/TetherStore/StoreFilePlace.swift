/// Which of the agent's files a path is, as errors name it: a refused symbolic link says where
/// it was met (docs/operations.md "Symbolic links").
package enum StoreFilePlace: String, Sendable, Hashable, CaseIterable {
    case store
    case backup
    case staging
    case quarantine
    case stateDatabase = "state database"
    case eventJournal = "event journal"
}
