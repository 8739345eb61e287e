/// A manifest on the wire: `{"chunks": "HASH:SIZE,HASH:SIZE,…", "size", "hash"}` — the chunk
/// list as one string (hex hash, colon, decimal size, comma-separated). A JSON array of
/// `{"hash", "size"}` objects (the earlier form) is still read. One string instead of an object
/// per chunk makes a 1 GiB file's manifest (~30,000 chunks) several times cheaper to write and
/// read, which is on the path from saving a big file to other devices starting to download it.
extension Manifest {
    enum CodingKeys: String, CodingKey { case chunks, size, hash }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let size = try c.decode(Int.self, forKey: .size)
        let hash = try c.decode(ContentHash.self, forKey: .hash)
        if let list = try? c.decode(String.self, forKey: .chunks) {
            guard let chunks = Self.parseChunkList(list) else {
                throw DecodingError.dataCorruptedError(forKey: .chunks, in: c,
                                                       debugDescription: "chunks must be HASH:SIZE entries separated by commas")
            }
            self.init(chunks: chunks, size: size, hash: hash)
        } else {
            self.init(chunks: try c.decode([ChunkRef].self, forKey: .chunks), size: size, hash: hash)
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Self.chunkList(chunks), forKey: .chunks)
        try c.encode(size, forKey: .size)
        try c.encode(hash, forKey: .hash)
    }

    /// `HASH:SIZE,HASH:SIZE,…` for the chunks ("" for none).
    public static func chunkList(_ chunks: [ChunkRef]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(chunks.count * 72)
        for (i, c) in chunks.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            c.hash.appendHex(to: &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: String(c.size).utf8)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The chunks of a `chunkList` string; nil if it is malformed (a bad hash, a size that is
    /// not a positive decimal of at most 10 digits, or above `ChunkRef.maxSize`, stray separators).
    public static func parseChunkList(_ s: String) -> [ChunkRef]? {
        var s = s
        return s.withUTF8 { u -> [ChunkRef]? in
            if u.isEmpty { return [] }
            var out: [ChunkRef] = []
            out.reserveCapacity(u.count / 70 + 1)
            var i = 0
            while i < u.count {
                guard u.count - i >= 66, u[i + 64] == UInt8(ascii: ":"),
                      let hash = ContentHash(hexBytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: u[i..<i + 64]))) else { return nil }
                i += 65
                var size = 0, digits = 0
                while i < u.count, u[i] != UInt8(ascii: ",") {
                    let d = Int(u[i]) - 48
                    guard d >= 0, d <= 9, digits < 10 else { return nil }
                    size = size * 10 + d
                    digits += 1
                    i += 1
                }
                guard digits > 0, size > 0, size <= ChunkRef.maxSize else { return nil }
                out.append(ChunkRef(hash: hash, size: size))
                if i < u.count {
                    i += 1  // the comma
                    guard i < u.count else { return nil }  // a trailing comma
                }
            }
            return out
        }
    }
}
