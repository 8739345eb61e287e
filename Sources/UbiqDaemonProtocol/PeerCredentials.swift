import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Who is at the other end of a Unix socket, as the kernel says (`SO_PEERCRED`), and who owns a
/// socket file (#45 row 9: neither the daemon nor the programs using it checked — a local user
/// with a writable parent of `--home` could put a fake daemon in its place).
public enum PeerCredentials {
    /// The user ID of the process at the other end of `channel` (a connected Unix socket);
    /// nil when the kernel does not say.
    public static func uid(of channel: any Channel) async -> uid_t? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let future: EventLoopFuture<Credentials> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return (try? await future.get()).map(\.uid)
    }

    /// Linux's `struct ucred` (declared by glibc only under `_GNU_SOURCE`): the same layout.
    struct Credentials: Sendable {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }

    /// Nil when the file at `path` is a socket this user owns; else why it is not to be trusted.
    public static func socketFileDistrust(_ path: String, me: uid_t = getuid()) -> String? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }  // nothing there: the connect says so
        guard st.st_mode & S_IFMT == S_IFSOCK else { return "\(path) is not a socket" }
        guard st.st_uid == me else { return "\(path) belongs to user \(st.st_uid), not to you (user \(me))" }
        return nil
    }
}
