import Foundation
import UbiqClient
import UbiqCore
import UbiqProtocol

/// What the server answered to one of the plan's steps that move no content. The engine
/// applies it to its trees (``SyncEngine/apply(_:)-RemoteOutcome``); nothing here touches them.
enum RemoteOutcome: Sendable, Equatable {
    /// Folders of this device made on the server: each local ID with the server's answer (an
    /// item, or why it was refused) and the stamp the folder had when it was sent.
    case foldersMade([MadeFolder])
    /// The item moved on the server from where this device last synced it (`from`) to `to`
    /// (`item` is its new record).
    case moved(ItemID, from: RelativePath, to: RelativePath, item: ItemRecord)
    /// Another device took the name first: the item gets a visible rename here.
    case moveNameTaken(ItemID, to: RelativePath)
    /// The server's folders changed under a move or a delete (`item_changed`): pull, then plan again.
    case moveWaits(ItemID, why: String)
    case deleteWaits(ItemID, why: String)
    /// Deleted on the server (`folder`: its path when it was a folder, whose contents went with it).
    case deleted(ItemID, item: ItemRecord, folder: RelativePath?)
    /// Already gone from the server.
    case alreadyGone(ItemID)

    struct MadeFolder: Sendable, Equatable {
        var local: ItemID
        var stamp: FileStamp
        var item: ItemRecord?
        var refusal: APIErrorBody.Detail?
    }
}

/// The plan's steps on the server that move no content: make folders (one request for a
/// depth's worth), move and delete items. Each sends the request it is given and says what
/// the answer means (``RemoteOutcome``); a refusal that means "another device got there
/// first" becomes an outcome the engine handles (a visible rename, or a pull before the next
/// round), never a dropped change. It holds no state of the engine's: the engine builds the
/// requests from its trees and applies the outcomes to them.
struct RemoteSteps: Sendable {
    let server: any SyncServer
    let container: ContainerID

    /// Makes folders in one commit request (they must not contain one another).
    func makeFolders(_ folders: [(local: ItemID, stamp: FileStamp, request: CommitRequest)]) async throws -> RemoteOutcome {
        let results = try await server.commitMany(container, folders.map(\.request))
        guard results.count == folders.count else { throw EngineError(.internalError, "the server answered \(results.count) of \(folders.count) folders") }
        return .foldersMade(zip(folders, results).map { f, r in
            RemoteOutcome.MadeFolder(local: f.local, stamp: f.stamp, item: r.response?.item, refusal: r.response == nil ? (r.error ?? APIErrorBody.Detail(code: .internalError, message: "refused")) : nil)
        })
    }

    /// Makes one folder (`CommitRequest` of kind folder).
    func makeFolder(_ local: ItemID, stamp: FileStamp, _ request: CommitRequest) async throws -> RemoteOutcome {
        let resp = try await server.commit(container, request)
        return .foldersMade([.init(local: local, stamp: stamp, item: resp.item, refusal: nil)])
    }

    /// Moves an item last synced at `from` into the folder with ID `parent` (nil: to the top) at `to`.
    func move(_ id: ItemID, from: RelativePath, to: RelativePath, into parent: ItemID?) async throws -> RemoteOutcome {
        do {
            let item: ItemRecord
            if let parent { item = try await server.move(container, item: id, to: to, into: parent) } else { item = try await server.move(container, item: id, to: to) }
            return .moved(id, from: from, to: to, item: item)
        } catch let refused as ClientError where refused.code == .pathExists {
            return .moveNameTaken(id, to: to)
        } catch let refused as ClientError where refused.code == .itemChanged {
            return .moveWaits(id, why: refused.message)
        }
    }

    /// Deletes an item only if nothing in it changed on the server after `since` (the cursor
    /// the plan saw): otherwise the change is pulled and the item planned again.
    func delete(_ id: ItemID, unchangedSince since: Int64, folder: RelativePath?) async throws -> RemoteOutcome {
        do {
            return .deleted(id, item: try await server.delete(container, item: id, unchangedSince: since), folder: folder)
        } catch let refused as ClientError where refused.code == .notFound {
            return .alreadyGone(id)
        } catch let refused as ClientError where refused.code == .itemChanged {
            return .deleteWaits(id, why: refused.message)
        }
    }
}
