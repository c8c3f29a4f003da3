// Empty where Swift Testing is missing: the static release build compiles this target too.
#if canImport(Testing)
import Testing
import TetherTestSupport

/// The PostgreSQL server of a suite run under ``PostgresClusterTrait`` (started once for the
/// suite, stopped after it; each test makes its own database).
package enum TestPostgres {
    @TaskLocal package static var cluster: PostgresCluster?

    package static func current() throws -> PostgresCluster {
        guard let cluster else { throw TestSupportError("this suite needs the .postgresCluster trait") }
        return cluster
    }
}

/// Starts a real PostgreSQL 15 for a suite (never skipped: a missing PostgreSQL fails the suite).
package struct PostgresClusterTrait: SuiteTrait, TestScoping {
    package var isRecursive: Bool { false }

    package func provideScope(
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
    package static var postgresCluster: Self { PostgresClusterTrait() }
}
#endif
