import Foundation
import UbiqCore

// The records and messages written and read by hand (`FastJSONCodable`), each with the fields
// of its `Codable` form in sorted order, nil ones left out.

extension VersionRecord: FastJSONCodable {
    public func writeJSON(_ out: inout JSONOut) -> Bool {
        out.object { o in
            if let base { o.key("base"); o.string(base.description) }
            o.key("committed"); o.date(committed)
            o.key("device"); o.string(device.description)
            o.key("deviceName"); o.string(deviceName)
            o.key("hash"); o.hash(hash)
            o.key("id"); o.string(id.description)
            o.key("modified"); o.date(modified)
            if let permissions { o.key("permissions"); o.int(permissions) }
            if let sealed { o.key("sealed"); o.string(sealed) }
            o.key("size"); o.int(size)
            o.key("state"); o.string(state.rawValue)
            o.key("uploaded"); o.bool(uploaded)
            return true
        }
    }

    public static func readJSON(_ input: inout JSONIn) throws -> VersionRecord {
        var id: VersionID?, state: VersionState?, size: Int?, hash: ContentHash?, modified: Date?, committed: Date?
        var device: DeviceID?, deviceName: String?, uploaded: Bool?, permissions: Int?, base: VersionID?, sealed: String?
        try input.object { r, key in
            switch key {
            case "base": base = r.null() ? nil : try r.id(VersionID.self)
            case "committed": committed = try r.date()
            case "device": device = try r.id(DeviceID.self)
            case "deviceName": deviceName = try r.string()
            case "hash": hash = try r.hash()
            case "id": id = try r.id(VersionID.self)
            case "modified": modified = try r.date()
            case "permissions": permissions = r.null() ? nil : try r.int()
            case "sealed": sealed = r.null() ? nil : try r.string()
            case "size": size = try r.int()
            case "state": state = try r.raw(VersionState.self)
            case "uploaded": uploaded = try r.bool()
            default: try r.skip()
            }
        }
        guard let id, let state, let size, let hash, let modified, let committed, let device, let deviceName, let uploaded else { throw JSONIn.GiveUp() }
        return VersionRecord(id: id, state: state, size: size, hash: hash, modified: modified, committed: committed,
                             device: device, deviceName: deviceName, uploaded: uploaded, permissions: permissions, base: base, sealed: sealed)
    }
}

extension ItemRecord: FastJSONCodable {
    public func writeJSON(_ out: inout JSONOut) -> Bool {
        out.object { o in
            o.key("changeSeq"); o.int(changeSeq)
            o.key("conflictCount"); o.int(conflictCount)
            if let created { o.key("created"); o.date(created) }
            if let current { o.key("current"); guard current.writeJSON(&o) else { return false } }
            if let deletedAt { o.key("deletedAt"); o.date(deletedAt) }
            o.key("id"); o.string(id.description)
            o.key("kind"); o.string(kind.rawValue)
            o.key("path"); o.string(path.string)
            return true
        }
    }

    public static func readJSON(_ input: inout JSONIn) throws -> ItemRecord {
        var id: ItemID?, path: RelativePath?, kind: ItemKind?, current: VersionRecord?, conflictCount: Int?
        var deletedAt: Date?, changeSeq: Int64?, created: Date?
        try input.object { r, key in
            switch key {
            case "changeSeq": changeSeq = try r.int64()
            case "conflictCount": conflictCount = try r.int()
            case "created": created = r.null() ? nil : try r.date()
            case "current": current = r.null() ? nil : try VersionRecord.readJSON(&r)
            case "deletedAt": deletedAt = r.null() ? nil : try r.date()
            case "id": id = try r.id(ItemID.self)
            case "kind": kind = try r.raw(ItemKind.self)
            case "path": path = try r.path()
            default: try r.skip()
            }
        }
        guard let id, let path, let kind, let conflictCount, let changeSeq else { throw JSONIn.GiveUp() }
        return ItemRecord(id: id, path: path, kind: kind, current: current, conflictCount: conflictCount, deletedAt: deletedAt,
                          changeSeq: changeSeq, created: created)
    }
}

