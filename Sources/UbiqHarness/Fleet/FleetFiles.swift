import CFileSupport
import Foundation

/// The file steps a randomized run takes on a device's folder, as a user's programs would:
/// every rename refuses to replace (so the test never destroys what it did not mean to), every
/// edit goes through one descriptor (what is recorded is what that file got), and a delete first
/// moves the item out of the folder, so exactly what it held is known.
enum FleetFiles {
    /// Files and folders under `Documents/` (relative to the container folder), hidden names left out.
    static func tree(_ root: String) -> (files: [String], folders: [String]) {
        var files: [String] = [], folders: [String] = []
        func walk(_ rel: String) {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: root + "/" + rel) else { return }
            for n in names.sorted() where !n.hasPrefix(".") {
                let r = rel + "/" + n
                var st = stat()
                guard lstat(root + "/" + r, &st) == 0 else { continue }
                if st.st_mode & S_IFMT == S_IFDIR { folders.append(r); walk(r) } else if st.st_mode & S_IFMT == S_IFREG { files.append(r) }
            }
        }
        walk("Documents")
        return (files, folders)
    }

    /// The token on a content's first line (`t123`), if it has one.
    static func token(of bytes: [UInt8]) -> Int? {
        guard bytes.first == UInt8(ascii: "t") else { return nil }
        let digits = bytes.dropFirst().prefix { $0 >= 0x30 && $0 <= 0x39 }
        guard !digits.isEmpty, bytes.count > digits.count + 1, bytes[digits.count + 1] == 0x0A else { return nil }
        return Int(String(decoding: digits, as: UTF8.self))
    }

    static func read(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { [UInt8]($0) } }

    /// Writes a new file (refusing to replace one); nil if something is already there.
    static func create(_ path: String, _ bytes: [UInt8]) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return writeAll(fd, bytes, at: 0)
    }

    /// Opens an existing file and lets `change` turn its content into the new content, written
    /// through the same descriptor (`truncate`: the old bytes go first). The new content, or nil.
    static func edit(_ path: String, truncate: Bool, _ change: ([UInt8]) -> [UInt8]?) -> [UInt8]? {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var old: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(old.count)) }
            if n <= 0 { break }
            old += buf[0..<n]
        }
        guard let new = change(old) else { return nil }
        if truncate { guard ftruncate(fd, 0) == 0 else { return nil } }
        let from = truncate ? 0 : commonPrefix(old, new)
        guard writeAll(fd, Array(new[from...]), at: from) else { return nil }
        if !truncate && new.count < old.count { _ = ftruncate(fd, off_t(new.count)) }
        return new
    }

    static func commonPrefix(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var i = 0
        while i < a.count && i < b.count && a[i] == b[i] { i += 1 }
        return i
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, $0.count - done, off_t(offset + done)) }
            if n <= 0 { return false }
            done += n
        }
        return true
    }

    /// rename(2) that never replaces.
    static func move(_ from: String, _ to: String) -> Bool { ubiq_rename_noreplace(from, to) == 0 }

    /// rename(2) over an existing file (an atomic save).
    static func replace(_ from: String, _ to: String) -> Bool { rename(from, to) == 0 }

    /// Every token held by the files under `path` (a file or a folder), read after it left the folder.
    static func tokens(under path: String) -> [Int] {
        var out: [Int] = []
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { return [] }
        if !isDir.boolValue { return read(path).flatMap(token(of:)).map { [$0] } ?? [] }
        for sub in (FileManager.default.subpaths(atPath: path) ?? []) {
            let p = path + "/" + sub
            var d: ObjCBool = false
            if FileManager.default.fileExists(atPath: p, isDirectory: &d), !d.boolValue, let t = read(p).flatMap(token(of:)) { out.append(t) }
        }
        return out
    }
}
