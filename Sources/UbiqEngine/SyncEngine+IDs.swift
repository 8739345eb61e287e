import Foundation
import UbiqCore

extension SyncEngine {
    /// A new UUID for an item or version this device makes: time-ordered (see
    /// `TimeOrderedUUIDs`), so the indexes keyed by them grow at their end.
    func newUUID() -> UUID {
        let ms = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        return uuids.next(milliseconds: ms, random: UInt64.random(in: .min ... .max))
    }
}
