import Foundation

/// One version of a document, as `NSFileVersion`: the current one, the unresolved conflict
/// versions other devices made, and older ones. Read any version's content; resolve a conflict
/// by keeping one version, or keep both (each conflict version becomes a document beside it).
public struct FileVersion: Sendable, Equatable, Identifiable {
    /// The document this is a version of.
    public let url: URL
    /// The version's ID (as `ubiq versions` prints it).
    public let id: String
    public let size: Int
    public let modified: Date
    /// The device that saved it (`localizedNameOfSavingComputer`).
    public let deviceName: String
    /// An unresolved conflict version.
    public let isConflict: Bool

    /// The versions of the document at `url`.
    public struct Versions: Sendable, Equatable {
        public let current: FileVersion?
        public let unresolvedConflicts: [FileVersion]
        /// Earlier versions kept by the server (newest first).
        public let others: [FileVersion]
    }

    /// The document's versions now.
    public static func versions(of url: URL, ubiquity: Ubiquity = .standard) async throws -> Versions {
        let at = try ubiquity.locate(url)
        guard let v = try await ubiquity.ask(.versions(path: at.path), container: at.container).versions else {
            throw UbiquityError(.brokenAnswer, "the daemon's answer has no versions")
        }
        func make(_ r: VersionRecord, conflict: Bool) -> FileVersion {
            FileVersion(url: url, id: r.id.description, size: r.size, modified: r.modified, deviceName: r.deviceName, isConflict: conflict)
        }
        return Versions(current: v.current.map { make($0, conflict: false) }, unresolvedConflicts: v.conflicts.map { make($0, conflict: true) },
                        others: v.others.map { make($0, conflict: false) })
    }

    public static func current(of url: URL, ubiquity: Ubiquity = .standard) async throws -> FileVersion? {
        try await versions(of: url, ubiquity: ubiquity).current
    }

    public static func unresolvedConflicts(of url: URL, ubiquity: Ubiquity = .standard) async throws -> [FileVersion] {
        try await versions(of: url, ubiquity: ubiquity).unresolvedConflicts
    }

    /// This version's bytes (fetched from the server when this device does not hold them).
    public func content(ubiquity: Ubiquity = .standard) async throws -> Data {
        let at = try ubiquity.locate(url)
        var out = Data()
        let step = 1 << 20
        while true {
            let piece = try await ubiquity.ask(.versionContent(path: at.path, version: id, limit: step, offset: out.count), container: at.container).content ?? Data()
            out.append(piece)
            if piece.count < step || out.count >= size { return out }
        }
    }

    /// Resolves the document's conflicts by keeping `version` as its current version (the
    /// others leave; `NSFileVersion`'s "resolved" plus `removeOtherVersionsOfItem`).
    public static func resolve(_ url: URL, keeping version: FileVersion, ubiquity: Ubiquity = .standard) async throws {
        let at = try ubiquity.locate(url)
        _ = try await ubiquity.ask(.resolve(path: at.path, keep: version.id), container: at.container)
    }

    /// Removes the document's conflict versions, keeping the current one (as
    /// `removeOtherVersionsOfItem(at:)` after a conflict was dealt with). Earlier versions stay
    /// on the server for restoring, as long as its retention keeps them: they are the user's
    /// history, not the app's to erase. Nothing happens when there is no conflict.
    public static func removeOtherVersions(of url: URL, ubiquity: Ubiquity = .standard) async throws {
        let v = try await versions(of: url, ubiquity: ubiquity)
        guard !v.unresolvedConflicts.isEmpty, let current = v.current else { return }
        try await resolve(url, keeping: current, ubiquity: ubiquity)
    }

    /// Resolves by keeping everything: the current version stays, each conflict version
    /// becomes a document beside it; returns the new documents' URLs.
    @discardableResult
    public static func keepBoth(_ url: URL, ubiquity: Ubiquity = .standard) async throws -> [URL] {
        let at = try ubiquity.locate(url)
        let made = try await ubiquity.ask(.keepBoth(path: at.path), container: at.container).results ?? []
        return made.map { at.folder.appendingPathComponent($0.path) }
    }
}
