import Foundation

/// A value bound to a statement or read from a row: the few types the metadata schema uses
/// (SQLite's storage classes; PostgreSQL's bigint, double precision, text and bytea map onto
/// them, a boolean reads as 0 or 1).
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// A Swift value a statement takes as an argument.
public protocol SQLArgument: Sendable {
    var sqlValue: SQLValue { get }
}

extension Int64: SQLArgument { public var sqlValue: SQLValue { .integer(self) } }
extension Int: SQLArgument { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Double: SQLArgument { public var sqlValue: SQLValue { .real(self) } }
extension String: SQLArgument { public var sqlValue: SQLValue { .text(self) } }
extension Bool: SQLArgument { public var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension Data: SQLArgument { public var sqlValue: SQLValue { .blob(self) } }
extension SQLValue: SQLArgument { public var sqlValue: SQLValue { self } }
extension Optional: SQLArgument where Wrapped: SQLArgument {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// A Swift value a column reads as.
public protocol SQLColumnValue {
    /// The value, or nil when the column's value is not one of this type.
    static func read(_ value: SQLValue) -> Self?
}

extension Int64: SQLColumnValue {
    public static func read(_ value: SQLValue) -> Int64? { if case .integer(let i) = value { return i }; return nil }
}
extension Int: SQLColumnValue {
    public static func read(_ value: SQLValue) -> Int? { if case .integer(let i) = value { return Int(exactly: i) }; return nil }
}
extension Double: SQLColumnValue {
    public static func read(_ value: SQLValue) -> Double? {
        switch value {
        case .real(let d): return d
        case .integer(let i): return Double(i)  // SQLite may hand a whole REAL back as an integer
        default: return nil
        }
    }
}
extension String: SQLColumnValue {
    public static func read(_ value: SQLValue) -> String? { if case .text(let s) = value { return s }; return nil }
}
extension Bool: SQLColumnValue {
    public static func read(_ value: SQLValue) -> Bool? { if case .integer(let i) = value { return i != 0 }; return nil }
}
extension Data: SQLColumnValue {
    public static func read(_ value: SQLValue) -> Data? { if case .blob(let b) = value { return b }; return nil }
}
extension Optional: SQLColumnValue where Wrapped: SQLColumnValue {
    public static func read(_ value: SQLValue) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        return Wrapped.read(value).map { .some($0) }
    }
}

/// The column names of one statement's rows (shared by its rows).
public final class SQLColumns: Sendable {
    public let names: [String]
    let index: [String: Int]

    public init(_ names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (i, n) in names.enumerated() where index[n.lowercased()] == nil { index[n.lowercased()] = i }
        self.index = index
    }
}

/// One row of a result: read by column name (case-insensitive, the first of a repeated name)
/// or by position, as the type the caller names. A value that is not of that type (a NULL for a
/// non-optional) throws `storage_failure` instead of stopping the process.
public struct SQLRow: Sendable {
    public let columns: SQLColumns
    public let values: [SQLValue]

    public init(columns: SQLColumns, values: [SQLValue]) { self.columns = columns; self.values = values }

    public subscript<T: SQLColumnValue>(_ i: Int) -> T {
        get throws {
            guard values.indices.contains(i) else { throw StorageError(.storageFailure, "database row has no column \(i)") }
            guard let v = T.read(values[i]) else {
                throw StorageError(.storageFailure, "database column '\(columns.names[i])' holds \(values[i].kind), not \(T.self)")
            }
            return v
        }
    }

    public subscript<T: SQLColumnValue>(_ name: String) -> T {
        get throws {
            guard let i = columns.index[name.lowercased()] else { throw StorageError(.storageFailure, "database row has no column '\(name)'") }
            return try self[i]
        }
    }
}

extension SQLValue {
    var kind: String {
        switch self {
        case .null: "NULL"
        case .integer: "an integer"
        case .real: "a real"
        case .text: "text"
        case .blob: "a blob"
        }
    }
}
