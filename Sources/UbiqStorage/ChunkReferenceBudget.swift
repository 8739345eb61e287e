import UbiqCore

/// What an account's file versions may cost in metadata. Quota counts the bytes of the distinct
/// chunks an account holds, but each version also stores its chunk list: one row per chunk
/// reference (about 100 bytes on disk), whether or not the chunk was ever uploaded and however
/// often one chunk repeats. Without a bound, commits of manifests with many tiny or repeated
/// chunks grew the database without touching the quota (#23 row 7: a 100,000-chunk manifest
/// with nothing uploaded cost 17 MB and no quota). So an account holds at most one chunk
/// reference per KiB of quota (and never fewer than `floor`): with the standard chunker
/// (32 KiB chunks on average) that is 32 times the quota in file versions, history included.
///
/// Rows without chunks cost too (#45 row 2: folders and empty files were free): each version
/// counts one entry besides its chunk references (`cost(of:)`), and each folder that is not
/// purged one (`folderCost`, counted by a database trigger as folders are made, trashed for good
/// or brought back). A container costs a row too, capped apart (`SQLMetadataStore.maxContainersPerAccount`).
public enum ChunkReferenceBudget {
    /// Bytes of quota that pay for one entry (a chunk reference, a version, a folder).
    public static let bytesPerReference: Int64 = 1024
    /// Entries every account may hold whatever its quota.
    public static let floor: Int64 = 65_536
    /// What a folder costs while it is live or in the trash.
    public static let folderCost = 1

    /// The entries an account with this quota may hold.
    public static func limit(quota: Int64) -> Int64 { max(floor, quota / bytesPerReference) }

    /// What a version with this manifest costs: its chunk references and the version itself
    /// (an empty file costs one).
    public static func cost(of manifest: Manifest) -> Int { manifest.chunks.count + 1 }

    /// Nil when `adding` more entries fit beside `held`; otherwise the `storage_full` error.
    public static func refusal(held: Int64, adding: Int, quota: Int64) -> StorageError? {
        let limit = limit(quota: quota)
        guard held + Int64(adding) > limit else { return nil }
        return StorageError(.storageFull, "storage full: the account's files and folders hold \(held) entries (chunk references, versions, folders) "
                                + "and this adds \(adding), past the \(limit) its quota allows (one per KiB); empty the trash or raise the quota")
    }
}
