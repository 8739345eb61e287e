import Foundation
import UbiqCore
import UbiqStorage

/// Where a server keeps its metadata (`--database`): `metadata.sqlite` in the data folder (the
/// default), or a PostgreSQL database (`postgres://USER:PASSWORD@HOST:PORT/DB`, see
/// `PostgreSQLLocation`) that several servers can share.
public enum MetadataLocation: Sendable, Equatable {
    case sqlite
    case postgres(PostgreSQLLocation)

    /// Reads `--database` (nil or empty: SQLite in the data folder); `invalid_value` with what is wrong.
    public static func parse(_ text: String?, environment env: [String: String]) throws -> MetadataLocation {
        guard let text, !text.isEmpty else { return .sqlite }
        do { return .postgres(try PostgreSQLLocation(parsing: text, environment: env)) } catch let e as StorageError {
            throw CoreError(.invalidValue, e.message)
        }
    }

    /// Opens the metadata database (creating or upgrading its schema).
    func open(data directory: URL) async throws -> SQLMetadataStore {
        switch self {
        case .sqlite:
            return try ServerServices.openMetadata(at: directory)
        case .postgres(let location):
            do {
                return SQLMetadataStore(database: try await PostgreSQLDatabase.open(location))
            } catch let e as StorageError {
                throw APIFailure(e.code, "PostgreSQL \(location.redacted): \(e.message)")
            }
        }
    }
}
