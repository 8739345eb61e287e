import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whether a program file can be trusted to be what this user meant to run later — by a
/// systemd unit at login, or by a program that starts the daemon (#45 rows 5 and 6).
public enum ExecutableTrust {
    /// Where another user could put their own program in place of `path`: the first of the file
    /// and its folders (links resolved) that a user other than this one and root owns, or that
    /// every user may write. `lasting`: the path is to be run later (a unit at every login), so a
    /// sticky folder such as `/tmp` counts too — once the binary is gone, anyone may create it
    /// again; for a program run now, the sticky bit keeps others from replacing what is there.
    /// Nil: only this user or root can change what runs.
    public static func replaceableByOthers(_ path: String, lasting: Bool, me: uid_t = getuid()) -> String? {
        var url = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath()
        while true {
            var st = stat()
            guard lstat(url.path, &st) == 0 else { return "\(url.path) cannot be read" }
            if st.st_uid != 0 && st.st_uid != me { return "\(url.path) belongs to user \(st.st_uid)" }
            let sticky = st.st_mode & S_ISVTX != 0 && (st.st_mode & S_IFMT) == S_IFDIR
            if st.st_mode & S_IWOTH != 0 && (st.st_mode & S_IFMT) != S_IFLNK && (lasting || !sticky) { return "\(url.path) is writable by others" }
            if url.path == "/" { return nil }
            url = url.deletingLastPathComponent()
        }
    }

    /// The first `name` in `PATH`'s absolute folders that only this user or root can replace;
    /// a relative entry (`.`, empty, `bin`) is never searched — it names whatever folder the
    /// program happens to run in. `skipped` hears each candidate passed over and why.
    public static func search(_ name: String, path: String?, skipped: (String) -> Void = { _ in }) -> String? {
        for dir in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false) {
            guard dir.hasPrefix("/") else {
                skipped("PATH entry '\(dir)' is not absolute")
                continue
            }
            let candidate = "\(dir)/\(name)"
            guard FileManager.default.isExecutableFile(atPath: candidate) else { continue }
            if let why = replaceableByOthers(candidate, lasting: false) {
                skipped("\(candidate): \(why)")
                continue
            }
            return candidate
        }
        return nil
    }
}
