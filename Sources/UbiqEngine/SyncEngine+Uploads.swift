import CFileSupport
import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Uploads one file at a time (a big file: metadata first, then the chunks the server lacks,
/// then completion) and the one place their answers reach the trees (`apply(uploads:)`,
/// batches too). The wire work is ``UploadPipeline``'s.
extension SyncEngine {
    /// A big file, metadata first: commit the version (the server lists it at once, and other
    /// devices may stream it), then send only the chunks the server lacks, then mark the
    /// content complete.
    func uploadFile(_ id: ItemID, base: VersionID?) async throws -> Bool {
        guard let l = local[id], l.entry.kind == .file else { return false }
        try files.checkParents(l.path)
        let path = files.path(l.path)
        var manifest = contents.manifest(for: l.entry.stamp)
        if manifest == nil {
            guard let (m, st) = try LocalFiles.manifest(path: path), st == l.entry.stamp else { return false }
            contents.note(m, for: st)
            manifest = m
        }
        let m = manifest!
        let file = UploadPipeline.File(id: id, base: base, path: l.path, stamp: l.entry.stamp, file: path, manifest: m)
        transfer.running[id] = Transfer(direction: .up, bytesDone: 0, bytesTotal: Int64(m.size))
        var shownAs = id  // the ID the transfer is listed under (the server's, once it merged the item)
        defer { transfer.end(shownAs) }
        // After a small edit, describe the content against the synced version's manifest.
        var delta: ManifestDelta?
        if let bv = synced[id]?.node.version, let baseChunks = try? store.indexedChunks(item: id), !baseChunks.isEmpty {
            let d = ManifestDelta.make(base: bv, baseChunks: baseChunks, new: m)
            if d.pieces.count * 2 < m.chunks.count { delta = d }
        }
        let versionID = VersionID(uuid: newUUID())
        let parent = commitParent(id, l.path)
        let permissions = LocalFiles.permissions(path)
        claim([id])
        noteSending([(id, versionID, m.hash)])
        // Noted before it goes out: if this engine stops before the content is up and the file
        // is gone by the next pass, the item is deleted rather than left unfinished for ever.
        noteAbandoned(versionID)
        let resp: CommitResponse
        do {
            resp = try await transfer.uploads.commit({ useDelta in
                CommitRequest(itemID: id, versionID: versionID, path: l.path, kind: .file, base: base,
                              modified: SyncEngine.date(nanos: l.entry.stamp.mtimeNanos), manifest: useDelta ? nil : m, manifestDelta: useDelta ? delta : nil,
                              parent: parent, permissions: permissions)
            }, delta: delta != nil)
        } catch let refused as ClientError where refused.code == .pathExists && revivesAside(id, path: l.path) {
            logger.info("\(l.path): \(refused.message)")
            return true
        }
        let sid = resp.item.id
        adopt(id, as: sid)
        if sid != id { transfer.running[sid] = transfer.running[id]; transfer.running[id] = nil; shownAs = sid }
        noteRemote(resp.item)
        let item = try await finishUpload(resp, sentAs: id, manifest: m, path: path)
        try apply(uploads: [UploadPipeline.Answered(file: file, response: resp, item: item)])
        noteAnswered([id, sid])
        return true
    }

    /// Records what the server answered to uploads (single files and batches alike): the
    /// Remote tree, the merge base, the chunk index for the next edit's delta, the item's
    /// outcome — one transaction.
    func apply(uploads answered: [UploadPipeline.Answered]) throws {
        var remoteRows: [(ItemID, RemoteEntry?)] = [], syncedRows: [(ItemID, SyncedEntry?)] = [], index: [(ItemID, Manifest)] = []
        for a in answered {
            let sid = a.response.item.id
            let re = ItemTrees.remoteEntry(a.item)
            remote[a.item.id] = re
            remoteRows.append((a.item.id, re))
            let (entry, indexed) = uploadedEntry(a.response, item: a.item, stamp: a.file.stamp, manifest: a.file.manifest)
            if indexed { index.append((sid, a.file.manifest)) }
            synced[sid] = entry
            syncedRows.append((sid, entry))
            succeeded(a.file.id)
        }
        try store.recordBatch(remote: remoteRows, synced: syncedRows, index: index)
    }
    /// An edit of an item deleted on the server wins and brings it back; when another item has
    /// taken its name since (another device made a new file there), the server refuses the
    /// path: the edited file is renamed beside it here (`name (2)`), and the next round sends it
    /// under that name. It retried the refused name for ever before. True if renamed.
    func revivesAside(_ id: ItemID, path: RelativePath) -> Bool {
        guard remote[id] == nil, synced[id] != nil else { return false }
        schedule(.pullFirst)
        do { return try apply(steps.renameAside(id, from: path)) } catch {
            logger.warning("\(error)")
            return false
        }
    }

    /// Finishes a committed version the server still lacks content for (a chunk went missing, or
    /// the commit came before the content): sends what it lacks and completes it. Returns the
    /// item as it then stands.
    func finishUpload(_ resp: CommitResponse, sentAs id: ItemID, manifest m: Manifest, path: String) async throws -> ItemRecord {
        guard let v = resp.version, !v.uploaded || !resp.missing.isEmpty else { return resp.item }
        // The version the content is now at on the server (an earlier commit of the same
        // content, g. one whose answer was lost, is answered as `unchanged`): if completing it
        // goes unanswered, that is the version the change feed will show as ours.
        sent.answered([id])
        noteSending([(resp.item.id, v.id, m.hash)])
        do {
            let shown = resp.item.id
            return try await transfer.uploads.complete(v.id, manifest: m, from: path, missing: resp.missing) { await self.addProgress(shown, $0) }
        } catch {
            // Unfinished, and maybe never finished from here: if the file is gone when the next
            // pass looks, the user deleted it and the item is deleted, not waited for.
            noteAbandoned(v.id)
            throw error
        }
    }

    /// The merge base an upload's answer gives (one rule for single files and batches): the
    /// server's current version, or, when the server kept the content as a conflict version,
    /// the old base with the conflict's content noted. `indexed`: the manifest is the item's
    /// current content (its chunks are indexed for the next edit's delta).
    func uploadedEntry(_ resp: CommitResponse, item: ItemRecord, stamp: FileStamp, manifest m: Manifest) -> (entry: SyncedEntry, indexed: Bool) {
        let sid = resp.item.id
        if resp.outcome == .conflict || (resp.outcome == .unchanged && resp.version?.state == .conflict) {
            var node = synced[sid]?.node ?? SyncedNode(path: item.path, kind: .file, version: nil, hash: nil)
            node.conflictHash = m.hash
            return (SyncedEntry(node: node, stamp: stamp, stampHash: m.hash), false)
        }
        let path = synced[sid]?.node.path ?? item.path
        return (SyncedEntry(node: SyncedNode(path: path, kind: .file, version: item.current?.id, hash: item.current?.hash ?? m.hash),
                            stamp: stamp, stampHash: m.hash), true)
    }
}