extension Manifest: FastJSONCodable {
    public func writeJSON(_ out: inout JSONOut) -> Bool {
        out.object { o in
            o.key("chunks"); o.string(Self.chunkList(chunks))
            o.key("hash"); o.hash(hash)
            o.key("size"); o.int(size)
            return true
        }
    }

    /// The one-string chunk list only (the earlier array form is Foundation's to read).
    public static func readJSON(_ input: inout JSONIn) throws -> Manifest {
        var chunks: [ChunkRef]?, size: Int?, hash: ContentHash?
        try input.object { r, key in
            switch key {
            case "chunks":
                guard let list = parseChunkList(try r.string()) else { throw JSONIn.GiveUp() }
                chunks = list
            case "hash": hash = try r.hash()
            case "size": size = try r.int()
            default: try r.skip()
            }
        }
        guard let chunks, let size, let hash else { throw JSONIn.GiveUp() }
        return Manifest(chunks: chunks, size: size, hash: hash)
    }
}

extension CommitRequest: FastJSONCodable {
    public func writeJSON(_ out: inout JSONOut) -> Bool {
        guard manifestDelta == nil else { return false }
        return out.object { o in
            if let base { o.key("base"); o.string(base.description) }
            o.key("itemID"); o.string(itemID.description)
            o.key("kind"); o.string(kind.rawValue)
            if let manifest { o.key("manifest"); guard manifest.writeJSON(&o) else { return false } }
            o.key("modified"); o.date(modified)
            if let parent { o.key("parent"); o.string(parent.description) }
            o.key("path"); o.string(path.string)
            if let permissions { o.key("permissions"); o.int(permissions) }
            if let sealed { o.key("sealed"); o.string(sealed) }
            o.key("versionID"); o.string(versionID.description)
            return true
        }
    }

    public static func readJSON(_ input: inout JSONIn) throws -> CommitRequest {
        var itemID: ItemID?, versionID: VersionID?, path: RelativePath?, kind: ItemKind?, base: VersionID?, modified: Date?, manifest: Manifest?
        var parent: ItemID?, permissions: Int?, sealed: String?
        try input.object { r, key in
            switch key {
            case "base": base = r.null() ? nil : try r.id(VersionID.self)
            case "itemID": itemID = try r.id(ItemID.self)
            case "kind": kind = try r.raw(ItemKind.self)
            case "manifest": manifest = r.null() ? nil : try Manifest.readJSON(&r)
            case "manifestDelta": guard r.null() else { throw JSONIn.GiveUp() }  // Foundation reads deltas
            case "modified": modified = try r.date()
            case "parent": parent = r.null() ? nil : try r.id(ItemID.self)
            case "path": path = try r.path()
            case "permissions": permissions = r.null() ? nil : try r.int()
            case "sealed": sealed = r.null() ? nil : try r.string()
            case "versionID": versionID = try r.id(VersionID.self)
            default: try r.skip()
            }
        }
        guard let itemID, let versionID, let path, let kind, let modified else { throw JSONIn.GiveUp() }
        return CommitRequest(itemID: itemID, versionID: versionID, path: path, kind: kind, base: base, modified: modified, manifest: manifest, parent: parent,
                             permissions: permissions, sealed: sealed)
    }
}

extension CommitResponse: FastJSONCodable {
    public func writeJSON(_ out: inout JSONOut) -> Bool {
        out.object { o in
            o.key("item"); guard item.writeJSON(&o) else { return false }
            o.key("missing"); o.string(HashList.string(missing))
            o.key("outcome"); o.string(outcome.rawValue)
            if let version { o.key("version"); guard version.writeJSON(&o) else { return false } }
            return true
        }
    }

    public static func readJSON(_ input: inout JSONIn) throws -> CommitResponse {
        var outcome: CommitOutcome?, item: ItemRecord?, version: VersionRecord?, missing: [ContentHash]?
        try input.object { r, key in
            switch key {
            case "item": item = try ItemRecord.readJSON(&r)
            case "missing":
                guard let list = HashList.parse(try r.string()) else { throw JSONIn.GiveUp() }  // the array form: Foundation
                missing = list
            case "outcome": outcome = try r.raw(CommitOutcome.self)
            case "version": version = r.null() ? nil : try VersionRecord.readJSON(&r)
            default: try r.skip()
            }
        }
        guard let outcome, let item, let missing else { throw JSONIn.GiveUp() }
        return CommitResponse(outcome: outcome, item: item, version: version, missing: missing)
    }
}

