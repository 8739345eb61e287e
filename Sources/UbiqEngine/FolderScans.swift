import UbiqCore

/// What the engine keeps of its reads of the folder: when it last read all of it, and the last
/// walk with the watcher's count of moves and removals it is exact for. A pass skips the walk
/// while the watcher vouches that nothing changed since (`SyncEngine.folderKnownUnchanged`);
/// a scan after changes that moved and removed nothing reads only the folders they were in
/// (`partial(since:watcherComplete:now:)`). Neither for longer than `fullEvery`.
public struct FolderScans: Sendable {
    /// The longest the engine trusts the watcher without reading the whole folder again:
    /// changes inotify does not report (a write through a memory map, through a hard link's
    /// other name, inside a `.nosync` folder) wait this long.
    public static let standardFullEvery: Duration = .seconds(300)
    /// This engine's (tests shorten it).
    let fullEvery: Duration
    /// More folders changed than this: the whole folder is read.
    static let partialLimit = 256
    /// When the last complete scan began (nil: the next scan reads everything).
    var lastFull: ContinuousClock.Instant?
    /// Files the last scan left unhashed because a program was writing them under coordination:
    /// the pass it asks for when done must read the folder.
    var unhashed = 0
    /// Walks so far, of the whole folder and of changed folders only.
    var fullWalks = 0, partialWalks = 0
    /// The items of the last full claim, by path: a partial walk that found only edits finds
    /// their items here (each checked against the Local tree, which moves on meanwhile).
    var idsByPath: [RelativePath: ItemID] = [:]
    /// The last calm walk, and the watcher's count of moves and removals it is exact for.
    var lastWalk: (scan: LocalFiles.Scan, structural: UInt64)?

    /// The folders a scan must read again (nil for the root) over `lastWalk`, or nil when it
    /// must read everything: something moved or was removed since, a folder is unwatched, too
    /// many changed, a name is not a valid path, or the last full read is too old.
    func partial(since changes: (structural: UInt64, dirty: Set<String>), watcherComplete: Bool, now: ContinuousClock.Instant) -> [RelativePath?]? {
        guard watcherComplete, let last = lastWalk, last.structural == changes.structural, let at = lastFull, now - at < fullEvery,
              changes.dirty.count <= Self.partialLimit else { return nil }
        var dirs: [RelativePath?] = []
        for d in changes.dirty.sorted() {
            if d.isEmpty {
                dirs.append(nil)
            } else if let p = try? RelativePath(validating: d) {
                dirs.append(p)
            } else {
                return nil
            }
        }
        return dirs
    }
}
