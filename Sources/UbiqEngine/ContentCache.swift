import UbiqCore

/// What the engine remembers of file contents between a scan and the steps after it: each
/// stamp's manifest (a file whose stamp is unchanged is not chunked again), and the bytes of
/// small files the scan read, for the uploads that follow (at most `keptLimit` bytes in all).
/// Pure: no file system.
struct ContentCache: Sendable {
    /// The most bytes kept at once.
    static let keptLimit = 64 << 20
    /// Manifests kept at most (all are dropped beyond it: stamps of files long gone pile up).
    static let manifestLimit = 10_000

    private var manifests: [FileStamp: Manifest] = [:]
    private var kept: [FileStamp: [UInt8]] = [:]
    /// Bytes kept now.
    private(set) var keptBytes = 0

    /// The manifest of a file with this stamp, if one was made.
    func manifest(for stamp: FileStamp) -> Manifest? { manifests[stamp] }

    /// Notes the manifest of a file with this stamp.
    mutating func note(_ m: Manifest, for stamp: FileStamp) { manifests[stamp] = m }

    /// A stamp whose manifest has this content hash, with the manifest (nil if none is known).
    func stamp(ofContent hash: ContentHash) -> (stamp: FileStamp, manifest: Manifest)? {
        manifests.first { $0.value.hash == hash }.map { ($0.key, $0.value) }
    }

    /// Forgets every manifest (the watcher lost events: a stamp may no longer mean its content).
    mutating func forgetManifests() { manifests.removeAll() }

    /// Drops all manifests when there are more than `manifestLimit`.
    mutating func trim() { if manifests.count > Self.manifestLimit { manifests.removeAll() } }

    /// Keeps a file's bytes if they fit under the limit; true if kept.
    @discardableResult
    mutating func keep(_ bytes: [UInt8], for stamp: FileStamp) -> Bool {
        guard keptBytes + bytes.count <= Self.keptLimit else { return false }
        if let old = kept.updateValue(bytes, forKey: stamp) { keptBytes -= old.count }
        keptBytes += bytes.count
        return true
    }

    /// Takes a file's kept bytes (they are not kept afterwards).
    mutating func takeKept(for stamp: FileStamp) -> [UInt8]? {
        guard let b = kept.removeValue(forKey: stamp) else { return nil }
        keptBytes -= b.count
        return b
    }

    /// Drops every kept byte.
    mutating func dropKept() {
        kept.removeAll()
        keptBytes = 0
    }
}
