import Dispatch
import Foundation
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// What the watcher reports.
struct WatchEvent: Sendable, Equatable {
    /// `changed`: written or created (a writer may still be at work); `placed`: renamed or moved
    /// in, removed, attributes changed — no write in progress, so nothing to wait for;
    /// `closedWrite`: a writer closed the file.
    enum Kind: Sendable, Equatable { case changed, placed, closedWrite, overflow }
    var path: RelativePath?
    var kind: Kind
}

/// Recursive inotify on a container folder. New folders get watches as they appear (and are
/// reported so the engine rescans them); a queue overflow is reported so the engine rescans
/// everything. Runs on its own serial queue and hands batches of events to `onEvents`.
final class DirectoryWatcher: @unchecked Sendable {
    private let root: String
    private let queue = DispatchQueue(label: "ubiq.watcher")
    private var fd: Int32 = -1
    private var source: DispatchSourceRead?
    private var paths: [Int32: String] = [:]  // wd → relative path ("" for the root)
    private let onEvents: @Sendable ([WatchEvent]) -> Void
    /// Files written lately, as of the last read of the inotify queue: the sequence number of
    /// the last write, when it was seen and whether a close-write followed. Kept here, on the
    /// watcher's queue, so the engine can read the kernel's queue and this state synchronously
    /// (`writes()`, `written(_:since:)`) instead of relying on events still on their way to it.
    private var lastWrite: [String: (seq: UInt64, at: ContinuousClock.Instant, open: Bool)] = [:]
    private var seq: UInt64 = 0
    /// Renames into the folder that the engine makes itself (downloads put in place), by path:
    /// how many to expect and until when. Those are not reported; everything else counts in
    /// `foreign`, which tells the engine whether anything else happened since its last scan.
    private var expectedMoves: [String: (count: Int, until: ContinuousClock.Instant)] = [:]
    private var foreign: UInt64 = 0
    /// Of those, the events that can make an entry vanish from one place or appear at another
    /// (moves, removals, an overflow, a watch dropped): a walk of the folder during one of them
    /// may have seen a moved folder twice, or not at all.
    private var structural: UInt64 = 0
    /// Every folder of the tree has its watch (none was refused): no event is missed, so a folder
    /// that reported nothing since it was last read is unchanged.
    private var complete = true
    /// Folders whose watch was refused since the start (or the last `rewatch`), and why (the
    /// last refusal's errno): out of watches (`ENOSPC`) is the usual one.
    private var refused = 0, refusal: Int32 = 0
    /// The most watches this watcher adds (nil: as many as the kernel gives); past it a folder is
    /// refused as if the kernel were out of watches (tests run out of watches with it).
    private let limit: Int?
    /// The folders (relative paths, "" for the root) where anything happened since the engine
    /// last took them (`takeChanges`): its own placements included, which change what a walk
    /// finds though they are not foreign.
    private var dirty: Set<String> = []
    private static let mask = UInt32(IN_CREATE | IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF
                                     | IN_MOVE_SELF | IN_ATTRIB) | UInt32(IN_ONLYDIR) | UInt32(IN_EXCL_UNLINK)

    init(root: String, limit: Int? = nil, onEvents: @escaping @Sendable ([WatchEvent]) -> Void) {
        self.root = root
        self.limit = limit
        self.onEvents = onEvents
    }

    /// Starts watching; false if inotify is unavailable (the engine then relies on periodic scans).
    func start() -> Bool {
        queue.sync {
            fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard fd >= 0 else { return false }
            addRecursive("")
            let src = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            src.setEventHandler { [weak self] in self?.drain() }
            src.resume()
            source = src
            return true
        }
    }

    func stop() {
        queue.sync {
            source?.cancel()
            source = nil
            if fd >= 0 { close(fd); fd = -1 }
            paths.removeAll()
        }
    }

