import Foundation

/// What a garbage collection did (or, for a dry run, would do): `ubiq server gc --json` and the
/// answer of `POST /v1/admin/gc`.
public struct GarbageReport: Codable, Sendable, Equatable {
    public var dryRun: Bool
    /// Chunks uploaded but never committed within the grace period, released from their accounts.
    public var releasedUploads = 0
    public var releasedBytes: Int64 = 0
    /// Chunks looked at, and those no account holds and no version lists.
    public var scannedChunks = 0
    public var garbageChunks = 0
    public var garbageBytes: Int64 = 0
    /// Packs (or objects) deleted and rewritten, and the bytes that gave back.
    public var packsDeleted = 0
    public var packsRewritten = 0
    public var bytesFreed: Int64 = 0
    /// The chunk store's size before and after.
    public var storeBytesBefore: Int64 = 0
    public var storeBytesAfter: Int64 = 0
    public var seconds: Double = 0

    public init(dryRun: Bool) { self.dryRun = dryRun }
}

/// `POST /v1/admin/gc`'s body.
public struct GarbageRequest: Codable, Sendable {
    public var dryRun: Bool
    public init(dryRun: Bool) { self.dryRun = dryRun }
}
