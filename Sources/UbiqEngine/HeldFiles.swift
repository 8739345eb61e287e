import CFileSupport
import Foundation
import UbiqCore
#if canImport(Glibc)
import Glibc
#endif

/// Files a download swapped out of the folder (`Placement`), held for a moment instead of
/// removed: a program that opened the file before the swap still writes to that file, not to
/// the downloaded one. A held file written after the swap is a user's edit and goes back into
/// the folder beside the document (`name (2).ext`), to be uploaded; one left alone is removed
/// once `holdTime` has passed. Held files live in the partial folder (same file system) under
/// a name that keeps what the file was when swapped out, so the check needs no other state
/// and survives a restart.
enum HeldFiles {
    static let suffix = ".held"
    /// How long a swapped-out file is kept before it is removed (if nobody wrote to it).
    static let holdTime: Double = 3

    /// The held name of a partial file `partial` (`<id>-<version>.partial`) whose swapped-out
    /// file had `stamp`.
    static func name(partial: String, stamp: FileStamp) -> String {
        "\(partial).\(stamp.size).\(stamp.mtimeNanos)\(suffix)"
    }

    /// One held file as found in the partial folder.
    struct Found: Equatable {
        let path: String
        /// The item whose file it was.
        let item: ItemID
        /// Written (size or modification time changed) since it was swapped out.
        let written: Bool
        /// Seconds since it was swapped out (its change time: the rename that held it).
        let age: Double
    }

    /// Parses a held file's name: the item and the size and modification time it was held with.
    static func parse(_ name: String) -> (item: ItemID, size: Int64, mtimeNanos: Int64)? {
        guard name.hasSuffix(suffix) else { return nil }
        // `<item>-<version>.partial.<size>.<mtime>.held`; the item's UUID is the first 36 characters.
        let parts = name.dropLast(suffix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[1] == "partial", let size = Int64(parts[2]), let mtime = Int64(parts[3]),
              parts[0].count > 36, let item = ItemID(string: String(parts[0].prefix(36))) else { return nil }
        return (item, size, mtime)
    }

    /// The held files in `folder`, looked at `now` (seconds since 1970).
    static func list(_ folder: String, now: Double) -> [Found] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var out: [Found] = []
        for n in names where n.hasSuffix(suffix) {
            let path = folder + "/" + n
            guard let (item, size, mtime) = parse(n), let (_, st) = LocalFiles.stamp(path) else { continue }
            let written = st.size != size || st.mtimeNanos != mtime
            out.append(Found(path: path, item: item, written: written, age: now - Double(st.ctimeNanos) / 1e9))
        }
        return out
    }
}
