import Testing
@testable import TetherStore

/// Which store errors are worth retrying and which need a reset (the agent retries the first
/// kind with backoff instead of stopping the partition).
struct StoreErrorTests {
    @Test(arguments: [
        (Int32(13), true),    // SQLITE_FULL: a full disk passes
        (Int32(4874), true),  // SQLITE_IOERR_SHMSIZE: the -shm file could not grow (full tmpfs)
        (Int32(5), true),     // SQLITE_BUSY
        (Int32(14), true),    // SQLITE_CANTOPEN
        (Int32(9), true),     // SQLITE_INTERRUPT: the task was cancelled (a closed connection), not the store
        (Int32(11), false),   // SQLITE_CORRUPT needs a reset
        (Int32(26), false),   // SQLITE_NOTADB needs a reset
        (Int32(19), false),   // SQLITE_CONSTRAINT is a bug or bad data, not weather
    ])
    func sqliteErrorsThatMayPassAreTransient(code: Int32, transient: Bool) {
        let error = StoreError.sqlite(path: "/s.sqlite", code: code, message: "m")
        #expect(error.isTransient == transient)
        if transient { #expect(!error.needsReset) }
    }

    @Test func fileSystemErrorsAreTransientAndSchemaErrorsAreNot() {
        #expect(StoreError.io(path: "/s", operation: "rename", errno: 28).isTransient)
        #expect(!StoreError.notAStore(path: "/s").isTransient)
        #expect(!StoreError.corrupt(path: "/s", problems: ["x"]).isTransient)
    }
}