extension CommitBatchRequest: FastJSONCodable {
    public func writeJSON(_ out: inout JSONOut) -> Bool { out.object(with: "commits", commits) }
    public static func readJSON(_ input: inout JSONIn) throws -> CommitBatchRequest { CommitBatchRequest(commits: try input.list(in: "commits")) }
}

extension CommitBatchResponse: FastJSONCodable {
    public func writeJSON(_ out: inout JSONOut) -> Bool {
        out.object { o in
            o.key("results")
            return o.array(results) { w, result in
                w.object { o in
                    if let error = result.error {
                        o.key("error")
                        _ = o.object { e in
                            e.key("code"); e.string(error.code.rawValue)
                            if let item = error.item { e.key("item"); e.string(item.description) }  // keys sorted, as Foundation writes them
                            e.key("message"); e.string(error.message)
                            return true
                        }
                    }
                    if let response = result.response { o.key("response"); guard response.writeJSON(&o) else { return false } }
                    return true
                }
            }
        }
    }

    public static func readJSON(_ input: inout JSONIn) throws -> CommitBatchResponse {
        var results: [CommitBatchResult]?
        try input.object { r, key in
            guard key == "results" else { try r.skip(); return }
            results = try r.list { r in
                var response: CommitResponse?, error: APIErrorBody.Detail?
                try r.object { r, key in
                    switch key {
                    case "response": response = r.null() ? nil : try CommitResponse.readJSON(&r)
                    case "error":
                        if r.null() { error = nil; return }
                        var code: ErrorCode?, message: String?, item: ItemID?
                        try r.object { r, key in
                            switch key {
                            case "code": code = try r.raw(ErrorCode.self)
                            case "message": message = try r.string()
                            case "item": item = try r.id(ItemID.self)
                            default: try r.skip()
                            }
                        }
                        guard let code, let message else { throw JSONIn.GiveUp() }
                        error = APIErrorBody.Detail(code: code, message: message, item: item)
                    default: try r.skip()
                    }
                }
                return CommitBatchResult(response: response, error: error)
            }
        }
        guard let results else { throw JSONIn.GiveUp() }
        return CommitBatchResponse(results: results)
    }
}

extension ChangesResponse: FastJSONCodable {
    public func writeJSON(_ out: inout JSONOut) -> Bool {
        out.object { o in
            o.key("cursor"); o.int(cursor)
            o.key("hasMore"); o.bool(hasMore)
            o.key("items")
            return o.array(items) { $1.writeJSON(&$0) }
        }
    }

    public static func readJSON(_ input: inout JSONIn) throws -> ChangesResponse {
        var items: [ItemRecord]?, cursor: Int64?, hasMore: Bool?
        try input.object { r, key in
            switch key {
            case "cursor": cursor = try r.int64()
            case "hasMore": hasMore = try r.bool()
            case "items": items = try r.list { try ItemRecord.readJSON(&$0) }
            default: try r.skip()
            }
        }
        guard let items, let cursor, let hasMore else { throw JSONIn.GiveUp() }
        return ChangesResponse(items: items, cursor: cursor, hasMore: hasMore)
    }
}

extension ManifestsResponse: FastJSONCodable {
    public func writeJSON(_ out: inout JSONOut) -> Bool { out.object(with: "manifests", manifests) }
    public static func readJSON(_ input: inout JSONIn) throws -> ManifestsResponse { ManifestsResponse(manifests: try input.list(in: "manifests")) }
}

extension JSONOut {
    /// `{"name": [each element]}`.
    mutating func object<T: FastJSONCodable>(with name: StaticString, _ elements: [T]) -> Bool {
        object { o in
            o.key(name)
            return o.array(elements) { $1.writeJSON(&$0) }
        }
    }
}

extension JSONIn {
    /// The elements of the list under `name` in an object whose other fields are skipped.
    mutating func list<T: FastJSONCodable>(in name: String) throws -> [T] {
        var elements: [T]?
        try object { r, key in
            if key == name { elements = try r.list { try T.readJSON(&$0) } } else { try r.skip() }
        }
        guard let elements else { throw GiveUp() }
        return elements
    }
}
