import Foundation

/// A seeded, replayable generator (xoshiro256**). Property tests print the seed they used;
/// set `UBIQ_SEED` to replay a run.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var s: (UInt64, UInt64, UInt64, UInt64)
    public let seed: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        var x = seed
        func splitmix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s = (splitmix(), splitmix(), splitmix(), splitmix())
    }

    /// A generator seeded from `UBIQ_SEED` if set, else from the system; prints the seed with `label`.
    public static func forTest(_ label: String) -> SeededRandom {
        let seed = ProcessInfo.processInfo.environment["UBIQ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        print("[\(label)] seed \(seed) (replay with UBIQ_SEED=\(seed))")
        return SeededRandom(seed: seed)
    }

    public mutating func next() -> UInt64 {
        let result = ((s.1 &* 5) << 7 | (s.1 &* 5) >> 57) &* 9
        let t = s.1 << 17
        s.2 ^= s.0; s.3 ^= s.1; s.1 ^= s.2; s.0 ^= s.3
        s.2 ^= t
        s.3 = (s.3 << 45) | (s.3 >> 19)
        return result
    }

    /// `bytes` damaged at `edits` random places (a byte replaced, removed or inserted, the new
    /// ones from `alphabet`): the fuzzers' way of making nearly valid input.
    public mutating func mutate(_ bytes: [UInt8], edits: ClosedRange<Int>, alphabet: [UInt8]) -> [UInt8] {
        var b = bytes
        for _ in 0..<Int.random(in: edits, using: &self) where !b.isEmpty {
            let at = Int.random(in: 0..<b.count, using: &self)
            switch Int.random(in: 0..<3, using: &self) {
            case 0: b[at] = alphabet.randomElement(using: &self)!
            case 1: b.remove(at: at)
            default: b.insert(alphabet.randomElement(using: &self)!, at: at)
            }
        }
        return b
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        // Eight bytes a store, lowest first (the same bytes as one at a time, so seeds replay):
        // tests ask for hundreds of MiB in unoptimised builds, on the cooperative pool.
        out.withUnsafeMutableBytes { raw in
            var i = 0
            while i + 8 <= count { raw.storeBytes(of: next().littleEndian, toByteOffset: i, as: UInt64.self); i += 8 }
            var v = i < count ? next() : 0
            while i < count { raw[i] = UInt8(truncatingIfNeeded: v); v >>= 8; i += 1 }
        }
        return out
    }
}

/// How many cases a fuzzer runs: `normal`, or `UBIQ_FUZZ_CASES` when set (the long mode for
/// soak runs).
public enum FuzzCases {
    public static func count(_ normal: Int) -> Int { ProcessInfo.processInfo.environment["UBIQ_FUZZ_CASES"].flatMap(Int.init) ?? normal }
}
