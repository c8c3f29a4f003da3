// Empty where Swift Testing is missing: the static release build compiles this target too.
#if canImport(Testing)
import Testing
import TetherTestSupport

/// The PostgreSQL server of a suite run under ``PostgresClusterTrait`` (started once for the
/// suite, stopped after it; each test makes its own database).
public enum TestPostgres {
    @TaskLocal public static var cluster: PostgresCluster?

    public static func current() throws -> PostgresCluster {
        guard let cluster else { throw TestSupportError("this suite needs the .postgresCluster trait") }
        return cluster
    }
}

/// Starts a real PostgreSQL 15 for a suite (never skipped: a missing PostgreSQL fails the suite).
public struct PostgresClusterTrait: SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let cluster = try await PostgresCluster.start()
        do {
            try await TestPostgres.$cluster.withValue(cluster) { try await function() }
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }
}

extension Trait where Self == PostgresClusterTrait {
    public static var postgresCluster: Self { PostgresClusterTrait() }
}
#endif
