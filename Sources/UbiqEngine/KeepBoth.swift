import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// "Keep both" for a conflicted document (`ubiq resolve PATH --keep-both`, `b` in the front
/// end): the current version stays the document, and every conflict version becomes a
/// document of its own beside it, named `name (conflict from DEVICE DATE).ext` as Dropbox's
/// conflicted copies are. Done on the server alone: each copy is committed with the conflict
/// version's chunk list (the account holds those chunks, so nothing is uploaded), then the
/// conflicts are resolved in favour of the current version. Nothing is lost: the copies are
/// new documents, and the conflict versions stay in the item's history as well.
enum KeepBoth {
    /// The copy's name for a conflict version: `plan (conflict from phone 2026-11-18 13.06).txt`;
    /// a second attempt (the name is taken) adds ` 2`, and so on. Device names are cleaned of
    /// `/` and control characters; the whole name stays within the 255-byte limit.
    static func name(for path: RelativePath, device: String, modified: Date, attempt: Int = 1, timeZone: TimeZone = .current,
                     kind: String = "conflict") -> String {
        let name = path.name
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let (stem, ext) = dot.map { (String(name[..<$0]), String(name[$0...])) } ?? (name, "")
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = timeZone
        f.dateFormat = "yyyy-MM-dd HH.mm"
        let cleanDevice = String(device.map { $0 == "/" || $0.unicodeScalars.contains { $0.value < 32 || $0.value == 127 } ? "-" : $0 }.prefix(40))
        let tag = " (\(kind) from \(cleanDevice) \(f.string(from: modified))\(attempt > 1 ? " \(attempt)" : ""))"
        var keptStem = stem
        while (keptStem + tag + ext).utf8.count > 255, !keptStem.isEmpty { keptStem.removeLast() }
        return keptStem + tag + ext
    }

    /// Copies every conflict version of `item` (at `path`) beside it and keeps the current
    /// version; returns the copies' paths.
    static func perform(_ client: any SyncServer, container: ContainerID, item: ItemID, path: RelativePath, parent: ItemID?) async throws -> [RelativePath] {
        let list = try await client.versions(container, item: item)
        guard let current = list.current else { throw EngineError(.notFound, "\(path) has no current version") }
        guard !list.conflicts.isEmpty else { throw EngineError(.invalidRequest, "\(path) has no conflict to keep beside it") }
        // Resolving keeps the current version; if it has not finished uploading the server
        // refuses that, after the copies were made — and a retry would copy them again.
        guard current.uploaded else { throw EngineError(.incompleteContent, "the current version of \(path) has not finished uploading; try again when it has") }
        for v in list.conflicts where !v.uploaded {
            throw EngineError(.incompleteContent, "the conflict version from \(v.deviceName) has not finished uploading; try again when it has")
        }
        var made: [RelativePath] = []
        for v in list.conflicts {
            let manifest = try await client.manifest(container, version: v.id)
            made.append(try await copy(client, container: container, manifest: manifest, of: v, path: path, parent: parent))
        }
        _ = try await client.resolve(container, item: item, keep: current.id)
        return made
    }

    /// Commits one conflict version as a new document beside `path`, at the first free name.
    static func copy(_ client: any SyncServer, container: ContainerID, manifest: Manifest, of v: VersionRecord, path: RelativePath,
                     parent: ItemID?) async throws -> RelativePath {
        for attempt in 1...20 {
            let name = Self.name(for: path, device: v.deviceName, modified: v.modified, attempt: attempt)
            let target = try path.parent.map { try $0.appending(name) } ?? RelativePath(validating: name)
            let request = CommitRequest(itemID: ItemID(uuid: UUID()), versionID: VersionID(uuid: UUID()), path: target, kind: .file, base: nil,
                                        modified: v.modified, manifest: manifest, parent: parent, permissions: v.permissions)
            do {
                let r = try await client.commit(container, request)
                guard r.missing.isEmpty else { throw EngineError(.incompleteContent, "the server no longer holds the content of the version from \(v.deviceName)") }
                return target
            } catch let e as ClientError where e.code == .pathExists {
                continue
            }
        }
        throw EngineError(.pathExists, "no free name beside \(path) for the version from \(v.deviceName)")
    }
}

/// A file name for one version of a document opened outside the folder (`o` in Versions):
/// `plan (version from phone 2026-11-18 13.06).txt` — the extension kept, so the program that
/// opens it knows the type.
public func versionFileName(_ path: RelativePath, device: String, modified: Date) -> String {
    KeepBoth.name(for: path, device: device, modified: modified, kind: "version")
}
