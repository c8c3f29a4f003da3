/// The statements PostgreSQL storage prepares once per connection (``PostgresPreparedSQL``):
/// those of a bind, of a state download and of a session's history reads — what runs once per
/// device and once per change per device. Each names its result columns.
enum PostgresHotSQL {
    enum PartitionRow: PostgresPreparedSQL {
        static let name = "tether_partition_row"
        static let sql = "SELECT id, latest_version, latest_salt, base_version, base_salt, epoch FROM partitions WHERE name = $1"
    }

    /// ``PartitionRow`` with the row lock every change to the partition takes first.
    enum PartitionRowLocked: PostgresPreparedSQL {
        static let name = "tether_partition_row_locked"
        static let sql = PartitionRow.sql + " FOR UPDATE"
    }

    enum CreatePartition: PostgresPreparedSQL {
        static let name = "tether_create_partition"
        static let sql = """
            INSERT INTO partitions(name, latest_version, latest_salt, base_version, base_salt, created_at)
            VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING
            """
    }

    enum RegisterClientFile: PostgresPreparedSQL {
        static let name = "tether_register_client_file"
        static let sql = "INSERT INTO client_files(partition_id, salt, created_at, last_seen) VALUES ($1, $2, $3, $4) RETURNING id"
    }

    /// A new client file of the partition named `$1` (salt `$2`, now `$3`) with the partition's
    /// head and epoch, read in the same statement; no row when the partition does not exist.
    enum RegisterClientFileInPartition: PostgresPreparedSQL {
        static let name = "tether_register_in_partition"
        static let sql = """
            WITH p AS (SELECT id, latest_version, latest_salt, base_version, base_salt, epoch FROM partitions WHERE name = $1),
            f AS (INSERT INTO client_files(partition_id, salt, created_at, last_seen) SELECT id, $2, $3, $3 FROM p RETURNING id)
            SELECT f.id, p.latest_version, p.latest_salt, p.base_version, p.base_salt, p.epoch FROM f CROSS JOIN p
            """
    }

    enum ClientFile: PostgresPreparedSQL {
        static let name = "tether_client_file"
        static let sql = """
            SELECT c.id, c.salt, c.integrated_seq, c.integrated_version, c.integrated_salt, c.confirmed_version, c.last_seen
            FROM client_files c JOIN partitions p ON p.id = c.partition_id WHERE c.id = $1 AND p.name = $2
            """
    }

    enum TouchClientFile: PostgresPreparedSQL {
        static let name = "tether_touch_client_file"
        static let sql = "UPDATE client_files SET last_seen = $1, confirmed_version = greatest(confirmed_version, $2) WHERE id = $3"
    }

    enum IntegratedSeq: PostgresPreparedSQL {
        static let name = "tether_integrated_seq"
        static let sql = "SELECT integrated_seq, integrated_version FROM client_files WHERE id = $1 AND partition_id = $2"
    }

    enum Flags: PostgresPreparedSQL {
        static let name = "tether_flags"
        static let sql = "SELECT key, value FROM meta"
    }

    /// A page of history after a version, stopped in the database at a running size (always
    /// one entry): `$1` partition, `$2` after version, `$3` entries, `$4` bytes.
    enum HistoryPage: PostgresPreparedSQL {
        static let name = "tether_history_page"
        static let sql = """
            WITH page AS (
                SELECT version, octet_length(changeset) AS size FROM history
                WHERE partition_id = $1 AND version > $2 ORDER BY version LIMIT $3),
            running AS (
                SELECT version, sum(size) OVER (ORDER BY version) AS total, row_number() OVER (ORDER BY version) AS n FROM page)
            SELECT h.version, h.salt, h.origin_file, h.origin_seq, h.changeset, h.images, h.compensations
            FROM running r JOIN history h ON h.partition_id = $1 AND h.version = r.version
            WHERE r.n = 1 OR r.total <= $4 ORDER BY h.version
            """
    }

    enum StateTotals: PostgresPreparedSQL {
        static let name = "tether_state_totals"
        static let sql = "SELECT count(*), coalesce(sum(octet_length(key) + octet_length(fields)), 0)::bigint FROM state WHERE partition_id = $1"
    }

    enum StateFirstRows: PostgresPreparedSQL {
        static let name = "tether_state_first_rows"
        static let sql = "SELECT tbl, key, fields FROM state WHERE partition_id = $1 ORDER BY tbl, key LIMIT $2"
    }

    enum StateNextRows: PostgresPreparedSQL {
        static let name = "tether_state_next_rows"
        static let sql = """
            SELECT tbl, key, fields FROM state WHERE partition_id = $1 AND (tbl, key) > ($2 COLLATE "C", $3) ORDER BY tbl, key LIMIT $4
            """
    }
}

extension PostgresHotSQL {
    enum UploadIntegratedSeq: PostgresPreparedSQL {
        static let name = "tether_upload_integrated_seq"
        static let sql = "SELECT integrated_seq FROM client_files WHERE id = $1 AND partition_id = $2"
    }

    /// `$1` integrated seq, `$2` version, `$3` upload salt, `$4` now, `$5` client file.
    enum UploadIntegrated: PostgresPreparedSQL {
        static let name = "tether_upload_integrated"
        static let sql = """
            UPDATE client_files SET integrated_seq = $1, integrated_version = $2, integrated_salt = $3, last_seen = $4 WHERE id = $5
            """
    }

