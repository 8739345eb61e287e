import Foundation
import UbiqStorage

/// Drops the PostgreSQL databases made for test servers (named `ubiq_t_…` on the server that
/// `UBIQ_TEST_DATABASE_URL` or `DATABASE_URL` names); any other database is left alone.
public enum TestDatabaseDrop {
    public static func drop(_ location: PostgreSQLLocation) async {
        let env = ProcessInfo.processInfo.environment
        guard location.database.hasPrefix("ubiq_t_"), let url = env["UBIQ_TEST_DATABASE_URL"] ?? env["DATABASE_URL"],
              var base = try? PostgreSQLLocation(parsing: url) else { return }
        base.connections = 1
        try? await PostgreSQLDatabase.administer(base, ["DROP DATABASE IF EXISTS \(location.database) WITH (FORCE)"])
        // The server key its servers shared goes with it (runs left hundreds in the temp folder).
        try? FileManager.default.removeItem(atPath: keyFile(of: location))
    }

    /// The server key file the test servers of one PostgreSQL database share (a fleet shares one).
    public static func keyFile(of pg: PostgreSQLLocation) -> String {
        NSTemporaryDirectory() + "ubiq-test-key-\(pg.host)-\(pg.port)-\(pg.database).key"
    }
}
