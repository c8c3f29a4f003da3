import Foundation
import GRDB
import TetherTestSupport

/// Bytes on the wire per changed field: agent W writes, agent R receives, each connected to the
/// server through its own ``LoopbackProxy`` (which counts bytes per direction). Workloads: one transaction changing one field
/// (`total`, a real) of N rows, then 100 single-field commits, each awaited on R before the next.
struct WireBytesBench {
    let options: BenchOptions
    let cluster: Cluster
    static let partition = "wire"

    func run() async throws -> BenchFigure {
        let writerProxy = try LoopbackProxy(targetPort: cluster.port)
        let readerProxy = try LoopbackProxy(targetPort: cluster.port)
        defer {
            writerProxy.stop()
            readerProxy.stop()
        }
        let writer = try cluster.agent("wire-w", partitions: [Self.partition], url: "ws://127.0.0.1:\(writerProxy.port)/sync")
        let reader = try cluster.agent("wire-r", partitions: [Self.partition], url: "ws://127.0.0.1:\(readerProxy.port)/sync")
        try await writer.start()
        try await reader.start()
        try await writer.waitSynced(Self.partition)
        try await reader.waitSynced(Self.partition)
        let fields = options.wireFields
        try await SQLWorkload.run(writer.store(Self.partition), SQLWorkload.insertScript(prefix: "wire", count: fields, transactions: 1))
        let watcher = try StoreReader(path: reader.store(Self.partition))
        try await watcher.waitForCount(fields)
        try await writer.waitSynced(Self.partition)
        try await reader.waitSynced(Self.partition)

        writerProxy.resetCounters()
        readerProxy.resetCounters()
        try await SQLWorkload.run(writer.store(Self.partition), SQLWorkload.updateScript(prefix: "wire", count: fields, stride: 1, total: 7.5))
        try await watcher.waitForCount(fields, where: "total = 7.5")
        try await writer.waitSynced(Self.partition)
        try await reader.waitSynced(Self.partition)
        let bulkUp = Double(writerProxy.clientToServer) / Double(fields)
        let bulkAck = Double(writerProxy.serverToClient) / Double(fields)
        let bulkDown = Double(readerProxy.serverToClient) / Double(fields)

        let singles = 100
        writerProxy.resetCounters()
        readerProxy.resetCounters()
        let source = try StoreReader(path: writer.store(Self.partition))
        for i in 0..<singles {
            try source.execute("UPDATE orders SET total = 8.25 WHERE id = ?", [String(format: "wire-%09d", i)])
            try await watcher.waitForCount(i + 1, where: "total = 8.25", timeout: .seconds(30), interval: .milliseconds(1))
        }
        try await writer.waitSynced(Self.partition)
        let singleUp = Double(writerProxy.clientToServer) / Double(singles)
        let singleDown = Double(readerProxy.serverToClient) / Double(singles)
        await writer.stop()
        await reader.stop()
        return BenchFigure(
            name: "bytes on the wire per changed field", workload: "\(fields) rows × 1 real field in one transaction, A → server → B, via counting TCP proxies",
            value: bulkUp, unit: "B upload/field", runs: [bulkUp],
            extra: [
                "bulk_upload_bytes_per_field": bulkUp, "bulk_download_bytes_per_field": bulkDown, "bulk_ack_bytes_per_field": bulkAck,
                "single_commit_upload_bytes": singleUp, "single_commit_download_bytes": singleDown,
            ],
            notes: ["key is 14 bytes of text, value an 8-byte real; single_commit_*: 100 one-field commits, each awaited on B"])
    }
}
