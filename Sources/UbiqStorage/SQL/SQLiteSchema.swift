import Foundation
import GRDB
import UbiqCore

/// The embedded database's schema: append-only migrations (a shipped migration is never edited;
/// changes go in a new one). `PostgreSQLSchema` holds the same tables for PostgreSQL.
enum SQLiteSchema {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1-accounts") { db in
            try db.execute(sql: """
                CREATE TABLE accounts (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    salt BLOB NOT NULL,
                    iterations INTEGER NOT NULL,
                    derived BLOB NOT NULL,
                    quota INTEGER NOT NULL,
                    used INTEGER NOT NULL DEFAULT 0,
                    created REAL NOT NULL
                );
                CREATE TABLE devices (
                    id TEXT NOT NULL,
                    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    created REAL NOT NULL,
                    last_seen REAL NOT NULL,
                    PRIMARY KEY (account_id, id)
                );
                CREATE TABLE tokens (
                    hash TEXT PRIMARY KEY,
                    account_id INTEGER NOT NULL,
                    device_id TEXT NOT NULL,
                    created REAL NOT NULL,
                    FOREIGN KEY (account_id, device_id) REFERENCES devices(account_id, id) ON DELETE CASCADE
                );
                CREATE TABLE account_chunks (
                    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    hash TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    PRIMARY KEY (account_id, hash)
                ) WITHOUT ROWID;
                """)
        }
        m.registerMigration("v1-items") { db in
            try db.execute(sql: """
                CREATE TABLE containers (
                    id INTEGER PRIMARY KEY,
                    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    UNIQUE (account_id, name)
                );
                CREATE TABLE items (
                    id INTEGER PRIMARY KEY,
                    container_id INTEGER NOT NULL REFERENCES containers(id) ON DELETE CASCADE,
                    uuid TEXT NOT NULL,
                    path TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    current_version INTEGER,
                    deleted_at REAL,
                    trash_group TEXT,
                    created REAL NOT NULL,
                    seq INTEGER NOT NULL DEFAULT 0,
                    UNIQUE (container_id, uuid)
                );
                CREATE UNIQUE INDEX items_live_path ON items(container_id, path) WHERE deleted_at IS NULL;
                CREATE TABLE versions (
                    id INTEGER PRIMARY KEY,
                    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
                    container_id INTEGER NOT NULL,
                    uuid TEXT NOT NULL,
                    state TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    hash TEXT NOT NULL,
                    modified REAL NOT NULL,
                    committed REAL NOT NULL,
                    device_id TEXT NOT NULL,
                    device_name TEXT NOT NULL,
                    uploaded INTEGER NOT NULL,
                    UNIQUE (container_id, uuid)
                );
                CREATE INDEX versions_item ON versions(item_id, state);
                CREATE TABLE version_chunks (
                    version_id INTEGER NOT NULL REFERENCES versions(id) ON DELETE CASCADE,
                    idx INTEGER NOT NULL,
                    hash TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    PRIMARY KEY (version_id, idx)
                ) WITHOUT ROWID;
                CREATE TABLE changes (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    container_id INTEGER NOT NULL REFERENCES containers(id) ON DELETE CASCADE,
                    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE
                );
                CREATE INDEX changes_container ON changes(container_id, seq);
                CREATE INDEX changes_item ON changes(item_id);
                """)
        }
        m.registerMigration("v1-kv") { db in
            try db.execute(sql: """
                CREATE TABLE kv_batches (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    store TEXT NOT NULL,
                    created REAL NOT NULL
                );
                CREATE TABLE kv_entries (
                    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    store TEXT NOT NULL,
                    key TEXT NOT NULL,
                    value BLOB,
                    wall INTEGER NOT NULL,
                    counter INTEGER NOT NULL,
                    device TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (account_id, store, key)
                ) WITHOUT ROWID;
                CREATE INDEX kv_entries_seq ON kv_entries(account_id, store, seq);
                """)
        }
        // Which versions still use a chunk (so a chunk no version uses is released from its account).
        m.registerMigration("v2-chunk-references") { db in
            try db.execute(sql: "CREATE INDEX version_chunks_hash ON version_chunks(hash)")
        }
        // A version's hash became the hash of its chunk list (`Manifest.contentHash`) instead of
        // SHA-256 of the whole file: re-derived for every version from its stored chunk list.
        m.registerMigration("v3-content-hash") { db in
            let versions = try Int64.fetchAll(db, sql: "SELECT id FROM versions")
            let chunks = try db.makeStatement(sql: "SELECT hash, size FROM version_chunks WHERE version_id = ? ORDER BY idx")
            let update = try db.makeStatement(sql: "UPDATE versions SET hash = ? WHERE id = ?")
            for v in versions {
                let refs = try Row.fetchAll(chunks, arguments: [v]).map { ChunkRef(hash: try ContentHash(validating: $0["hash"]), size: $0["size"]) }
                try update.execute(arguments: [Manifest.contentHash(of: refs).hex, v])
            }
        }
        // Deleted items by path: a commit under a folder that is not live looks for a deleted
        // folder there to revive, which scanned every item of the container (a batch of files
        // in folders never committed took seconds per 500 files in a container of 20,000).
        m.registerMigration("v4-deleted-item-paths") { db in
            try db.execute(sql: "CREATE INDEX items_deleted_path ON items(container_id, path, deleted_at) WHERE deleted_at IS NOT NULL")
        }
        // Each key-value store's horizon: the newest delete it forgot (`KVLimits.maxTombstones`)
        // and the change it was made in (feeds asked from before it are expired).
        m.registerMigration("v5-kv-horizon") { db in
            try db.execute(sql: """
                CREATE TABLE kv_horizon (
                    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    store TEXT NOT NULL,
                    wall INTEGER NOT NULL,
                    counter INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (account_id, store)
                ) WITHOUT ROWID
                """)
        }
        // An end-to-end encrypted account's sealed record of each version (`VersionRecord.sealed`).
        m.registerMigration("v15-version-sealed") { db in
            try db.execute(sql: "ALTER TABLE versions ADD COLUMN sealed TEXT")
        }
        // Each file version's permission bits as the writing device had them (nil: not sent).
        m.registerMigration("v6-version-permissions") { db in
            try db.execute(sql: "ALTER TABLE versions ADD COLUMN permissions INTEGER")
        }
        // Chunk references held per account (`ChunkReferenceBudget`): each version records how
        // many its chunk list has; a commit adds them to the account's total (a batch once, at
        // its end) and a trigger takes them off as versions go (history pruned, trash purged).
        m.registerMigration("v7-chunk-reference-counts") { db in
            try db.execute(sql: """
                ALTER TABLE versions ADD COLUMN refs INTEGER NOT NULL DEFAULT 0;
                UPDATE versions SET refs = (SELECT count(*) FROM version_chunks WHERE version_id = versions.id);
                ALTER TABLE accounts ADD COLUMN refs INTEGER NOT NULL DEFAULT 0;
                UPDATE accounts SET refs = coalesce((SELECT sum(v.refs) FROM versions v JOIN containers c ON c.id = v.container_id
                                                     WHERE c.account_id = accounts.id), 0);
                CREATE TRIGGER versions_refs_dropped AFTER DELETE ON versions BEGIN
                    UPDATE accounts SET refs = max(0, refs - OLD.refs) WHERE id = (SELECT account_id FROM containers WHERE id = OLD.container_id);
                END;
                """)
        }
        // The version each was committed against (`VersionRecord.base`: a merge's common base).
        m.registerMigration("v8-version-base") { db in
            try db.execute(sql: "ALTER TABLE versions ADD COLUMN base TEXT")
        }
        // Each key's last writes (who, when, what), for "who changed this and to what"
        // (`KVLimits.historyPerKey` a key, `KVLimits.maxHistoryBytes` a store).
        m.registerMigration("v9-kv-history") { db in
            try db.execute(sql: """
                CREATE TABLE kv_history (
                    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    store TEXT NOT NULL,
                    key TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    value BLOB,
                    wall INTEGER NOT NULL,
                    counter INTEGER NOT NULL,
                    device TEXT NOT NULL,
                    PRIMARY KEY (account_id, store, key, seq)
                ) WITHOUT ROWID;
                CREATE INDEX kv_history_seq ON kv_history(account_id, store, seq);
                """)
        }
        // Garbage collection (`ubiq server gc`): when each upload was recorded (so an upload
        // never committed is released after `ChunkCollection.uncommittedGrace`) and a look-up
        // by hash alone ("does any account hold this chunk?").
        m.registerMigration("v10-chunk-collection") { db in
            try db.execute(sql: "ALTER TABLE account_chunks ADD COLUMN added REAL NOT NULL DEFAULT 0")
            try db.execute(sql: "UPDATE account_chunks SET added = ?", arguments: [Date().timeIntervalSince1970])
            try db.execute(sql: "CREATE INDEX account_chunks_hash ON account_chunks(hash)")
        }
        // Entries without chunks count too (#45 row 2): a version costs one besides its chunk
        // references, and a folder one while it is live or in the trash (a trigger follows it
        // as it is made, purged or brought back; rows gone with their account need nothing).
        m.registerMigration("v11-entries-counted") { db in
            try db.execute(sql: """
                UPDATE versions SET refs = refs + 1;
                CREATE TRIGGER items_folder_made AFTER INSERT ON items
                WHEN NEW.kind = 'folder' AND (NEW.deleted_at IS NULL OR NEW.trash_group IS NOT NULL) BEGIN
                    UPDATE accounts SET refs = refs + 1 WHERE id = (SELECT account_id FROM containers WHERE id = NEW.container_id);
                END;
                CREATE TRIGGER items_folder_kept AFTER UPDATE OF deleted_at, trash_group ON items
                WHEN NEW.kind = 'folder' AND (OLD.deleted_at IS NULL OR OLD.trash_group IS NOT NULL) != (NEW.deleted_at IS NULL OR NEW.trash_group IS NOT NULL) BEGIN
                    UPDATE accounts SET refs = max(0, refs + CASE WHEN NEW.deleted_at IS NULL OR NEW.trash_group IS NOT NULL THEN 1 ELSE -1 END)
                    WHERE id = (SELECT account_id FROM containers WHERE id = NEW.container_id);
                END;
                CREATE TRIGGER items_folder_dropped AFTER DELETE ON items
                WHEN OLD.kind = 'folder' AND (OLD.deleted_at IS NULL OR OLD.trash_group IS NOT NULL) BEGIN
                    UPDATE accounts SET refs = max(0, refs - 1) WHERE id = (SELECT account_id FROM containers WHERE id = OLD.container_id);
                END;
                """)
            try db.execute(sql: SQLQueries.recountEntries)
        }
        // Purged items' deletes are kept for the change feed up to a number an account
        // (`SQLMetadataStore.deletesKept`); older ones are forgotten and the container's horizon
        // says from where (a feed asked from before it is `cursor_expired`).
        m.registerMigration("v12-delete-horizon") { db in
            try db.execute(sql: """
                ALTER TABLE containers ADD COLUMN horizon INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX items_purged ON items(container_id, seq) WHERE deleted_at IS NOT NULL AND trash_group IS NULL;
                """)
        }
        // The server keys chunks at rest were sealed with (their IDs, never the keys): a server
        // whose key file lacks one of them refuses to start rather than write what the others
        // cannot read, or make a new key over a lost one.
        m.registerMigration("v13-server-keys") { db in
            try db.execute(sql: "CREATE TABLE server_keys (id TEXT PRIMARY KEY, added REAL NOT NULL)")
        }
        // An end-to-end encrypted account's sealed keys, which the server keeps and relays but
        // cannot open (`AccountKeyStore`).
        m.registerMigration("v14-account-keys") { db in
            try db.execute(sql: """
                CREATE TABLE account_keys (
                    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    value TEXT NOT NULL,
                    updated REAL NOT NULL,
                    PRIMARY KEY (account_id, name)
                ) WITHOUT ROWID
                """)
        }
        return m
    }
}
