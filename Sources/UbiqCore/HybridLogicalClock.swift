/// A hybrid logical clock timestamp: wall-clock milliseconds plus a logical counter.
/// Ordered by wall time, then counter.
public struct HLCTimestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var wallMillis: Int64
    public var counter: UInt32

    public init(wallMillis: Int64, counter: UInt32) {
        self.wallMillis = wallMillis
        self.counter = counter
    }

    public static let zero = HLCTimestamp(wallMillis: 0, counter: 0)

    public static func < (a: Self, b: Self) -> Bool {
        (a.wallMillis, a.counter) < (b.wallMillis, b.counter)
    }
    public var description: String { "\(wallMillis).\(counter)" }
}

/// A hybrid logical clock (Kulkarni et al.): timestamps never go backwards, and after a device
/// has seen a timestamp every timestamp it issues is greater, whatever its wall clock says.
/// Pure: the physical time comes in as a parameter.
public struct HybridLogicalClock: Sendable {
    /// The largest timestamp issued or received so far.
    public private(set) var last: HLCTimestamp

    public init(last: HLCTimestamp = .zero) { self.last = last }

    /// A new timestamp for a local event at physical time `physicalMillis`.
    public mutating func now(physicalMillis: Int64) -> HLCTimestamp {
        if physicalMillis > last.wallMillis {
            last = HLCTimestamp(wallMillis: physicalMillis, counter: 0)
        } else {
            last = Self.bump(last)
        }
        return last
    }

    /// Merges a timestamp seen from elsewhere; afterwards `last` is greater than `remote` (or
    /// equal, when `remote` is the largest timestamp there is).
    @discardableResult
    public mutating func receive(_ remote: HLCTimestamp, physicalMillis: Int64) -> HLCTimestamp {
        let wall = max(physicalMillis, last.wallMillis, remote.wallMillis)
        if wall == last.wallMillis && wall == remote.wallMillis {
            last = Self.bump(HLCTimestamp(wallMillis: wall, counter: max(last.counter, remote.counter)))
        } else if wall == last.wallMillis {
            last = Self.bump(last)
        } else if wall == remote.wallMillis {
            last = Self.bump(remote)
        } else {
            last = HLCTimestamp(wallMillis: wall, counter: 0)
        }
        return last
    }

    /// The next timestamp after `t`; the largest one stays as it is (a stamp from elsewhere may
    /// be anything: it saturates rather than traps).
    static func bump(_ t: HLCTimestamp) -> HLCTimestamp {
        if t.counter < .max { return HLCTimestamp(wallMillis: t.wallMillis, counter: t.counter + 1) }
        if t.wallMillis < .max { return HLCTimestamp(wallMillis: t.wallMillis + 1, counter: 0) }
        return t
    }
}
