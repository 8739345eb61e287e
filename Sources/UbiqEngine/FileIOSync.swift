import CFileSupport
import Foundation
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// Flushing files and folders to disk for downloads, on threads of their own.
enum FileIOSync {
    /// Flushes a folder (a rename into it is durable once this returns).
    static func directory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }
}

extension FileIOSync {
    /// Runs `body(i)` for every `i` in `0..<count` on `width` threads of their own (they mostly
    /// wait for the disk, so more threads than cores helps) and rethrows the first error.
    static func inParallel(_ count: Int, width: Int = 8, _ body: @escaping @Sendable (Int) throws -> Void) throws {
        guard count > 0 else { return }
        final class Shared: @unchecked Sendable {
            let lock = NSLock()
            var next = 0
            var error: Error?
        }
        let shared = Shared()
        let group = DispatchGroup()
        for w in 0..<min(width, count) {
            DispatchQueue(label: "ubiq.fsync.\(w)").async(group: group) {
                while true {
                    shared.lock.lock()
                    let i = shared.next
                    shared.next += 1
                    let stop = shared.error != nil
                    shared.lock.unlock()
                    if stop || i >= count { return }
                    do { try body(i) } catch {
                        shared.lock.lock()
                        if shared.error == nil { shared.error = error }
                        shared.lock.unlock()
                    }
                }
            }
        }
        group.wait()
        if let e = shared.error { throw e }
    }

    /// Makes the named folders' entries durable (an fsync each, in parallel): renames into them
    /// survive a crash.
    static func folders(_ paths: Set<String>) throws {
        let list = Array(paths)
        try inParallel(list.count) { i in
            let fd = open(list[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw EngineError(.storageFailure, "cannot open \(list[i]): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw EngineError(.storageFailure, "cannot flush \(list[i]): \(String(cString: strerror(errno)))") }
        }
    }
}
