import Foundation
import UbiqClient
import UbiqCore
import UbiqDaemonProtocol
import UbiqProtocol

/// Builds merge drafts and keeps merged text, on the server alone: the result is committed as
/// the document's next version (against the current version merged), then kept as the choice,
/// so the conflict version joins the history. Nothing is lost: every version stays in history,
/// and if the document changed on the server meanwhile the merged text becomes a conflict
/// version itself instead of replacing what came in.
enum ConflictMerge {
    /// The largest version merged (each side and the base).
    static let maxBytes = 1 << 20

    /// A draft merging `conflict` (the only conflict version when nil) into the current version.
    static func draft(_ client: any SyncServer, container: ContainerID, item: ItemID, path: RelativePath, conflict: VersionID?) async throws -> MergeDraft {
        let list = try await client.versions(container, item: item)
        guard let current = list.current else { throw EngineError(.notFound, "\(path) has no current version") }
        let theirs: VersionRecord
        if let conflict {
            guard let v = list.conflicts.first(where: { $0.id == conflict }) else { throw EngineError(.notFound, "\(path) has no conflict version \(conflict)") }
            theirs = v
        } else {
            guard let v = list.conflicts.first else { throw EngineError(.invalidRequest, "\(path) has no conflict to merge") }
            guard list.conflicts.count == 1 else {
                throw EngineError(.invalidRequest, "\(path) has \(list.conflicts.count) conflict versions; name one with --version (see `ubiq versions`)")
            }
            theirs = v
        }
        for v in [current, theirs] where !v.uploaded {
            throw EngineError(.incompleteContent, "the version from \(v.deviceName) has not finished uploading; try again when it has")
        }
        var base: VersionRecord?
        if let b = theirs.base {
            guard let v = ([current] + list.conflicts + list.others).first(where: { $0.id == b }) else {
                throw EngineError(.notFound, "the version \(path) was edited from is no longer kept; pick a version with --keep, or keep both")
            }
            base = v
        }
        for v in [current, theirs] + [base].compactMap({ $0 }) where v.size > maxBytes {
            throw EngineError(.invalidRequest, "\(path) is too large to merge line by line (\(v.size) bytes; at most \(maxBytes))")
        }
        var b: [UInt8] = []
        if let base { b = try await content(client, container: container, version: base.id, path: path) }
        let o = try await content(client, container: container, version: current.id, path: path)
        let t = try await content(client, container: container, version: theirs.id, path: path)
        do throws(ThreeWayMerge.Failure) {
            let r = try ThreeWayMerge.merge(base: b, ours: o, theirs: t,
                                            oursLabel: "current (\(label(current)))", theirsLabel: "conflict (\(label(theirs)))")
            return MergeDraft(path: path, item: item, current: current, conflict: theirs, base: base?.id, text: r.text, conflicts: r.conflicts)
        } catch {
            if error == .notText { throw EngineError(.invalidRequest, "\(path) is not text; pick a version, or keep both") }
            throw EngineError(.invalidRequest, "the versions of \(path) differ on too many lines to merge; pick a version, or keep both")
        }
    }

    /// "laptop 2026-11-26 21:04": who wrote a version and when, for markers.
    static func label(_ v: VersionRecord) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd HH:mm"
        let device = String(v.deviceName.map { $0.isNewline ? " " : $0 }.prefix(40))
        return "\(device) \(f.string(from: v.modified))"
    }

    /// A version's whole content, verified chunk by chunk.
    static func content(_ client: any SyncServer, container: ContainerID, version: VersionID, path: RelativePath) async throws -> [UInt8] {
        let m = try await client.manifest(container, version: version)
        guard m.size <= maxBytes else { throw EngineError(.invalidRequest, "\(path) is too large to merge line by line") }
        var out: [UInt8] = []
        out.reserveCapacity(m.size)
        for c in m.chunks {
            let bytes = try await client.downloadChunk(c.hash)
            guard client.naming.name(bytes) == c.hash else { throw EngineError(.hashMismatch, "a chunk of \(path) did not match its hash") }
            out += bytes
        }
        return out
    }

    /// Commits `text` as the document's next version against the draft's current version and
    /// keeps it; the conflict version (and the version it replaced) stay in history.
    static func keep(_ client: any SyncServer, container: ContainerID, draft: MergeDraft, text: String, modified: Date) async throws -> ItemRecord {
        let bytes = Array(text.utf8)
        let chunks = Chunker.standard.chunkRanges(of: bytes).map { (client.naming.name(Array(bytes[$0])), Array(bytes[$0])) }
        let manifest = Manifest(chunks: chunks.map { ChunkRef(hash: $0.0, size: $0.1.count) })
        let missing = Set(try await client.missingChunks(chunks.map(\.0)))
        if !missing.isEmpty { try await client.uploadChunks(named: chunks.filter { missing.contains($0.0) }) }
        let version = VersionID(uuid: UUID())
        let request = CommitRequest(itemID: draft.item, versionID: version, path: draft.path, kind: .file, base: draft.current.id,
                                    modified: modified, manifest: manifest, parent: nil, permissions: draft.current.permissions,
                                    baseGeneration: draft.current.generation)
        let r = try await client.commit(container, request)
        if !r.missing.isEmpty {
            let still = Set(r.missing)
            try await client.uploadChunks(named: chunks.filter { still.contains($0.0) })
            _ = try await client.complete(container, version: version)
        }
        switch r.outcome {
        case .updated, .unchanged:
            // Unchanged: the merge is one of the versions (the current, or the conflict): keep that.
            return try await client.resolve(container, item: draft.item, keep: r.outcome == .unchanged ? r.version?.id ?? draft.current.id : version)
        case .conflict:
            throw EngineError(.itemChanged, "\(draft.path) changed on the server while it was merged; the merge is kept as a conflict version — merge again")
        case .created, .revived:
            throw EngineError(.itemChanged, "\(draft.path) was deleted while it was merged; the merge brought it back — look at it before resolving")
        }
    }
}

extension MergeDraft {
    /// Writes the merged text to a new private file named after the document (its extension
    /// kept, so editors know the language), for a person to edit.
    public func writeDraftFile() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ubiq-merge-\(UUID().uuidString.prefix(12))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = dir.appendingPathComponent("MERGE-" + path.name)
        try Data(text.utf8).write(to: file, options: .withoutOverwriting)
        return file
    }

    /// What a person left in a draft file after the editor ended with `status`: the text to
    /// keep (the file is removed), or why nothing is kept (the file stays for them).
    public static func edited(_ file: URL, editorStatus status: Int32) -> Result<String, EngineError> {
        guard status == 0 else { return .failure(EngineError(.invalidRequest, "the editor ended with status \(status); nothing kept (the merge is in \(file.path))")) }
        guard let data = try? Data(contentsOf: file), let text = String(validating: [UInt8](data), as: UTF8.self) else {
            return .failure(EngineError(.invalidRequest, "\(file.path) is gone or no longer UTF-8 text; nothing kept"))
        }
        guard !ThreeWayMerge.hasMarkers(text) else {
            return .failure(EngineError(.invalidRequest, "conflict markers remain in \(file.path); nothing kept — edit them away and merge again, or pick a version"))
        }
        try? FileManager.default.removeItem(at: file.deletingLastPathComponent())
        return .success(text)
    }
}
