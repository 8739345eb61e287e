import UbiqCore
import UbiqStorage

/// Bytes an account is writing that are not recorded as its own yet. A quota check counts them,
/// so uploads running in parallel cannot together write past the quota: twelve 900 KB uploads
/// against a 1 MB quota used to write 2.7 MB of packs (eleven then refused, their bytes never
/// reclaimed). One server process holds them; several processes over one database need the
/// reservation in the database (scale-out).
actor QuotaReservations {
    private var held: [Int64: Int64] = [:]
    /// Bytes given back so far, per account: a usage read begun before a release may not count
    /// the bytes that release stopped reserving (recorded meanwhile), so they are counted as
    /// still reserved (at worst twice, never not at all).
    private var released: [Int64: Int64] = [:]

    /// The bytes given back so far for `account` (read before the usage).
    func mark(account: Int64) -> Int64 { released[account, default: 0] }

    /// Reserves `bytes` for `account` if `used` plus what is reserved, plus what was given back
    /// since `mark`, plus `bytes` fits `quota`.
    func reserve(account: Int64, bytes: Int64, used: Int64, quota: Int64, since mark: Int64) -> Bool {
        let h = held[account, default: 0]
        let since = released[account, default: 0] &- mark
        guard used + h + since + bytes <= quota else { return false }
        held[account] = h + bytes
        return true
    }

    /// Gives a reservation back (the bytes are recorded, or were never written).
    func release(account: Int64, bytes: Int64) {
        let left = held[account, default: 0] - bytes
        held[account] = left > 0 ? left : nil
        released[account, default: 0] &+= bytes
    }
}

/// Writes that grow an account, admitted only when they fit its quota with what its other
/// writes in flight have reserved.
struct QuotaGuard: Sendable {
    let metadata: any MetadataStore
    let reservations: QuotaReservations

    /// Runs `write` (storing and recording `bytes` new bytes of `account`) under a reservation;
    /// `storage_full` without writing anything when they do not fit with what others are writing.
    func withReservedQuota(account: Int64, bytes: Int64, _ write: () async throws -> Void) async throws {
        // The usage is read after the mark: what is given back meanwhile still counts.
        let mark = await self.mark(account: account)
        let usage = try await metadata.usage(accountID: account)
        try await withReservedQuota(account: account, bytes: bytes, mark: mark, usage: usage, write)
    }

    /// The mark to take before reading an account's usage for `withReservedQuota(…mark:usage:…)`.
    func mark(account: Int64) async -> Int64 { await reservations.mark(account: account) }

    /// `withReservedQuota(account:bytes:_:)` with the usage read by the caller after `mark`
    /// (a chunk's upload reads it with the chunk's ownership, in one statement).
    func withReservedQuota(account: Int64, bytes: Int64, mark: Int64, usage: (quota: Int64, used: Int64), _ write: () async throws -> Void) async throws {
        guard await reservations.reserve(account: account, bytes: bytes, used: usage.used, quota: usage.quota, since: mark) else {
            throw APIFailure(.storageFull, "storage full: \(ByteSize.format(usage.used)) of \(ByteSize.format(usage.quota)) used")
        }
        do {
            try await write()
        } catch {
            await reservations.release(account: account, bytes: bytes)
            throw error
        }
        await reservations.release(account: account, bytes: bytes)
    }
}
