/// Everything that can go wrong with a partition store. Every case names the store file, table
/// or column at fault; none carries row contents. `hint` tells an operator what to do and
/// `needsReset` whether only a client reset (docs/contract.md: Client resets) can make the store usable again.
package enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The schema handed to the store is not a valid schema (each problem names table and column).
    case invalidSchema(problems: [String])
    /// The store's user tables do not match its schema (someone altered or created tables).
    /// `column` is nil when the whole table is at fault.
    case schemaMismatch(path: String, table: String, column: String?, problem: String)
    /// The requested schema differs from the store's in a way an in-place upgrade cannot apply.
    case breakingSchemaChange(path: String, differences: [String])
    /// The store file belongs to another partition.
    case partitionMismatch(path: String, expected: String, found: String)
    /// The file exists but is not a Tether store (no `_tether_meta`).
    case notAStore(path: String)
    /// A later release of the agent converted the store's `_tether*` tables (`migrations`: those
    /// this release does not know); this one cannot use it and changes nothing.
    case writtenByNewerRelease(path: String, migrations: [String])
    /// A change or state row names a table the schema does not have.
    case unknownTable(table: String)
    /// A change or state row names a column the table does not have.
    case unknownColumn(table: String, column: String)
    /// A value does not fit its column (`expected` is the schema spelling, `found` the value's type).
    case typeMismatch(table: String, column: String, expected: String, found: String)
    /// A row lacks a value for a column that is not nullable (or carries null for it).
    case missingValue(table: String, column: String)
    /// The rows of a full state are not sorted by table, then strictly by primary key.
    case stateNotSorted(table: String)
    /// An application write was rejected because the store is read-only (docs/contract.md: Partitions and stores).
    case readOnly(partition: String)
    /// SQLite reported an error (`code` is the extended result code).
    case sqlite(path: String, code: Int32, message: String)
    /// `PRAGMA integrity_check` found problems.
    case corrupt(path: String, problems: [String])
    /// A ready file (a server-built store, docs/store.md "Ready files") holds objects a store of
    /// its schema does not, lacks some, or defines them otherwise (each difference a sentence
    /// naming the object): it is refused, never installed.
    case readyFileSchema(path: String, differences: [String])
    /// A file-system operation failed.
    case io(path: String, operation: String, errno: Int32)
    /// A symbolic link where the agent keeps its own file (`place`: store, backup, staging,
    /// quarantine, state database): never followed, refused (``NoFollow``).
    case symbolicLink(path: String, place: String)
    /// The last chunk of a subscription change completes a set other than the one the device
    /// wants (`expected` and `found`: ``TetherProtocol/SubscriptionSet/digestText``s): refused,
    /// nothing of the chunk kept; the store keeps the set it held.
    case subscriptionMismatch(path: String, expected: String, found: String)

    /// True when nothing short of a client reset (or a manual repair) makes the store usable:
    /// a damaged file, tables an application altered, or a breaking schema change.
    package var needsReset: Bool {
        if isCorruption || isSchemaAlteration { return true }
        if case .breakingSchemaChange = self { return true }
        return false
    }

    /// True when the same operation may succeed later without anyone repairing the store: an
    /// I/O error, a full disk, a busy or locked database, a file that cannot be opened yet.
    package var isTransient: Bool {
        switch self {
        case .io: true
        case .sqlite(_, let code, _):
            // SQLITE_BUSY, LOCKED, NOMEM, INTERRUPT (a cancelled task: a stopping daemon, a
            // closed connection), IOERR, FULL, CANTOPEN, PROTOCOL (with extended codes).
            [5, 6, 7, 9, 10, 13, 14, 15].contains(code & 0xFF)
        default: false
        }
    }

    /// True when the file itself is damaged or is not SQLite at all (SQLITE_CORRUPT,
    /// SQLITE_NOTADB, or a failed integrity check): the agent quarantines such a store and
    /// bootstraps the partition again from the server (docs/client-reset.md).
    package var isCorruption: Bool {
        switch self {
        case .corrupt: true
        case .sqlite(_, let code, _): code & 0xFF == 11 || code & 0xFF == 26
        default: false
        }
    }

    /// True for a symbolic link where the agent keeps its own file (``symbolicLink(path:place:)``):
    /// refused until someone removes it.
    package var isSymbolicLink: Bool {
        if case .symbolicLink = self { return true }
        return false
    }

    /// True when an application changed the store's tables (docs/contract.md: Partitions and stores forbids it): only a client
    /// reset gives the store back the server's schema.
    package var isSchemaAlteration: Bool {
        if case .schemaMismatch = self { return true }
        return false
    }

    /// One sentence for the operator, safe to log.
    package var hint: String {
        switch self {
        case .invalidSchema:
            "fix the schema (schema.toml) on the server; every problem names the table and column"
        case .schemaMismatch:
            "applications must not alter a store's tables; restore the store from a backup or reset it with `tetherctl reset initiate`"
        case .breakingSchemaChange:
            "the server's schema changed in a breaking way; update applications, then run `tetherctl reset initiate`"
        case .partitionMismatch:
            "the store file belongs to another partition; check the [[partition]] store path in the agent configuration"
        case .notAStore:
            "the file is not a Tether store; point the partition at another path or move the file away"
        case .writtenByNewerRelease:
            "a later release of tetherd converted this store; run that release, or restore the state directory copied before the upgrade (docs/contract.md: Versions and compatibility)"
        case .unknownTable, .unknownColumn, .typeMismatch, .missingValue:
            "the data does not fit the store's schema; check that agent and server agree on the schema version"
        case .stateNotSorted:
            "the state stream must be sorted by table name, then by primary key; this is a bug in its producer"
        case .readOnly:
            "the user may only read this partition; grant write access on the server or stop writing to the store"
        case .sqlite:
            "check the file's permissions, free disk space and that no process holds a long write lock"
        case .corrupt:
            "the store file is damaged; a client reset rebuilds it from the server (`tetherctl reset initiate`)"
        case .readyFileSchema:
            "the server's ready file is not a store of the partition's schema; the agent dropped it and downloads rows instead. Check the server: its release, and its ready-file cache ([ready_files] cache_dir), which may hold a tampered file"
        case .io:
            "check that the directory exists, is writable by the agent and that the disk is not full"
        case .subscriptionMismatch:
            "the server completed a subscription change to another set than the one configured (a reload changed it meanwhile, or a server bug); the partition binds again and asks for the configured set"
        case .symbolicLink:
            "tetherd never follows a symbolic link in its directories; find out who made it, remove the link and put the real file there (docs/operations.md \"Symbolic links\")"
        }
    }

    package var description: String {
        switch self {
        case .invalidSchema(let problems):
            "invalid schema: \(problems.joined(separator: "; "))"
        case .schemaMismatch(let path, let table, let column, let problem):
            if let column {
                "store \(path): column \(table).\(column) does not match the schema: \(problem)"
            } else {
                "store \(path): table \(table) does not match the schema: \(problem)"
            }
        case .breakingSchemaChange(let path, let differences):
            "store \(path): breaking schema change: \(differences.joined(separator: "; "))"
        case .partitionMismatch(let path, let expected, let found):
            "store \(path) belongs to partition \(found), not \(expected)"
        case .notAStore(let path):
            "\(path) is not a Tether store"
        case .writtenByNewerRelease(let path, let migrations):
            "store \(path) was converted by a later release of tetherd (\(migrations.joined(separator: ", ")))"
        case .unknownTable(let table):
            "table \(table) is not in the schema"
        case .unknownColumn(let table, let column):
            "column \(table).\(column) is not in the schema"
        case .typeMismatch(let table, let column, let expected, let found):
            "column \(table).\(column) is \(expected), got a \(found) value"
        case .missingValue(let table, let column):
            "column \(table).\(column) is not nullable and has no value"
        case .stateNotSorted(let table):
            "state rows of table \(table) are not sorted by primary key (or come after a later table)"
        case .readOnly(let partition):
            "partition \(partition) is read-only"
        case .sqlite(let path, let code, let message):
            "store \(path): SQLite error \(code): \(message)"
        case .corrupt(let path, let problems):
            "store \(path) failed the integrity check: \(problems.prefix(5).joined(separator: "; "))"
        case .readyFileSchema(let path, let differences):
            "ready file \(path) is not a store of its schema: \(differences.prefix(5).joined(separator: "; "))"
                + (differences.count > 5 ? " (and \(differences.count - 5) more)" : "")
        case .io(let path, let operation, let errno):
            "\(operation) \(path) failed: errno \(errno)"
        case .symbolicLink(let path, let place):
            "\(place) \(path) is a symbolic link; refused, not followed"
        case .subscriptionMismatch(let path, let expected, let found):
            "store \(path): a subscription change completes the set with digest \(found), not \(expected) as asked; refused"
        }
    }
}
