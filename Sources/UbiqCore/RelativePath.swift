import Foundation

/// A validated path relative to a container folder, e.g. `Documents/notes.txt`.
///
/// Invariants (checked by ``init(validating:)``): valid UTF-8, Unicode NFC, `/`-separated,
/// not absolute, no empty, `.` or `..` segments, no NUL or control characters,
/// each name at most 400 bytes (`maxStoredNameBytes`: an encrypted account's names travel
/// sealed, longer than the names they seal), the whole path at most 4096 bytes. A folder on a
/// device holds names of at most `maxNameBytes` (255) bytes; the names a device makes up
/// (`numbered`, `suffixed`) keep to that.
/// Used by the server and the engine alike, so both sides agree on what a path is.
public struct RelativePath: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// Largest number of UTF-8 bytes in one name in a folder on a device (Linux's `NAME_MAX`).
    public static let maxNameBytes = 255
    /// Largest number of UTF-8 bytes in one name of a path on the server or the wire: a sealed
    /// name of 255 bytes (`NameCipher`) is 363 characters, and a restore may add ` (restored N)`.
    public static let maxStoredNameBytes = 400
    /// Largest number of UTF-8 bytes in a whole path.
    public static let maxPathBytes = 4096

    /// The normalised path string.
    public let string: String

    /// Validates and NFC-normalises `raw`; throws ``CoreError`` with code `invalid_path`.
    public init(validating raw: String) throws {
        guard !raw.isEmpty else { throw CoreError(.invalidPath, "path is empty") }
        // ASCII is already NFC: skip Foundation's normalisation, by far the costliest step.
        var normalized = raw.utf8.allSatisfy({ $0 < 0x80 }) ? raw : raw.precomposedStringWithCanonicalMapping
        guard normalized.utf8.count <= Self.maxPathBytes else {
            throw CoreError(.invalidPath, "path is longer than \(Self.maxPathBytes) bytes")
        }
        // One pass over the bytes (the engine validates every path it loads at start-up).
        let problem = normalized.withUTF8 { Self.problem(in: $0) }
        if let problem { throw CoreError(.invalidPath, "\(problem): \(Self.quoted(raw))") }
        self.string = normalized
    }

    /// What is wrong with a path's (valid, NFC) UTF-8 bytes, or nil.
    private static func problem(in u: UnsafeBufferPointer<UInt8>) -> String? {
        if u.first == 0x2F { return "path must be relative" }
        var start = 0
        for i in 0...u.count {
            if i < u.count {
                let c = u[i]
                // C0 controls and DEL; C1 controls (U+0080–U+009F) are 0xC2 0x80–0x9F in UTF-8.
                if c < 0x20 || c == 0x7F || (c == 0xC2 && i + 1 < u.count && u[i + 1] >= 0x80 && u[i + 1] <= 0x9F) {
                    return "path contains a control character"
                }
                if c != 0x2F { continue }
            }
            let n = i - start
            if n == 0 { return "path has an empty segment" }
            if u[start] == 0x2E && (n == 1 || (n == 2 && u[start + 1] == 0x2E)) { return "path may not contain '.' or '..'" }
            if n > maxStoredNameBytes { return "a name is longer than \(maxStoredNameBytes) bytes" }
            start = i + 1
        }
        return nil
    }

    /// Validates raw bytes as UTF-8 first (hostile input from the disk or the network).
    public init(validatingBytes bytes: [UInt8]) throws {
        guard let s = String(validating: bytes, as: UTF8.self) else {
            throw CoreError(.invalidPath, "path is not valid UTF-8")
        }
        try self.init(validating: s)
    }

    private init(unchecked: String) { self.string = unchecked }

    /// The path's segments.
    /// (Cut at the `/` bytes: an index of the UTF-8 view at an ASCII byte is a valid index of
    /// the string, and walking bytes is several times cheaper than walking `Character`s — every
    /// sealed path of an encrypted account is split here, name by name.)
    public var components: [String] {
        let u = string.utf8
        var out: [String] = []
        var start = u.startIndex
        var i = start
        while i != u.endIndex {
            if u[i] == 0x2F {
                if start != i { out.append(String(string[start..<i])) }
                start = u.index(after: i)
            }
            i = u.index(after: i)
        }
        if start != u.endIndex { out.append(String(string[start...])) }
        return out
    }
    /// The last segment.
    public var name: String {
        guard let slash = string.utf8.lastIndex(of: 0x2F) else { return string }
        return String(string[string.utf8.index(after: slash)...])
    }
    /// The enclosing folder, or nil at the container's top level.
    public var parent: RelativePath? {
        guard let slash = string.utf8.lastIndex(of: 0x2F) else { return nil }
        return RelativePath(unchecked: String(string[..<slash]))
    }
    /// The path of a child named `name` (validated).
    public func appending(_ name: String) throws -> RelativePath {
        // Checking the one new name is enough: the rest was checked when `self` was made. A
        // plain ASCII name (the common case) is checked byte by byte; anything else in full.
        let u = name.utf8
        guard u.count <= Self.maxStoredNameBytes, string.utf8.count + 1 + u.count <= Self.maxPathBytes,
              !u.isEmpty, name != ".", name != "..",
              u.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x2F }) else {
            return try RelativePath(validating: string + "/" + name)
        }
        return RelativePath(unchecked: string + "/" + name)
    }
    /// True when `self` is `other` or lies inside it.
    /// (Over bytes, as paths are cut: a name may begin with a combining mark, which makes one
    /// `Character` with the `/` before it.)
    public func isSelfOrDescendant(of other: RelativePath) -> Bool {
        let u = string.utf8, o = other.string.utf8
        guard u.starts(with: o) else { return false }
        guard u.count > o.count else { return true }
        return u[u.index(u.startIndex, offsetBy: o.count)] == 0x2F
    }
    /// Replaces the prefix `old` (which `self` must lie in) with `new`.
    public func rebased(from old: RelativePath, to new: RelativePath) -> RelativePath {
        guard isSelfOrDescendant(of: old) else { return self }
        return RelativePath(unchecked: new.string + string[string.utf8.index(string.startIndex, offsetBy: old.string.utf8.count)...])
    }
    /// True when this item or any ancestor folder's name ends in `.nosync` (it never leaves the device).
    public var isExcluded: Bool {
        // A name ends in `.nosync` where the marker is followed by `/` or the end (no arrays built:
        // the scan asks this of every path).
        let marker = Array(".nosync".utf8)
        var s = string
        return s.withUTF8 { u in
            guard u.count >= marker.count else { return false }
            for end in marker.count...u.count where end == u.count || u[end] == 0x2F {
                if memcmp(u.baseAddress! + end - marker.count, marker, marker.count) == 0 { return true }
            }
            return false
        }
    }
    /// True when the path lies in the `Documents/` folder (the `documents` scope).
    public var isInDocuments: Bool { string == "Documents" || string.hasPrefix("Documents/") }

    public var description: String { string }
    /// Code-point order (paths are NFC, so comparing UTF-8 bytes gives the same order, faster).
    /// Byte order of the UTF-8 forms (memcmp on native strings; the generic walk otherwise).
    public static func < (a: RelativePath, b: RelativePath) -> Bool {
        if let r = a.string.utf8.withContiguousStorageIfAvailable({ x in
            b.string.utf8.withContiguousStorageIfAvailable { y -> Bool in
                let c = memcmp(x.baseAddress!, y.baseAddress!, min(x.count, y.count))
                return c != 0 ? c < 0 : x.count < y.count
            }
        }), let r { return r }
        return a.string.utf8.lexicographicallyPrecedes(b.string.utf8)
    }

    public init(from decoder: Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        try self.init(validating: raw)
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(string)
    }

    static func quoted(_ s: String) -> String {
        let shown = s.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
        return "'" + String(shown.prefix(200)) + "'"
    }
}