    private func addRecursive(_ rel: String) {
        let full = rel.isEmpty ? root : root + "/" + rel
        var wd = inotify_add_watch(fd, full, Self.mask)
        if wd >= 0, let limit, paths[wd] == nil, paths.count >= limit {
            inotify_rm_watch(fd, wd)
            wd = -1
            errno = ENOSPC
        }
        if wd < 0 {
            // Vanished meanwhile (ENOENT: its removal is an event of its own), or out of watches
            // (ENOSPC) or refused: a part of the folder goes unwatched, so every pass reads it all.
            if errno != ENOENT {
                complete = false
                refused += 1
                refusal = errno
            }
            return
        }
        paths[wd] = rel
        guard let d = opendir(full) else { return }
        defer { closedir(d) }
        while let ent = readdir(d) {
            guard ent.pointee.d_type == UInt8(DT_DIR) else { continue }
            let name = withUnsafeBytes(of: ent.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." || name.hasSuffix(".nosync") { continue }
            addRecursive(rel.isEmpty ? name : rel + "/" + name)
        }
    }

    /// Reads what the kernel has queued (handing it to `onEvents` as usual) and returns the
    /// sequence number so far and the files written within `settle` and not closed since.
    func writes(settle: Duration) -> (seq: UInt64, recent: [String: UInt64]) {
        queue.sync {
            if fd >= 0 { drain() }
            let now = ContinuousClock.now
            lastWrite = lastWrite.filter { now - $0.value.at < settle * 4 }  // forget long-quiet files
            return (seq, lastWrite.filter { $0.value.open && now - $0.value.at < settle }.mapValues(\.seq))
        }
    }

    /// Reads what the kernel has queued and tells which of `paths` got a write after sequence
    /// number `since` (closed or not). Lets the engine check that nobody wrote a file between
    /// placing it and recording its stamp.
    func written(_ paths: [String], since: UInt64) -> Set<String> {
        queue.sync {
            if fd >= 0 { drain() }
            return Set(paths.filter { (lastWrite[$0]?.seq ?? 0) > since })
        }
    }

    /// The engine is about to rename files into these paths: those events are its own.
    func expectMoves(into paths: [String], within: Duration = .seconds(30)) {
        queue.sync {
            let until = ContinuousClock.now + within
            for p in paths { expectedMoves[p] = ((expectedMoves[p]?.count ?? 0) + 1, until) }
        }
    }

    /// The engine did not rename into these paths after all (the local file had changed): their
    /// expectations are dropped, and something is taken to have happened there.
    func cancelMoves(into paths: [String]) {
        guard !paths.isEmpty else { return }
        queue.sync {
            for p in paths {
                if let x = expectedMoves[p], x.count > 1 { expectedMoves[p] = (x.count - 1, x.until) } else { expectedMoves[p] = nil }
            }
            foreign += 1
        }
    }

    /// Reads what the kernel has queued and returns how many events so far were not the
    /// engine's own renames: equal counts mean the folder is as the engine left it.
    func foreignEvents() -> UInt64 {
        queue.sync {
            if fd >= 0 { drain() }
            return foreign
        }
    }

    /// Reads what the kernel has queued and hands over the count of moves and removals so far and
    /// the folders where anything happened since the last call (then forgotten here): a scan
    /// that starts from an earlier walk reads only those again, when the count did not change.
    func takeChanges() -> (structural: UInt64, dirty: Set<String>) {
        queue.sync {
            if fd >= 0 { drain() }
            defer { dirty.removeAll() }
            return (structural, dirty)
        }
    }

    /// True when every folder of the tree has its watch (no watch was refused since the start).
    func isComplete() -> Bool { queue.sync { fd >= 0 && complete } }

    /// Tries again to watch every folder (those already watched keep their watches): after
    /// watches ran out, once the user raised the limit or removed folders, the engine goes back
    /// to reading only what changed. True when every folder has its watch now.
    @discardableResult
    func rewatch() -> Bool {
        queue.sync {
            guard fd >= 0 else { return false }
            complete = true
            refused = 0
            addRecursive("")
            return complete
        }
    }

    /// What a person should know when some folder is not watched (nil when every one is): how
    /// many, why, what the engine does instead and how to fix it.
    func notice() -> String? {
        queue.sync {
            guard fd >= 0, !complete else { return nil }
            let folders = refused == 1 ? "1 folder (with the folders inside it) is" : "\(refused) folders (with the folders inside them) are"
            guard refusal == ENOSPC else {
                return "\(folders) not watched (\(String(cString: strerror(refusal)))): changes in them are found by reading the whole folder, every 30 seconds"
            }
            let max = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8))
                .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            let now = limit.map { "this device's watch limit (\($0))" } ?? "fs.inotify.max_user_watches (\(max.map(String.init) ?? "?"))"
            return "\(folders) not watched: inotify is out of watches at \(now). Changes in them are found by reading the whole folder, every 30 seconds; "
                + "to watch them, raise the limit: sudo sysctl fs.inotify.max_user_watches=\(Swift.max(524_288, (max ?? 0) * 2)) (and in /etc/sysctl.d/ to keep it)"
        }
    }

    /// Reads what the kernel has queued and returns how many moves and removals (not the
    /// engine's own renames) were seen so far: equal counts around a walk mean no folder moved
    /// while it ran.
    func structuralEvents() -> UInt64 {
        queue.sync {
            if fd >= 0 { drain() }
            return structural
        }
    }

    private func drain() {
        var events: [WatchEvent] = []
        // Paths a placement renamed into in this read (see the exchange's other half below).
        var placed: Set<String> = []
        var buf = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            var off = 0
            while off + 16 <= n {
                let (wd, mask, len) = buf.withUnsafeBytes { raw in
                    (raw.loadUnaligned(fromByteOffset: off, as: Int32.self), raw.loadUnaligned(fromByteOffset: off + 4, as: UInt32.self),
                     Int(raw.loadUnaligned(fromByteOffset: off + 12, as: UInt32.self)))
                }
                let nameBytes = buf[(off + 16)..<min(n, off + 16 + len)].prefix { $0 != 0 }
                off += 16 + len
                if mask & UInt32(bitPattern: IN_Q_OVERFLOW) != 0 {
                    foreign += 1
                    structural += 1
                    expectedMoves.removeAll()
                    events.append(WatchEvent(path: nil, kind: .overflow))
                    continue
                }
                if mask & UInt32(IN_IGNORED) != 0 { paths[wd] = nil; continue }
                guard let dir = paths[wd] else {
                    // A watch dropped a moment ago (its folder moved, the new watch is not in
                    // place yet): something changed somewhere, so the engine looks.
                    foreign += 1
                    structural += 1
                    events.append(WatchEvent(path: nil, kind: .placed))
                    continue
                }
                let name = String(decoding: nameBytes, as: UTF8.self)
                let rel = name.isEmpty ? dir : (dir.isEmpty ? name : dir + "/" + name)
                let isDir = mask & UInt32(bitPattern: IN_ISDIR) != 0
                dirty.insert(dir)
                if !isDir && mask & UInt32(IN_MOVED_TO) != 0, let x = expectedMoves[rel], x.count > 0, ContinuousClock.now < x.until {
                    expectedMoves[rel] = x.count > 1 ? (x.count - 1, x.until) : nil
                    placed.insert(rel)
                    continue  // a download the engine put in place
                }
                if !isDir && mask & UInt32(IN_MOVED_FROM) != 0, placed.remove(rel) != nil || (expectedMoves[rel].map { $0.count > 0 && ContinuousClock.now < $0.until } ?? false) {
                    // The other half of a placement's `RENAME_EXCHANGE` (reported just before or
                    // after it): the file it replaced, swapped out. Not a move: the path never
                    // stood empty, so a walk meanwhile saw a file there.
                    continue
                }
                foreign += 1
                if mask & UInt32(IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF) != 0 { structural += 1 }
                if isDir && mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                    addRecursive(rel)  // watch the new folder and everything already inside it
                }
                if isDir && mask & UInt32(IN_MOVED_FROM) != 0 {
                    // The folder's watches stay valid after a move inside the tree; rebase their paths.
                    let prefix = rel + "/"
                    for (w, p) in paths where p == rel || p.hasPrefix(prefix) { paths[w] = nil; inotify_rm_watch(fd, w) }
                }
                if !isDir {
                    if mask & UInt32(IN_CLOSE_WRITE) != 0 { lastWrite[rel]?.open = false } else if mask & UInt32(IN_MODIFY) != 0 {
                        seq += 1
                        lastWrite[rel] = (seq, .now, true)
                    }
                }
                let path = rel.isEmpty ? nil : try? RelativePath(validating: rel)
                if let path, path.isExcluded { continue }
                let kind: WatchEvent.Kind = mask & UInt32(IN_CLOSE_WRITE) != 0 ? .closedWrite
                    : mask & UInt32(IN_MODIFY | IN_CREATE) != 0 ? .changed : .placed
                events.append(WatchEvent(path: path, kind: kind))
            }
        }
        if !events.isEmpty { onEvents(events) }
    }
}
