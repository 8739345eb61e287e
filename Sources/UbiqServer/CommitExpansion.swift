import UbiqCore
import UbiqProtocol
import UbiqStorage

/// What one commit request may make the server build before anything is stored (#45 row 1).
///
/// A manifest delta is a few bytes that name runs of a base version's chunk list: unchecked, a
/// 956-byte delta built 1.5 M references and a 3.8 KB batch of four peaked at 604 MB. So a
/// request's deltas are counted from their pieces before any base is loaded or anything built:
/// the whole request against `perRequest`, each commit against the smaller of the manifest
/// limit and the account's remaining reference budget. Bases are loaded once per request and
/// what they hold is counted too.
struct CommitExpansion {
    /// Chunk references one request may expand to (and, apart, load as bases).
    static let perRequest = WireLimits.maxManifestChunks

    /// More references than the account may still hold: `storage_full`, not a malformed request.
    let room: Int64
    private(set) var baseReferences = 0
    private var bases: [VersionID: Manifest] = [:]

    init(room: Int64) { self.room = room }

    /// Refuses, from the bodies alone, a request whose manifests and deltas together expand to
    /// more than `perRequest` references (a delta that cannot even be counted fails on its own).
    static func checkRequest(_ commits: [CommitRequest]) throws {
        var total = 0
        for c in commits {
            let n = c.manifest?.chunks.count ?? c.manifestDelta?.expandedCount ?? 0
            total = total.addingReportingOverflow(n).overflow ? Int.max : total + n
            guard total <= perRequest else {
                throw APIFailure(.invalidRequest, "the commits of this request expand to more than \(perRequest) chunk references; send fewer at once")
            }
        }
    }

    /// The manifest a delta describes, built only once it is known to fit and to be right.
    mutating func expand(_ delta: ManifestDelta, loadBase: (VersionID) async throws -> Manifest) async throws -> Manifest {
        do { try delta.checkExpansion(limit: WireLimits.maxManifestChunks) } catch let e as CoreError { throw APIFailure(e.code, e.message) }
        let n = delta.expandedCount ?? 0
        if Int64(n) > room {
            throw APIFailure(.storageFull, "storage full: this version lists \(n) chunk references and the account may hold \(room) more "
                                + "(one per KiB of quota); empty the trash or raise the quota")
        }
        let base: Manifest
        if let known = bases[delta.base] {
            base = known
        } else {
            guard baseReferences < Self.perRequest else {
                throw APIFailure(.invalidRequest, "the bases of this request's deltas hold more than \(Self.perRequest) chunk references; send fewer at once")
            }
            base = try await loadBase(delta.base)
            baseReferences += base.chunks.count
            bases[delta.base] = base
        }
        do { return try delta.apply(baseChunks: base.chunks) } catch let e as CoreError { throw APIFailure(e.code, e.message) }
    }
}
