import Foundation
import TetherProtocol
import TetherTOML

/// Decides, at start, between the schema file and the schemas the server has applied:
/// the first start records the file's schema; a newer file version is applied (breaking
/// ones only with `--allow-breaking-schema`); an older one means `admin schema apply`
/// moved on and the stored schema is kept.
enum SchemaReconciliation {
    enum Decision: Equatable {
        case keep
        case append(SchemaRecord, breaking: Bool)
        /// The stored schema is newer than the file (applied at run time).
        case storedIsNewer(stored: Int, file: Int)
    }

    static func decide(file schema: Schema, fileName: String, stored: [SchemaRecord], allowBreaking: Bool, now: Date) throws(ConfigError) -> Decision {
        guard let current = stored.last?.schema else {
            return .append(SchemaRecord(schema: schema, isBreaking: false, appliedAt: now), breaking: false)
        }
        if schema.version < current.version { return .storedIsNewer(stored: current.version, file: schema.version) }
        if schema.version == current.version {
            guard schema == current else {
                throw ConfigError(file: fileName, key: "version",
                    "the schema differs from the server's schema version \(current.version) but has the same version; raise `version`")
            }
            return .keep
        }
        let diff = SchemaDiff(from: current, to: schema)
        if diff.isBreaking && !allowBreaking {
            throw ConfigError(file: fileName, key: "version",
                "schema version \(schema.version) is a breaking change from version \(current.version) (\(diff.summary.joined(separator: "; "))); start with --allow-breaking-schema or use `tether-server admin schema apply --allow-breaking`")
        }
        return .append(SchemaRecord(schema: schema, isBreaking: diff.isBreaking, appliedAt: now), breaking: diff.isBreaking)
    }
}
