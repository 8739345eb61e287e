import Foundation
import Logging
import UbiqCore
import UbiqStorage

/// Chunks at rest (#39 §1): after a key rotation, or on the first start of a store from before
/// sealing, the chunks not sealed with the current key are sealed again in the background.
extension ServerServices {
    /// Seals every chunk not yet sealed with the current key (``SealedChunkStore/reseal()``)
    /// when the database says some may be, one pass at a time with garbage collection (and, in a
    /// fleet, with the other servers' passes); then the database forgets the older keys. Returns
    /// how many records were sealed again; nil when none was due, or another server of the fleet
    /// is at it (it is due again at the next start).
    public func resealIfDue() async throws -> Int? {
        guard let sealed = chunks as? SealedChunkStore, let database else { return nil }
        guard try await ServerKeyCheck.resealDue(sealed.ring, in: database) else { return nil }
        let guardOfFleet = sharedGuard
        let done: Int? = try await collectionTurn.exclusive {
            guard let guardOfFleet else { return try await sealed.reseal() }
            return try await guardOfFleet.aloneInFleet { try await sealed.reseal() }
        }
        guard let done else { return nil }
        try await ServerKeyCheck.forgetOthers(than: sealed.ring, in: database)
        return done
    }

    /// A store that holds no chunk has none from before sealing: no pass is due for them (a new
    /// server's first start would otherwise say one is).
    func forgetPlaintextIfEmpty() async throws {
        guard let sealed = chunks as? SealedChunkStore, let database else { return }
        guard try await ServerKeyCheck.recorded(in: database).contains(ServerKeyCheck.plaintext) else { return }
        struct Found: Error {}
        do { try await sealed.inner.storedChunks(pageSize: 1) { page in if !page.isEmpty { throw Found() } } } catch is Found { return }
        try await ServerKeyCheck.forget([ServerKeyCheck.plaintext], in: database)
    }

    /// ``resealIfDue()`` in the background, said in the log.
    public func resealInBackground(_ logger: Logger) -> Task<Void, Never> {
        Task {
            do {
                let started = ContinuousClock.now
                if let n = try await resealIfDue(), n > 0 {
                    logger.notice("sealed \(Counted.of(n, "chunk")) again with the current server key in \(ContinuousClock.now - started)")
                }
            } catch {
                logger.warning("sealing chunks again with the current server key stopped: \(error) (it goes on at the next start)")
            }
        }
    }

    /// What `ubiq server key` shows: the key file, its keys (the current one first) and whether
    /// chunks may still be sealed with another key or none.
    public func keyState() async throws -> (file: String, ids: [String], resealDue: Bool) {
        guard let sealed = chunks as? SealedChunkStore, let database, let keyFile else { throw APIFailure(.invalidRequest, "this server's chunks are not sealed") }
        return (keyFile, sealed.ring.ids.map(ServerKeyRing.text), try await ServerKeyCheck.resealDue(sealed.ring, in: database))
    }

    /// `ubiq server key rotate`: a new key in front of the key file's (the older ones kept to
    /// open what they sealed), recorded in the database. The server seals with it from its next
    /// start, and seals what the older keys sealed again in the background. Returns the new ID.
    public func rotateKey() async throws -> String {
        guard let database, let keyFile else { throw APIFailure(.invalidRequest, "this server's chunks are not sealed") }
        do {
            let rotated = try ServerKeyRing.load(keyFile).rotated()
            try rotated.write(to: keyFile)
            _ = try await ServerKeyCheck.open(keyFile, database: database)
            return ServerKeyRing.text(rotated.currentID)
        } catch let e as StorageError { throw APIFailure(e.code, e.message) }
    }

    /// These services over another chunk store (the benchmark's unsealed side-by-side figure).
    public func replacingChunks(_ store: any ChunkStore) -> ServerServices {
        var copy = ServerServices(metadata: metadata, keyValues: keyValues, admin: admin, liveness: liveness, chunks: store, push: push, clock: clock)
        copy.database = database
        copy.sharedGuard = sharedGuard
        copy.relay = relay
        copy.failureLog = failureLog
        copy.passwordRounds = passwordRounds
        return copy
    }
}
