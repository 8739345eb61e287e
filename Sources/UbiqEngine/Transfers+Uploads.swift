import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// Uploads: one big file at a time (metadata first, then the chunks the server lacks, then
/// completion), small files in batches. The wire work is ``UploadPipeline``'s; the answers
/// reach the trees through the host's `apply(uploads:)`.
extension Transfers {
    /// A big file, metadata first: commit the version (the server lists it at once, and other
    /// devices may stream it), then send only the chunks the server lacks, then mark the
    /// content complete.
    nonisolated(nonsending) func uploadFile(_ id: ItemID, base: VersionID?) async throws -> Bool {
        guard let l = local[id], l.entry.kind == .file else { return false }
        try files.checkParents(l.path)
        let path = files.path(l.path)
        guard let m = try manifest(of: l.path, stamp: l.entry.stamp) else { return false }
        let file = UploadPipeline.File(id: id, base: base, path: l.path, stamp: l.entry.stamp, file: path, manifest: m)
        running[id] = Transfer(direction: .up, bytesDone: 0, bytesTotal: Int64(m.size))
        var shownAs = id  // the ID the transfer is listed under (the server's, once it merged the item)
        defer { end(shownAs) }
        // After a small edit, describe the content against the synced version's manifest.
        var delta: ManifestDelta?
        if let bv = synced[id]?.node.version, let baseChunks = try? store.indexedChunks(item: id), !baseChunks.isEmpty {
            let d = ManifestDelta.make(base: bv, baseChunks: baseChunks, new: m)
            if d.pieces.count * 2 < m.chunks.count { delta = d }
        }
        let versionID = VersionID(uuid: await host.newUUIDs(1)[0])
        let parent = trees.commitParent(id, l.path)
        let permissions = LocalFiles.permissions(path)
        await host.claim([id])
        await host.noteSending([(id, versionID, m.hash)])
        // Noted before it goes out: if this engine stops before the content is up and the file
        // is gone by the next pass, the item is deleted rather than left unfinished for ever.
        await host.noteAbandoned(versionID)
        let baseGeneration = generation(of: id, base: base)
        let resp: CommitResponse
        do {
            resp = try await uploads.commit({ useDelta in
                CommitRequest(itemID: id, versionID: versionID, path: l.path, kind: .file, base: base,
                              modified: SyncEngine.date(nanos: l.entry.stamp.mtimeNanos), manifest: useDelta ? nil : m, manifestDelta: useDelta ? delta : nil,
                              parent: parent, permissions: permissions, baseGeneration: baseGeneration)
            }, delta: delta != nil)
        } catch let refused as ClientError where refused.code == .pathExists {
            guard await host.revivesAside(id, path: l.path) else { throw refused }
            logger.info("\(l.path): \(refused.message)")
            return true
        }
        let sid = resp.item.id
        await host.adopt(id, as: sid)
        if sid != id { running[sid] = running[id]; running[id] = nil; shownAs = sid }
        await host.noteRemote(resp.item)
        let item = try await finishUpload(resp, sentAs: id, manifest: m, path: path)
        try await host.apply(uploads: [UploadPipeline.Answered(file: file, response: resp, item: item)])
        await host.noteAnswered([id, sid])
        return true
    }

    /// The generation of `base` as the Remote tree has it for `id` (nil: not known here — the
    /// sealing layer then reads it from the server).
    func generation(of id: ItemID, base: VersionID?) -> UInt32? {
        guard let base, let r = remote[id], r.node.version == base else { return nil }
        return r.generation
    }

