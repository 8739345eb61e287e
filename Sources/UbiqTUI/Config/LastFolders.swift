import Foundation

/// The folder the Files view was in when the front end was last quit, per account, device and
/// container (#44 row 11: it always started at `/`). Kept in `$XDG_STATE_HOME/ubiquity/tui.json`
/// (else `~/.local/state/ubiquity/tui.json`), private to the user; a file that cannot be read
/// is ignored, at most 64 places are kept and the file is at most 64 KiB.
public struct LastFolders: Sendable {
    public let url: URL

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let base = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".local/state")
        url = base.appendingPathComponent("ubiquity/tui.json")
    }

    struct Entry: Codable { var key: String; var folder: String }

    /// The places known, newest last (nothing when the file is missing, too big or broken).
    func entries() -> [Entry] {
        guard let attrs = try? FileManager.default.attributesOfItem(atPath: url.path),
              ((attrs[.size] as? NSNumber)?.intValue ?? 0) <= 64 << 10,
              let data = try? Data(contentsOf: url), let list = try? JSONDecoder().decode([Entry].self, from: data) else { return [] }
        return list
    }

    /// The folder last shown for `key`.
    public func folder(for key: String) -> String? { entries().last { $0.key == key }?.folder }

    /// Remembers `folder` (nil: the top) for `key`.
    public func remember(_ folder: String?, for key: String) {
        var list = entries().filter { $0.key != key }
        if let folder, folder.utf8.count <= 1024, key.utf8.count <= 1024 { list.append(Entry(key: key, folder: folder)) }
        list = Array(list.suffix(64))
        let dir = url.deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard let data = try? JSONEncoder().encode(list) else { return }
        let tmp = dir.appendingPathComponent(".tui.json.\(getpid())")
        guard FileManager.default.createFile(atPath: tmp.path, contents: data, attributes: [.posixPermissions: 0o600]) else { return }
        if rename(tmp.path, url.path) != 0 { try? FileManager.default.removeItem(at: tmp) }
    }
}
