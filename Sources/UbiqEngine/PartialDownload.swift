import CFileSupport
import Foundation
import UbiqClient
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// One file's content assembled into its partial file beside the container folder: chunks
/// already there from an interrupted attempt are kept, the rest come in windows — those this
/// device holds from its own files, the others fetched (the next windows' requests go out
/// before this one is written, so a device that downloads while another uploads keeps pace) —
/// through one aligned writer, then the file is flushed. Every chunk is verified against its
/// hash before it is written, and the chunk list against the version's hash, which is derived
/// from it: the assembled file is the version's content without a second pass over its bytes.
/// Placing the file and recording it are the engine's.
struct PartialDownload {
    let manifest: Manifest
    /// The partial file's path.
    let partial: String
    let transport: ChunkTransport
    /// Set while the version is still being uploaded by another device: how long a fetch waits
    /// for chunks that have not arrived yet.
    let waitSeconds: Int?

    /// Chunks a download assembles per window.
    static let windowChunks = 1024
    /// Windows whose chunks are being fetched while the one before them is written.
    static let windowsAhead = 2
    /// The buffer of a download's writer: big enough that direct writes are few.
    static let writerBuffer = 8 << 20

    /// What this device can supply of a window: chunks `copied` from a local file (checked
    /// with the fetches, on several cores), chunks already `checked`, and the rest `missing`.
    typealias LocalChunks = (copied: [(ChunkRef, [UInt8])], checked: [ContentHash: [UInt8]], missing: [ChunkRef])

    enum Outcome: Equatable {
        /// The partial file holds the whole version, flushed.
        case assembled
        /// The uploader stopped sending: what arrived is kept; the rest once it is complete.
        case paused
        /// `stepAside` asked to stop (a local change while streaming, or the download was
        /// cancelled); what arrived is kept.
        case steppedAside
    }

    /// Assembles the file. `local` says what this device holds of each window; `progress`
    /// hears the bytes in the file so far; `stepAside` is asked between windows (told whether the
    /// version is still being uploaded, whose pace may be slow): true stops, keeping what arrived.
    /// Runs on no actor: the closures hop to their owner themselves.
    func run(permissions: Int?, modified: Date?, local: @Sendable (ArraySlice<ChunkRef>) async -> LocalChunks,
             progress: @Sendable (Int) async -> Void, stepAside: @Sendable (_ streaming: Bool) async -> Bool) async throws -> Outcome {
        let m = manifest
        let fd = open(partial, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw cannot("write") }
        defer { close(fd) }
        fchmod(fd, 0o600)  // one left by an attempt from before partial files were private
        // Chunks already in the partial file from an interrupted attempt are kept.
        var offset = 0
        var index = 0
        while index < m.chunks.count, let have = LocalFiles.read(path: partial, offset: offset, size: m.chunks[index].size),
              transport.client.naming.name(have) == m.chunks[index].hash {
            offset += m.chunks[index].size
            index += 1
        }
        await progress(offset)
        ftruncate(fd, off_t(offset))
        // Fresh bytes go through one aligned buffer, straight to disk where the file system allows.
        guard let writer = ubiq_writer_open(fd, Int64(offset), Self.writerBuffer) else { throw cannot("write") }
        defer { ubiq_writer_free(writer) }

        let transport = self.transport, wait = waitSeconds
        typealias Window = (chunks: ArraySlice<ChunkRef>, fetched: Task<[ContentHash: ChunkBytes], Error>)
        var ahead: [Window] = []
        var nextStart = index
        func fill() async {
            while ahead.count < Self.windowsAhead, nextStart < m.chunks.count {
                let chunks = m.chunks[nextStart..<min(m.chunks.count, nextStart + Self.windowChunks)]
                let have = await local(chunks)
                nextStart = chunks.endIndex
                ahead.append((chunks, Task { try await transport.gather(copied: have.copied, checked: have.checked, missing: have.missing, waitSeconds: wait) }))
            }
        }
        await fill()
        defer { for w in ahead { w.fetched.cancel() } }
        while !ahead.isEmpty {
            // Paused or stopping: what arrived stays in the partial file for the next attempt.
            if Task.isCancelled {
                if ubiq_writer_finish(writer) == 0 { fsync(fd) }
                throw CancellationError()
            }
            let current = ahead.removeFirst()
            let fetched: [ContentHash: ChunkBytes]
            do {
                fetched = try await current.fetched.value
            } catch let e as ClientError where wait != nil && e.code == .notFound {
                if ubiq_writer_finish(writer) == 0 { fsync(fd) }
                return .paused
            }
            await fill()
            for c in current.chunks {
                guard let bytes = fetched[c.hash], bytes.count == c.size else { throw EngineError(.hashMismatch, "chunk \(c.hash) missing") }
                let rc = bytes.withBytes { ubiq_writer_write(writer, $0.baseAddress, $0.count) }
                guard rc == 0 else { throw cannot("write") }
                offset += c.size
            }
            await progress(offset)
            if !ahead.isEmpty, await stepAside(wait != nil) {
                if ubiq_writer_finish(writer) == 0 { fsync(fd) }
                return .steppedAside
            }
        }
        guard ubiq_writer_finish(writer) == 0 else { throw cannot("write") }
        ftruncate(fd, off_t(offset))
        LocalFiles.setPermissions(fd, permissions)
        if let modified { Self.setTimes(fd, modified) }
        guard fsync(fd) == 0 else { throw cannot("sync") }
        return .assembled
    }

