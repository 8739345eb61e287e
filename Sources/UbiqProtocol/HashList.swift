import UbiqCore

/// Lists of hashes on the wire (which chunks are missing, which to fetch): one string of
/// 64-hex-character hashes back to back, instead of a JSON array of strings. A 1 GiB file has
/// ~30,000 chunks; as an array its missing list cost ~100 ms to write and read on the path from
/// saving the file to other devices starting to download it. The array form is still read.
public enum HashList {
    /// The hashes back to back.
    public static func string(_ hashes: [ContentHash]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(hashes.count * 64)
        for h in hashes { h.appendHex(to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The hashes of such a string; nil unless it is whole 64-character hex hashes.
    public static func parse(_ s: String) -> [ContentHash]? {
        var s = s
        return s.withUTF8 { u -> [ContentHash]? in
            guard u.count % 64 == 0 else { return nil }
            var out: [ContentHash] = []
            out.reserveCapacity(u.count / 64)
            for i in stride(from: 0, to: u.count, by: 64) {
                guard let h = ContentHash(hexBytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: u[i..<i + 64]))) else { return nil }
                out.append(h)
            }
            return out
        }
    }
}

extension KeyedDecodingContainer {
    /// A hash list in either form (one string, or an array of strings).
    func decodeHashes(forKey key: Key) throws -> [ContentHash] {
        if let s = try? decode(String.self, forKey: key) {
            guard let hashes = HashList.parse(s) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not a list of 64-character hex hashes")
            }
            return hashes
        }
        return try decode([ContentHash].self, forKey: key)
    }
}

extension KeyedEncodingContainer {
    mutating func encodeHashes(_ hashes: [ContentHash], forKey key: Key) throws {
        try encode(HashList.string(hashes), forKey: key)
    }
}

extension MissingChunksRequest {
    enum CodingKeys: String, CodingKey { case hashes }
    public init(from decoder: Decoder) throws {
        self.init(hashes: try decoder.container(keyedBy: CodingKeys.self).decodeHashes(forKey: .hashes))
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeHashes(hashes, forKey: .hashes)
    }
}

extension MissingChunksResponse {
    enum CodingKeys: String, CodingKey { case missing }
    public init(from decoder: Decoder) throws {
        self.init(missing: try decoder.container(keyedBy: CodingKeys.self).decodeHashes(forKey: .missing))
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeHashes(missing, forKey: .missing)
    }
}

extension FetchChunksRequest {
    enum CodingKeys: String, CodingKey { case hashes, waitSeconds }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(hashes: try c.decodeHashes(forKey: .hashes), waitSeconds: try c.decodeIfPresent(Int.self, forKey: .waitSeconds))
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeHashes(hashes, forKey: .hashes)
        try c.encodeIfPresent(waitSeconds, forKey: .waitSeconds)
    }
}

extension CommitResponse {
    enum CodingKeys: String, CodingKey { case outcome, item, version, missing }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(outcome: try c.decode(CommitOutcome.self, forKey: .outcome), item: try c.decode(ItemRecord.self, forKey: .item),
                  version: try c.decodeIfPresent(VersionRecord.self, forKey: .version), missing: try c.decodeHashes(forKey: .missing))
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(outcome, forKey: .outcome)
        try c.encode(item, forKey: .item)
        try c.encodeIfPresent(version, forKey: .version)
        try c.encodeHashes(missing, forKey: .missing)
    }
}