    /// `$1` partition, `$2` origin file, `$3` now, then the arrays of versions, salts, origin
    /// seqs, changesets, row images and compensation records (empty: none).
    enum AppendHistory: PostgresPreparedSQL {
        static let name = "tether_append_history2"
        static let sql = """
            INSERT INTO history(partition_id, version, salt, origin_file, origin_seq, created_at, changeset, images, compensations)
            SELECT $1, v, s, $2, o, $3, c, i, nullif(x, ''::bytea)
            FROM unnest($4::bigint[], $5::bigint[], $6::bigint[], $7::bytea[], $8::bytea[], $9::bytea[]) AS u(v, s, o, c, i, x)
            """
    }

    enum MoveHead: PostgresPreparedSQL {
        static let name = "tether_move_head"
        static let sql = "UPDATE partitions SET latest_version = $1, latest_salt = $2 WHERE id = $3"
    }

    /// The stored rows of `$1` among the keys of the arrays `$2` (tables) and `$3` (keys).
    ///
    /// One probe of the primary key per key, whatever the statistics say: the lateral subquery
    /// is fenced (`OFFSET 0`) so that the planner cannot turn it into a join. Joined plainly,
    /// a partition the statistics do not know yet (loaded since the last `ANALYZE`; for a new
    /// partition of a large table that can be long) looked like a few rows, and each upload
    /// hashed all of its rows: 0.2–0.4 s an upload at 100,000 rows, growing with the partition.
    enum StateRowsForKeys: PostgresPreparedSQL {
        static let name = "tether_state_rows_for_keys2"
        static let sql = """
            SELECT r.tbl, r.key, r.fields FROM unnest($2::text[], $3::bytea[]) AS u(tbl, key)
            CROSS JOIN LATERAL (
                SELECT s.tbl, s.key, s.fields FROM state s WHERE s.partition_id = $1 AND s.tbl = u.tbl COLLATE "C" AND s.key = u.key
                OFFSET 0) r
            """
    }

    enum PutStateRows: PostgresPreparedSQL {
        static let name = "tether_put_state_rows"
        static let sql = """
            INSERT INTO state(partition_id, tbl, key, fields)
            SELECT $1, t, k, f FROM unnest($2::text[], $3::bytea[], $4::bytea[]) AS u(t, k, f)
            ON CONFLICT (partition_id, tbl, key) DO UPDATE SET fields = excluded.fields
            """
    }

    enum FilterIndexColumnsSQL: PostgresPreparedSQL {
        static let name = "tether_filter_index_columns"
        static let sql = "SELECT tbl, col FROM state_index_columns"
    }

    /// Index entries of partition `$1` to remove: tables `$2`, columns `$3`, values `$4`, keys `$5`.
    ///
    /// Found one probe each (as ``StateRowsForKeys``), then removed by their row ids: a `DELETE …
    /// USING unnest(…)` is a join the planner may answer by hashing the partition's every entry.
    /// The ids stay valid to the end of the statement: the partition's row is locked (`FOR
    /// UPDATE`) by every transaction that writes its state or its index.
    enum DeleteIndexEntries: PostgresPreparedSQL {
        static let name = "tether_delete_index_entries2"
        static let sql = """
            DELETE FROM state_index WHERE ctid = ANY(ARRAY(
                SELECT r.ctid FROM unnest($2::text[], $3::text[], $4::bytea[], $5::bytea[]) AS u(tbl, col, value, key)
                CROSS JOIN LATERAL (
                    SELECT i.ctid FROM state_index i WHERE i.partition_id = $1 AND i.tbl = u.tbl COLLATE "C" AND i.col = u.col COLLATE "C"
                        AND i.value = u.value AND i.key = u.key
                    OFFSET 0) r))
            """
    }

    /// Index entries of partition `$1` to add, as ``DeleteIndexEntries`` names them.
    enum InsertIndexEntries: PostgresPreparedSQL {
        static let name = "tether_insert_index_entries"
        static let sql = """
            INSERT INTO state_index(partition_id, tbl, col, value, key)
            SELECT $1, t, c, v, k FROM unnest($2::text[], $3::text[], $4::bytea[], $5::bytea[]) AS u(t, c, v, k)
            ON CONFLICT DO NOTHING
            """
    }

    /// The rows of partition `$1` to remove: tables `$2`, keys `$3` (found and removed as
    /// ``DeleteIndexEntries`` are).
    enum DeleteStateRows: PostgresPreparedSQL {
        static let name = "tether_delete_state_rows2"
        static let sql = """
            DELETE FROM state WHERE ctid = ANY(ARRAY(
                SELECT r.ctid FROM unnest($2::text[], $3::bytea[]) AS u(tbl, key)
                CROSS JOIN LATERAL (
                    SELECT s.ctid FROM state s WHERE s.partition_id = $1 AND s.tbl = u.tbl COLLATE "C" AND s.key = u.key
                    OFFSET 0) r))
            """
    }
}

extension PostgresHotSQL {
    /// A client file's lease for this instance (`$1` client file, `$2` instance, `$3` its
    /// holder key, `$4` the instances' advisory lock class): taken when free, held by this
    /// instance already, or held by an instance whose advisory lock is gone.
    enum AcquireLease: PostgresPreparedSQL {
        static let name = "tether_acquire_lease"
        static let sql = """
            INSERT INTO client_file_leases(client_file, instance, holder_key) VALUES ($1, $2, $3)
            ON CONFLICT (client_file) DO UPDATE SET instance = excluded.instance, holder_key = excluded.holder_key, taken_at = now()
            WHERE client_file_leases.instance = excluded.instance OR NOT EXISTS (
                SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND l.classid = $4::oid AND l.objid = client_file_leases.holder_key::oid)
            RETURNING client_file
            """
    }
}
