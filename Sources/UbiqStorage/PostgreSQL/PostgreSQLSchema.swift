import Foundation

/// The PostgreSQL database's schema: the tables the SQLite migrations end with
/// (`SQLiteSchema`), in PostgreSQL's types (BIGINT, DOUBLE PRECISION, BYTEA; text compared
/// byte by byte, `COLLATE "C"`, as SQLite compares it — the folder ranges depend on it).
/// Append-only: a shipped migration is never edited; changes go in a new one, here and in
/// `SQLiteSchema` alike.
enum PostgreSQLSchema {
    struct Migration {
        let name: String
        let statements: [String]
    }

    /// The advisory lock that lets one server at a time migrate.
    static let migrationLock: Int64 = 0x7562_6971_0001

    static let migrations: [Migration] = [
        Migration(name: "v1-schema", statements: [
            """
            CREATE TABLE accounts (
                id BIGSERIAL PRIMARY KEY,
                name TEXT COLLATE "C" NOT NULL UNIQUE,
                salt BYTEA NOT NULL,
                iterations BIGINT NOT NULL,
                derived BYTEA NOT NULL,
                quota BIGINT NOT NULL,
                used BIGINT NOT NULL DEFAULT 0,
                created DOUBLE PRECISION NOT NULL,
                refs BIGINT NOT NULL DEFAULT 0
            )
            """,
            """
            CREATE TABLE devices (
                id TEXT COLLATE "C" NOT NULL,
                account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                created DOUBLE PRECISION NOT NULL,
                last_seen DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (account_id, id)
            )
            """,
            """
            CREATE TABLE tokens (
                hash TEXT COLLATE "C" PRIMARY KEY,
                account_id BIGINT NOT NULL,
                device_id TEXT COLLATE "C" NOT NULL,
                created DOUBLE PRECISION NOT NULL,
                FOREIGN KEY (account_id, device_id) REFERENCES devices(account_id, id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX tokens_device ON tokens(account_id, device_id)",
            """
            CREATE TABLE account_chunks (
                account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                hash TEXT COLLATE "C" NOT NULL,
                size BIGINT NOT NULL,
                added DOUBLE PRECISION NOT NULL DEFAULT 0,
                PRIMARY KEY (account_id, hash)
            )
            """,
            "CREATE INDEX account_chunks_hash ON account_chunks(hash)",
            """
            CREATE TABLE containers (
                id BIGSERIAL PRIMARY KEY,
                account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                name TEXT COLLATE "C" NOT NULL,
                UNIQUE (account_id, name)
            )
            """,
            """
            CREATE TABLE items (
                id BIGSERIAL PRIMARY KEY,
                container_id BIGINT NOT NULL REFERENCES containers(id) ON DELETE CASCADE,
                uuid TEXT COLLATE "C" NOT NULL,
                path TEXT COLLATE "C" NOT NULL,
                kind TEXT COLLATE "C" NOT NULL,
                current_version BIGINT,
                deleted_at DOUBLE PRECISION,
                trash_group TEXT COLLATE "C",
                created DOUBLE PRECISION NOT NULL,
                seq BIGINT NOT NULL DEFAULT 0,
                UNIQUE (container_id, uuid)
            )
            """,
            "CREATE UNIQUE INDEX items_live_path ON items(container_id, path) WHERE deleted_at IS NULL",
            "CREATE INDEX items_deleted_path ON items(container_id, path, deleted_at) WHERE deleted_at IS NOT NULL",
            "CREATE INDEX items_trash_group ON items(container_id, trash_group) WHERE trash_group IS NOT NULL",
            """
            CREATE TABLE versions (
                id BIGSERIAL PRIMARY KEY,
                item_id BIGINT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
                container_id BIGINT NOT NULL,
                uuid TEXT COLLATE "C" NOT NULL,
                state TEXT COLLATE "C" NOT NULL,
                size BIGINT NOT NULL,
                hash TEXT COLLATE "C" NOT NULL,
                modified DOUBLE PRECISION NOT NULL,
                committed DOUBLE PRECISION NOT NULL,
                device_id TEXT COLLATE "C" NOT NULL,
                device_name TEXT NOT NULL,
                uploaded BIGINT NOT NULL,
                permissions BIGINT,
                refs BIGINT NOT NULL DEFAULT 0,
                base TEXT COLLATE "C",
                UNIQUE (container_id, uuid)
            )
            """,
            "CREATE INDEX versions_item ON versions(item_id, state)",
            """
            CREATE TABLE version_chunks (
                version_id BIGINT NOT NULL REFERENCES versions(id) ON DELETE CASCADE,
                idx BIGINT NOT NULL,
                hash TEXT COLLATE "C" NOT NULL,
                size BIGINT NOT NULL,
                PRIMARY KEY (version_id, idx)
            )
            """,
            "CREATE INDEX version_chunks_hash ON version_chunks(hash)",
            """
            CREATE TABLE changes (
                seq BIGSERIAL PRIMARY KEY,
                container_id BIGINT NOT NULL REFERENCES containers(id) ON DELETE CASCADE,
                item_id BIGINT NOT NULL REFERENCES items(id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX changes_container ON changes(container_id, seq)",
            "CREATE INDEX changes_item ON changes(item_id)",
            """
            CREATE TABLE kv_batches (
                seq BIGSERIAL PRIMARY KEY,
                account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                store TEXT COLLATE "C" NOT NULL,
                created DOUBLE PRECISION NOT NULL
            )
            """,
            "CREATE INDEX kv_batches_store ON kv_batches(account_id, store, seq)",
            """
            CREATE TABLE kv_entries (
                account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                store TEXT COLLATE "C" NOT NULL,
                key TEXT COLLATE "C" NOT NULL,
                value BYTEA,
                wall BIGINT NOT NULL,
                counter BIGINT NOT NULL,
                device TEXT COLLATE "C" NOT NULL,
                seq BIGINT NOT NULL,
                PRIMARY KEY (account_id, store, key)
            )
            """,
            "CREATE INDEX kv_entries_seq ON kv_entries(account_id, store, seq)",
            """
            CREATE TABLE kv_horizon (
                account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                store TEXT COLLATE "C" NOT NULL,
                wall BIGINT NOT NULL,
                counter BIGINT NOT NULL,
                seq BIGINT NOT NULL,
                PRIMARY KEY (account_id, store)
            )
            """,
            """
            CREATE TABLE kv_history (
                account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                store TEXT COLLATE "C" NOT NULL,
                key TEXT COLLATE "C" NOT NULL,
                seq BIGINT NOT NULL,
                value BYTEA,
                wall BIGINT NOT NULL,
                counter BIGINT NOT NULL,
                device TEXT COLLATE "C" NOT NULL,
                PRIMARY KEY (account_id, store, key, seq)
            )
            """,
            "CREATE INDEX kv_history_seq ON kv_history(account_id, store, seq)",
            // Chunk references held per account (`ChunkReferenceBudget`), taken off as versions go.
            """
            CREATE FUNCTION ubiq_versions_refs_dropped() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE accounts SET refs = GREATEST(0, refs - OLD.refs)
                WHERE id = (SELECT account_id FROM containers WHERE id = OLD.container_id);
                RETURN OLD;
            END
            $$
            """,
            "CREATE TRIGGER versions_refs_dropped AFTER DELETE ON versions FOR EACH ROW EXECUTE FUNCTION ubiq_versions_refs_dropped()",
        ]),
        // The object store's pack index (`PackIndex`), shared by every server on this database,
        // and which chunk store the database's chunks are in (`ubiq_blob_store`: one, so two
        // servers never keep an account's chunks in two places).
        Migration(name: "v2-packs", statements: [
            """
            CREATE TABLE chunk_packs (
                hash TEXT COLLATE "C" PRIMARY KEY,
                pack TEXT COLLATE "C" NOT NULL,
                "offset" BIGINT NOT NULL,
                size BIGINT NOT NULL
            )
            """,
            "CREATE INDEX chunk_packs_pack ON chunk_packs(pack)",
            "CREATE TABLE pack_garbage (pack TEXT COLLATE \"C\" PRIMARY KEY, bytes BIGINT NOT NULL)",
            "CREATE TABLE pack_sizes (pack TEXT COLLATE \"C\" PRIMARY KEY, size BIGINT NOT NULL)",
            "CREATE TABLE ubiq_blob_store (one INTEGER PRIMARY KEY CHECK (one = 1), location TEXT NOT NULL)",
        ]),
        // Uploads under way on any server (`SharedChunkGuard`): garbage collection keeps them.
        Migration(name: "v3-chunk-intents", statements: [
            """
            CREATE TABLE chunk_intents (
                token TEXT COLLATE "C" NOT NULL,
                hash TEXT COLLATE "C" NOT NULL,
                added DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (token, hash)
            )
            """,
            "CREATE INDEX chunk_intents_hash ON chunk_intents(hash)",
            "CREATE INDEX chunk_intents_added ON chunk_intents(added)",
        ]),
        // Failed logins across the servers (`FailureLog`): kept for the throttle's window.
        Migration(name: "v4-login-failures", statements: [
            "CREATE TABLE login_failures (key TEXT COLLATE \"C\" NOT NULL, at DOUBLE PRECISION NOT NULL)",
            "CREATE INDEX login_failures_key ON login_failures(key, at)",
            "CREATE INDEX login_failures_at ON login_failures(at)",
        ]),
        // Entries without chunks count too (#45 row 2; SQLite's v11-entries-counted).
        Migration(name: "v5-entries-counted", statements: [
            "UPDATE versions SET refs = refs + 1",
            """
            CREATE FUNCTION ubiq_items_folder_counted() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
                was_counted INT := 0;
                is_counted INT := 0;
                folder_container BIGINT;
            BEGIN
                IF TG_OP <> 'INSERT' THEN
                    folder_container := OLD.container_id;
                    IF OLD.kind = 'folder' AND (OLD.deleted_at IS NULL OR OLD.trash_group IS NOT NULL) THEN was_counted := 1; END IF;
                END IF;
                IF TG_OP <> 'DELETE' THEN
                    folder_container := NEW.container_id;
                    IF NEW.kind = 'folder' AND (NEW.deleted_at IS NULL OR NEW.trash_group IS NOT NULL) THEN is_counted := 1; END IF;
                END IF;
                IF is_counted <> was_counted THEN
                    UPDATE accounts SET refs = GREATEST(0, refs + is_counted - was_counted)
                    WHERE id = (SELECT account_id FROM containers WHERE id = folder_container);
                END IF;
                RETURN NULL;
            END
            $$
            """,
            "CREATE TRIGGER items_folder_counted AFTER INSERT OR UPDATE OF deleted_at, trash_group OR DELETE ON items FOR EACH ROW EXECUTE FUNCTION ubiq_items_folder_counted()",
            SQLQueries.recountEntries,
        ]),
        // Purged items' deletes kept up to a number an account (SQLite's v12-delete-horizon).
        Migration(name: "v6-delete-horizon", statements: [
            "ALTER TABLE containers ADD COLUMN horizon BIGINT NOT NULL DEFAULT 0",
            "CREATE INDEX items_purged ON items(container_id, seq) WHERE deleted_at IS NOT NULL AND trash_group IS NULL",
        ]),
        // The server keys chunks at rest were sealed with (SQLite's v13-server-keys).
        Migration(name: "v7-server-keys", statements: [
            "CREATE TABLE server_keys (id TEXT PRIMARY KEY, added DOUBLE PRECISION NOT NULL)",
        ]),
        // An end-to-end encrypted account's sealed keys (SQLite's v14-account-keys).
        Migration(name: "v8-account-keys", statements: [
            """
            CREATE TABLE account_keys (
                account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                name TEXT COLLATE "C" NOT NULL,
                value TEXT NOT NULL,
                updated DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (account_id, name)
            )
            """,
        ]),
        // SQLite's v15-version-sealed.
        Migration(name: "v9-version-sealed", statements: ["ALTER TABLE versions ADD COLUMN sealed TEXT"]),
    ]
}

extension PostgreSQLDatabase {
    /// Binds this database to one chunk store: the first server to open it records `location`
    /// (`s3://BUCKET` at ENDPOINT, or a folder on a host); a server that would keep chunks
    /// anywhere else is refused with one line naming both.
    public func bindChunkStore(_ location: String) async throws {
        try await write { db in
            try db.execute("INSERT INTO ubiq_blob_store (one, location) VALUES (1, ?) ON CONFLICT (one) DO NOTHING", [location])
            let bound: String = try db.value("SELECT location FROM ubiq_blob_store WHERE one = 1") ?? location
            guard bound == location else {
                throw StorageError(.invalidRequest, "the database \(self.location.redacted) keeps its chunks in \(bound), not \(location): every server on one database must use the same --blobs")
            }
        }
    }

    /// Applies the migrations this database lacks, one server at a time; refuses a database a
    /// newer `ubiq` made (migrations it does not know).
    func migrate() throws {
        try transaction(readOnly: false, bounded: false) { db in
            try db.execute("SELECT pg_advisory_xact_lock(?)", [PostgreSQLSchema.migrationLock])
            try db.execute("CREATE TABLE IF NOT EXISTS ubiq_migrations (name TEXT PRIMARY KEY, applied DOUBLE PRECISION NOT NULL)")
            let done = Set(try db.values("SELECT name FROM ubiq_migrations") as [String])
            let known = Set(PostgreSQLSchema.migrations.map(\.name))
            if let unknown = done.subtracting(known).sorted().first {
                throw StorageError(.storageFailure, "the database at \(self.location.redacted) was made by a newer ubiq (migration \(unknown)); upgrade this server")
            }
            for m in PostgreSQLSchema.migrations where !done.contains(m.name) {
                for statement in m.statements { try db.execute(statement) }
                try db.execute("INSERT INTO ubiq_migrations (name, applied) VALUES (?, ?)", [m.name, Date().timeIntervalSince1970])
            }
        }
    }
}
