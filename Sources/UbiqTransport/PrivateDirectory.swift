import Foundation
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// Folders only their owner may enter: the server's data (password and token hashes, every
/// path, every chunk) and a device's configuration and state (tokens, setting values, the
/// daemon's socket). Whatever modes the files inside get, another local user cannot reach them.
public enum PrivateDirectory {
    /// Creates `url` (and its missing parents) and makes it `0700`; a folder that exists is made
    /// `0700` too. Throws `storage_failure` when either is not possible.
    public static func make(_ url: URL) throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CoreError(.storageFailure, "cannot create \(url.path): \(error.localizedDescription)")
        }
        guard chmod(url.path, 0o700) == 0 else {
            throw CoreError(.storageFailure, "cannot make \(url.path) private (mode 0700): \(String(cString: strerror(errno)))")
        }
    }
}