    func cannot(_ what: String) -> EngineError {
        EngineError(.storageFailure, "cannot \(what) \(partial): \(String(cString: strerror(errno)))")
    }

    /// Writes a new file (not flushed unless `sync`) with the given modification time.
    static func writeFile(_ bytes: [UInt8], to path: String, modified: Date?, permissions: Int? = nil, sync: Bool = false) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw EngineError(.storageFailure, "cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(done)) }
            if n < 0 { if errno == EINTR { continue }; throw EngineError(.storageFailure, "cannot write \(path): \(String(cString: strerror(errno)))") }
            done += n
        }
        LocalFiles.setPermissions(fd, permissions)
        if let modified { setTimes(fd, modified) }
        if sync && fsync(fd) != 0 { throw EngineError(.storageFailure, "cannot flush \(path): \(String(cString: strerror(errno)))") }
    }

    /// Sets a file's access and modification times.
    static func setTimes(_ fd: Int32, _ date: Date) {
        let t = date.timeIntervalSince1970
        let ts = timespec(tv_sec: Int(t.rounded(.down)), tv_nsec: Int((t - t.rounded(.down)) * 1e9))
        var times = [ts, ts]
        futimens(fd, &times)
    }
}

/// The chunks of the file a download replaces, read from it by the places the synced
/// version's chunk list gives (most of an edited file's chunks are unchanged). Unchecked: the
/// download verifies them with its fetches, and fetches any that no longer match.
final class ReplacedFileChunks: Sendable {
    private let places: [ContentHash: Place]
    private let fd: Int32
    private struct Place: Sendable { let offset: Int, size: Int }

    init(path: String, chunks: [ChunkRef]) {
        var places: [ContentHash: Place] = [:]
        var off = 0
        for c in chunks {
            if places[c.hash] == nil { places[c.hash] = Place(offset: off, size: c.size) }
            off += c.size
        }
        self.places = places
        fd = chunks.isEmpty ? -1 : open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// The bytes at the place `c` had, if the file still has that many there.
    func read(_ c: ChunkRef) -> [UInt8]? {
        guard fd >= 0, let at = places[c.hash], at.size == c.size else { return nil }
        var buf = [UInt8](repeating: 0, count: c.size)
        let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, c.size, off_t(at.offset)) }
        return n == c.size ? buf : nil
    }
}
