import CFileSupport
@_spi(CustomByteBufferAllocator) import NIOCore

extension ByteBufferAllocator {
    /// Buffers for chunk batches on the wire (a request's body, a fetch's answer): those of
    /// 1–16 MiB are transfer blocks mapped once and reused (`ubiq_block_alloc`), not memory the
    /// kernel must zero and fault in again for every batch. `WireLimits.maxChunkBatchBody` keeps
    /// a batch within one block.
    public static let transfer = ByteBufferAllocator(
        allocate: { ubiq_block_alloc($0) },
        reallocate: { ubiq_block_realloc($0, $1, $2) },
        deallocate: { ubiq_block_free($0) },
        copy: { ubiq_block_copy($0, $1, $2) }
    )
}