extension RelativePath {
    /// The same path with ` (n)` before the name's extension (`notes (2).txt`, `Folder (3)`): the
    /// visible rename an item gets when another item took its name first, as iCloud Drive does.
    public func numbered(_ n: Int) -> RelativePath {
        let newName = Self.suffixed(name, " (\(n))")
        return (try? parent.map { try $0.appending(newName) } ?? RelativePath(validating: newName)) ?? self
    }

    /// `name` with `suffix` before its extension (`notes.txt` → `notes (restored).txt`), the
    /// stem cut short (on a character) so the result is at most `limit` bytes — a long name keeps
    /// its extension and its suffix rather than becoming one a folder cannot hold.
    public static func suffixed(_ name: String, _ suffix: String, limit: Int = maxNameBytes) -> String {
        var stem: Substring = name[...], ext: Substring = ""
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { stem = name[..<dot]; ext = name[dot...] }
        if stem.utf8.count + suffix.utf8.count + ext.utf8.count > limit, ext.utf8.count + suffix.utf8.count >= limit - 1 { ext = "" }  // an "extension" as long as the name
        while stem.utf8.count + suffix.utf8.count + ext.utf8.count > limit, stem.count > 1 { stem = stem.dropLast() }
        return String(stem) + suffix + String(ext)
    }
}
