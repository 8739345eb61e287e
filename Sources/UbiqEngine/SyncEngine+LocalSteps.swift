import Foundation
import UbiqCore

/// What the engine's changes to the folder (``LocalSteps``) came to, recorded in the trees:
/// the one place these steps change them. Applied at once, on the engine's queue, after the
/// step that returned it (the steps never suspend).
extension SyncEngine {
    /// Records a local step's outcome. True: something changed.
    @discardableResult
    func apply(_ outcome: LocalOutcome) throws -> Bool {
        switch outcome {
        case .unchanged:
            return false
        case .folderMade(let id, let path, let stamp):
            local[id] = (path, LocalEntry(kind: .folder, stamp: stamp))
            try setSynced(id, SyncedEntry(node: SyncedNode(path: path, kind: .folder, version: nil, hash: nil), stamp: stamp, stampHash: nil))
        case .moved(let id, let from, let to, let entry):
            local[id] = (to, entry)
            try trees.rebaseSynced(id, from: from, to: to)
        case .removed(let id):
            local[id] = nil
            try setSynced(id, nil)
        case .renamedAside(let id, let to, let entry):
            local[id] = (to, entry)
        case .agreed(let id, let entry, let movedFrom):
            if let old = movedFrom { try trees.rebaseSynced(id, from: old, to: entry.node.path) }
            try setSynced(id, entry)
        case .evicted(let id):
            local[id] = nil
            localHashes[id] = nil
        }
        return true
    }
}
