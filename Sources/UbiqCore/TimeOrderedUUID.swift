import Foundation

/// UUIDs of version 7 (RFC 9562 §5.7, with the counter of §6.2 method 1): 48 bits of Unix
/// milliseconds, a 12-bit counter that keeps IDs made within one millisecond in order, then 62
/// random bits.
///
/// IDs made one after another sort — as bytes and as their text — in the order they were made,
/// so the SQLite indexes keyed by item and version IDs (the server's and every engine's) take a
/// batch's new rows at their end: a commit of 500 new files writes a few index pages instead of
/// nearly every page of each index.
public struct TimeOrderedUUIDs: Sendable, Equatable {
    /// The millisecond and counter of the last ID made.
    public private(set) var milliseconds: UInt64 = 0
    public private(set) var counter: UInt16 = 0

    public init() {}

    /// The next ID at `milliseconds` since 1970, with `random` filling the low 62 bits. Never
    /// at or before the last one, even when the clock goes back: the last millisecond is kept
    /// and its counter advanced (the millisecond too when all 4,096 values are used).
    public mutating func next(milliseconds now: UInt64, random: UInt64) -> UUID {
        let now = now & 0xFFFF_FFFF_FFFF
        if now > milliseconds {
            milliseconds = now
            counter = 0
        } else if counter < 0xFFF {
            counter += 1
        } else {
            milliseconds = (milliseconds + 1) & 0xFFFF_FFFF_FFFF
            counter = 0
        }
        let ms = milliseconds, c = counter
        let r = random
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: ms >> 40), UInt8(truncatingIfNeeded: ms >> 32),
            UInt8(truncatingIfNeeded: ms >> 24), UInt8(truncatingIfNeeded: ms >> 16),
            UInt8(truncatingIfNeeded: ms >> 8), UInt8(truncatingIfNeeded: ms),
            0x70 | UInt8(truncatingIfNeeded: c >> 8), UInt8(truncatingIfNeeded: c),
            0x80 | (UInt8(truncatingIfNeeded: r >> 56) & 0x3F), UInt8(truncatingIfNeeded: r >> 48),
            UInt8(truncatingIfNeeded: r >> 40), UInt8(truncatingIfNeeded: r >> 32),
            UInt8(truncatingIfNeeded: r >> 24), UInt8(truncatingIfNeeded: r >> 16),
            UInt8(truncatingIfNeeded: r >> 8), UInt8(truncatingIfNeeded: r)))
    }
}
