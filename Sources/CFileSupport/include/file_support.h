#ifndef UBIQ_FILE_SUPPORT_H
#define UBIQ_FILE_SUPPORT_H

#include <spawn.h>
#include <stddef.h>
#include <stdint.h>

/// Makes a `posix_spawn` close every descriptor from `lowest` up in the child (glibc's
/// `posix_spawn_file_actions_addclosefrom_np`): sockets and files of the parent — which Swift
/// NIO does not open close-on-exec — are not handed to a program that outlives it. 0 or an
/// error number.
int ubiq_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/// Renames `from` to `to` only if nothing exists at `to` (Linux `renameat2(RENAME_NOREPLACE)`):
/// 0, or -1 with errno set (EEXIST when something is there; EINVAL or ENOSYS when the file
/// system or kernel cannot do it).
int ubiq_rename_noreplace(const char *from, const char *to);

/// Swaps `a` and `b` atomically (Linux `renameat2(RENAME_EXCHANGE)`); both must exist.
/// 0, or -1 with errno set (EINVAL or ENOSYS when unsupported).
int ubiq_rename_exchange(const char *a, const char *b);

/// `renameat2(2)`: `from` in the folder `fromdir` to `to` in `todir`, with `flags`
/// (`RENAME_NOREPLACE` 1, `RENAME_EXCHANGE` 2). 0, or -1 with errno set.
int ubiq_renameat(int fromdir, const char *from, int todir, const char *to, unsigned int flags);

/// Opens the folder at `path` as an `O_PATH` descriptor (links followed); -1 with errno set.
int ubiq_open_dir(const char *path);

/// Opens the folder `rel` (relative; "" for the root itself) beneath the folder `rootfd` as an
/// `O_PATH` descriptor without following any symbolic link on the way and without leaving the
/// root (`openat2` with `RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH`, or one `O_NOFOLLOW` component at
/// a time where the kernel lacks it). The descriptor, or -1 with errno set (`ELOOP` for a link).
int ubiq_open_beneath(int rootfd, const char *rel);

/// What the engine reads of a directory entry (`statx`, not following a symbolic link).
typedef struct {
    uint32_t mode;
    uint64_t ino;
    int64_t size;
    int64_t mtime_ns;
    int64_t ctime_ns;
    /// The file's birth time, or 0 where the file system does not record one.
    int64_t btime_ns;
} ubiq_stat;

/// `statx` of `path` relative to `dirfd` (AT_FDCWD for an absolute path), without following a
/// final symbolic link: 0, or -1 with errno set.
int ubiq_stat_at(int dirfd, const char *path, ubiq_stat *out);

/// A file written front to back through one aligned buffer. Where the file system allows it the
/// buffer goes to disk with O_DIRECT, bypassing the page cache (on this kind of machine copying
/// into the page cache costs ~2 s of CPU per GiB, O_DIRECT ~0.1 s); elsewhere (tmpfs, odd file
/// systems) plain writes are used. Either way the caller still fsyncs: O_DIRECT is not durability.
typedef struct ubiq_writer ubiq_writer;

/// A writer that appends to `fd` from `offset` on (bytes before `offset` are kept: the ones in
/// the same block are read back first). `buffer_size` is rounded up to 4 KiB. The caller keeps
/// owning `fd`. NULL (errno set) if memory or the read-back fails.
ubiq_writer *ubiq_writer_open(int fd, int64_t offset, size_t buffer_size);

/// Appends `len` bytes: 0, or -1 with errno set (the writer must then only be freed).
int ubiq_writer_write(ubiq_writer *w, const void *bytes, size_t len);

/// Writes what is buffered, leaves the file exactly `offset + bytes written` long and `fd`
/// without O_DIRECT: 0, or -1 with errno set. Does not fsync.
int ubiq_writer_finish(ubiq_writer *w);

/// True (1) if the writer bypasses the page cache.
int ubiq_writer_is_direct(const ubiq_writer *w);

/// Frees the writer (without writing what is buffered unless finished).
void ubiq_writer_free(ubiq_writer *w);

/// Writes a whole new file from aligned memory: `padded` bytes of `buf` (4096-aligned, a
/// multiple of 4096, zeros past `size`) at offset 0 with O_DIRECT where the file system allows
/// it (else just the `size` bytes, plainly), then leaves the file `size` bytes long and `fd`
/// without O_DIRECT. 0, or -1 with errno set. Does not fsync.
int ubiq_write_whole(int fd, const void *buf, size_t padded, int64_t size);

/// Opens `path` read-only, with O_DIRECT where the file system allows it (else plainly): a
/// descriptor for `ubiq_read_aligned`, or -1 with errno set.
int ubiq_open_direct(const char *path);

/// Reads `len` bytes at `offset` of `fd` into `dst` without a bounce buffer. With O_DIRECT on
/// `fd`, `dst`, `len` and `offset` must be multiples of 4096 (`dst` aligned to it); if the file
/// system refuses the direct read, O_DIRECT is cleared on `fd` and the read done plainly.
/// Returns the bytes read (fewer only at the end of the file), or -1 with errno set.
int64_t ubiq_read_aligned(int fd, void *dst, size_t len, int64_t offset);

/// Tunes glibc's allocator for buffers of several MiB allocated and freed at a high rate (the
/// chunk batches of a transfer): such blocks come from the heap instead of fresh `mmap`s (each
/// page of which the kernel zeroes and faults in again), and freed memory is kept for reuse up
/// to 128 MiB. Leaves the allocator alone if any `MALLOC_*_` tuning variable is set. Returns 1
/// if it tuned, 0 if not.
int ubiq_tune_malloc(void);

/// Gives the system back the memory the allocator holds free (`malloc_trim`), idle transfer
/// blocks included.
void ubiq_trim_memory(void);

// MARK: transfer blocks

/// The size of a transfer block: a chunk batch's request or answer (framing included) fits one.
#define UBIQ_BLOCK_SIZE ((size_t)16 << 20)
/// Buffers from this size up to `UBIQ_BLOCK_SIZE` are transfer blocks; others come from malloc.
#define UBIQ_BLOCK_MIN ((size_t)1 << 20)

/// Memory for a transfer buffer of `size` bytes. Between `UBIQ_BLOCK_MIN` and `UBIQ_BLOCK_SIZE`
/// it is a page-aligned block mapped once and reused after `ubiq_block_free`: glibc would map
/// such buffers afresh (or let its per-thread heaps come and go), and the kernel zeroes and
/// faults in every page of fresh memory again — measured as about 1 s of system CPU per 1 GiB
/// transferred. Other sizes come from malloc. NULL only if memory is exhausted.
void *ubiq_block_alloc(size_t size);
/// Like `ubiq_block_alloc`, but outside the block sizes the memory is aligned to 4096 bytes
/// (for direct I/O) too.
void *ubiq_block_alloc_aligned(size_t size);
/// Frees memory from `ubiq_block_alloc*` (a block goes back to the pool; up to 16 stay idle).
void ubiq_block_free(void *p);
/// Resizes memory from `ubiq_block_alloc` (`old_size` is its current size): a block already
/// holds `UBIQ_BLOCK_SIZE` bytes, so growing within it moves nothing.
void *ubiq_block_realloc(void *p, size_t old_size, size_t new_size);
/// memcpy, for allocator tables that want a function.
void ubiq_block_copy(void *dst, const void *src, size_t count);
/// Unmaps the idle blocks.
void ubiq_block_trim(void);
/// Blocks in use and idle (for tests and benchmarks); returns all blocks mapped.
int ubiq_block_stats(int *in_use, int *idle);

#endif
