import UbiqCore

/// What a folder holds, everything under it counted (tui.md: folders show an aggregate status
/// and their total size): a conflict or an error anywhere inside shows on the folder's row.
public struct FolderSummary: Equatable, Sendable {
    public var files = 0
    public var bytes: Int64 = 0
    public var conflicts = 0
    public var errors = 0
    public var transferring = 0
    /// Files waiting to go up (or to be fetched again).
    public var waiting = 0
    /// Files only in the cloud (evicted, or never fetched in on-demand mode).
    public var cloudOnly = 0

    public init() {}

    /// Counts one file.
    public mutating func add(_ i: MetadataItem) {
        files += 1
        bytes += Int64(i.size)
        if i.conflict { conflicts += 1 }
        if i.uploadError != nil || i.downloadError != nil { errors += 1 }
        if i.uploading || i.downloading { transferring += 1 } else if !i.uploaded || i.status == .downloaded { waiting += 1 }
        if i.status == .notDownloaded { cloudOnly += 1 }
    }

    /// Takes one file back out (its state before a change).
    public mutating func remove(_ i: MetadataItem) {
        var one = FolderSummary()
        one.add(i)
        files -= one.files; bytes -= one.bytes; conflicts -= one.conflicts; errors -= one.errors
        transferring -= one.transferring; waiting -= one.waiting; cloudOnly -= one.cloudOnly
    }

    /// The folder's status glyph role: what needs the user first, as for a file.
    public var status: String {
        if errors > 0 { return "status.error" }
        if transferring > 0 { return "status.downloading" }
        if waiting > 0 { return "status.queued" }
        if files > 0 && cloudOnly == files { return "status.cloud" }
        return "status.synced"
    }

    /// The status in words (the details pane's state line).
    public var stateWords: String {
        var w: String
        if errors > 0 { w = "\(errors) file\(errors == 1 ? "" : "s") inside with errors" } else if transferring > 0 { w = "\(transferring) moving" }
        else if waiting > 0 { w = "\(waiting) waiting" } else if files > 0 && cloudOnly == files { w = "everything in the cloud only" }
        else { w = files == 0 ? "empty" : "everything up to date" }
        if conflicts > 0 { w += "; \(conflicts) in conflict" }
        return w
    }

    /// "12 files, 3.4 MB; 1 conflict, 2 in the cloud only" (the details pane).
    public var description: String {
        var parts = ["\(files) file\(files == 1 ? "" : "s"), \(ByteSize.format(bytes))"]
        var notes: [String] = []
        if conflicts > 0 { notes.append("\(conflicts) in conflict") }
        if errors > 0 { notes.append("\(errors) with errors") }
        if transferring > 0 { notes.append("\(transferring) moving") }
        if waiting > 0 { notes.append("\(waiting) waiting") }
        if cloudOnly > 0 { notes.append(cloudOnly == files ? "all in the cloud only" : "\(cloudOnly) in the cloud only") }
        if !notes.isEmpty { parts.append(notes.joined(separator: ", ")) }
        return parts.joined(separator: "; ")
    }
}
