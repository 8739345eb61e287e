import Foundation
import UbiqCore

/// The engine's side of parallel chunking (the passes and the splice are in UbiqCore's
/// `Chunker+Parallel.swift`): the passes run on threads of their own.
extension Chunker {
    /// Chunks and hashes `size` bytes read through `read` in `parts` parallel passes, with the
    /// chunks of one pass from the start.
    /// Throws what `read` throws; a short read (the input shrank) ends the input there.
    /// Nothing waits on another part: an earlier part that reaches a stretch the later one has
    /// not cut yet cuts on by itself (correct, only more work), so the result never depends on
    /// how the passes are scheduled.
    public func parallelChunks(size: Int, parts: Int, segment: Int = 4 << 20, read: @escaping Reader) throws -> [ChunkRef] {
        let n = max(1, min(parts, size / max(1, maxSize)))
        let starts = (0..<n).map { size / n * $0 }
        let progress = starts.map { PassProgress(start: $0) }
        let results = UnsafeMutableBufferPointer<Result<[(Int, ChunkRef)], Error>?>.allocate(capacity: n)
        results.initialize(repeating: nil)
        defer { results.deallocate() }
        nonisolated(unsafe) let slots = results
        let run: @Sendable (Int) -> Void = { k in
            slots[k] = Result {
                try self.chunkPass(from: starts[k], segment: segment, read: read) { end in
                    progress[k].add(end)
                    return k + 1 < n && end >= starts[k + 1] && progress[k + 1].contains(end)
                }
            }
        }
        let group = DispatchGroup()
        for k in 1..<n { DispatchQueue.global().async(group: group) { run(k) } }
        run(0)
        group.wait()
        var parts: [[(Int, ChunkRef)]] = []
        for k in 0..<n { parts.append(try slots[k]?.get() ?? []) }
        return Chunker.splice(parts)
    }
}

/// The chunk starts one pass has found so far (read by the pass before it).
final class PassProgress: @unchecked Sendable {
    private let lock = NSLock()
    private var starts: Set<Int>

    init(start: Int) { starts = [start] }
    func add(_ offset: Int) { lock.withLock { _ = starts.insert(offset) } }
    func contains(_ offset: Int) -> Bool { lock.withLock { starts.contains(offset) } }
}
