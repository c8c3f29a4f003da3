import Foundation
import GRDB
import TetherProtocol
import TetherStore
import TetherTestSupport

/// The schema most store tests use: a text-keyed table with every column type, and an
/// integer-keyed one.
let testSchema = Schema(version: 1, tables: [
    TableSchema(name: "orders", primaryKey: "id", columns: [
        ColumnSchema(name: "id", type: .text),
        ColumnSchema(name: "customer", type: .text),
        ColumnSchema(name: "total", type: .real),
        ColumnSchema(name: "qty", type: .integer),
        ColumnSchema(name: "paid", type: .boolean),
        ColumnSchema(name: "note", type: .text, nullable: true),
        ColumnSchema(name: "photo", type: .blob, nullable: true),
    ]),
    TableSchema(name: "items", primaryKey: "sku", columns: [
        ColumnSchema(name: "sku", type: .integer),
        ColumnSchema(name: "name", type: .text),
        ColumnSchema(name: "price", type: .real, nullable: true),
    ]),
])

let testPartition = PartitionName("shop-1")!

struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `/usr/bin/sqlite3 <file> <sql>` as a separate process (an application outside the agent).
@discardableResult
func sqlite3(_ file: String, _ sql: String) async throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    // As an application would: wait for a lock (the agent's watcher reads) rather than fail at once.
    process.arguments = ["-bail", "-cmd", ".timeout 10000", file, sql]
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        process.terminationHandler = { _ in continuation.resume() }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume()
        }
    }
    guard process.processIdentifier != 0 else { throw POSIXError(.ENOENT) }
    let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return ProcessResult(status: process.terminationStatus, stdout: stdout, stderr: stderr)
}

/// An application's own connection to a store file (another SQLite connection, same process).
func appConnection(_ path: String) throws -> DatabaseQueue {
    var config = Configuration()
    config.busyMode = .timeout(10)
    return try DatabaseQueue(path: path, configuration: config)
}

/// Opens a fresh store with `testSchema` in `dir`.
func makeStore(_ dir: TemporaryDirectory, name: String = "store.sqlite", schema: Schema = testSchema) async throws -> PartitionStore {
    try await PartitionStore.open(path: dir.appending(name), partition: testPartition, schema: schema)
}

/// A full `orders` row.
func order(
    customer: String = "ann", total: Double = 1.5, qty: Int64 = 1, paid: Bool = false,
    note: String? = nil, photo: [UInt8]? = nil
) -> [String: FieldValue] {
    [
        "customer": .text(customer), "total": .real(total), "qty": .integer(qty), "paid": .integer(paid ? 1 : 0),
        "note": note.map { .text($0) } ?? .null, "photo": photo.map { .blob($0) } ?? .null,
    ]
}