    /// Chunks the server lacks go up in framed requests, then every file is committed in one
    /// request (its content complete at once), then the outcome is recorded in one transaction.
    nonisolated(nonsending) func uploadBatch(_ ops: [SyncOp]) async throws -> Int {
        var prepared: [UploadPipeline.File] = []
        for op in ops {
            guard case .upload(let id, let base) = op, let l = local[id], l.entry.kind == .file else { continue }
            guard files.parentsAreFolders(l.path) else {
                await host.failed(id, code: ErrorCode.invalidPath.rawValue, message: Self.linkOnTheWay(l.path))
                continue
            }
            guard let m = try manifest(of: l.path, stamp: l.entry.stamp) else { continue }  // changed since the scan: re-planned next pass
            prepared.append(UploadPipeline.File(id: id, base: base, path: l.path, stamp: l.entry.stamp, file: files.path(l.path), manifest: m,
                                                kept: contents.takeKept(for: l.entry.stamp)))
        }
        guard !prepared.isEmpty else { return 0 }
        for p in prepared { running[p.id] = Transfer(direction: .up, bytesDone: 0, bytesTotal: Int64(p.manifest.size)) }
        defer { for p in prepared { end(p.id) } }

        let t0 = ContinuousClock.now
        // 1. Chunks the server lacks (the bytes the scan read to hash a file when it kept them).
        try await uploads.sendContent(of: prepared)
        for i in prepared.indices { prepared[i].kept = nil }

        let t1 = ContinuousClock.now
        // 2. One commit request for the whole batch.
        let parents = trees.localFolders(at: Set(prepared.compactMap { remote[$0.id] == nil ? $0.path.parent : nil }))
        await host.claim(prepared.map(\.id))
        let ids = await host.newUUIDs(prepared.count)
        let requests = zip(prepared, ids).map { p, uuid in
            CommitRequest(itemID: p.id, versionID: VersionID(uuid: uuid), path: p.path, kind: .file, base: p.base,
                          modified: SyncEngine.date(nanos: p.stamp.mtimeNanos), manifest: p.manifest,
                          parent: remote[p.id] == nil ? p.path.parent.flatMap { parents[$0] } : nil, permissions: LocalFiles.permissions(p.file),
                          baseGeneration: generation(of: p.id, base: p.base))
        }
        await host.noteSending(zip(prepared, requests).map { ($0.id, $1.versionID, $0.manifest.hash) })
        let results = try await uploads.commit(requests)

        let t2 = ContinuousClock.now
        // 3. Every outcome, recorded in one transaction.
        var answered: [UploadPipeline.Answered] = []
        var answeredAs: [ItemID] = []  // items the server merged under another ID
        for (p, result) in zip(prepared, results) {
            guard let resp = result.response else {
                if result.error?.code == .pathExists, await host.revivesAside(p.id, path: p.path) { continue }
                await host.failed(p.id, code: result.error?.code.rawValue ?? "error", message: result.error?.message ?? "refused")
                continue
            }
            let sid = resp.item.id
            await host.adopt(p.id, as: sid)
            if sid != p.id { answeredAs.append(sid) }
            // A chunk went missing meanwhile (another device's upload raced ours): sent the usual way.
            let item = try await finishUpload(resp, sentAs: p.id, manifest: p.manifest, path: p.file)
            answered.append(UploadPipeline.Answered(file: p, response: resp, item: item))
        }
        try await host.apply(uploads: answered)
        await host.noteAnswered(prepared.map(\.id) + answeredAs)
        logger.debug("upload batch: chunks \(t1 - t0), commits \(t2 - t1), recorded \(ContinuousClock.now - t2)")
        return answered.count
    }

    /// Finishes a committed version the server still lacks content for (a chunk went missing, or
    /// the commit came before the content): sends what it lacks and completes it. Returns the
    /// item as it then stands.
    nonisolated(nonsending) func finishUpload(_ resp: CommitResponse, sentAs id: ItemID, manifest m: Manifest, path: String) async throws -> ItemRecord {
        guard let v = resp.version, !v.uploaded || !resp.missing.isEmpty else { return resp.item }
        // The version the content is now at on the server (an earlier commit of the same
        // content, g. one whose answer was lost, is answered as `unchanged`): if completing it
        // goes unanswered, that is the version the change feed will show as ours.
        await host.noteAnswered([id])
        await host.noteSending([(resp.item.id, v.id, m.hash)])
        do {
            let shown = resp.item.id
            let host = self.host
            return try await uploads.complete(v.id, manifest: m, from: path, missing: resp.missing) { await host.transferProgress(shown, $0, add: true) }
        } catch {
            // Unfinished, and maybe never finished from here: if the file is gone when the next
            // pass looks, the user deleted it and the item is deleted, not waited for.
            await host.noteAbandoned(v.id)
            throw error
        }
    }

    /// The manifest of the file at `path` if it still has `stamp` (the scan's, else made now); nil if it changed.
    func manifest(of path: RelativePath, stamp: FileStamp) throws -> Manifest? {
        if let m = contents.manifest(for: stamp) { return m }
        guard let (m, st) = try LocalFiles.manifest(path: files.path(path), chunker: files.chunker), st == stamp else { return nil }
        contents.note(m, for: st)
        return m
    }

    /// Why a file under a symbolic link is not transferred.
    static func linkOnTheWay(_ path: RelativePath) -> String {
        "a folder on the way to '\(path)' is a symbolic link (or not a folder) here; it is not followed"
    }
}
