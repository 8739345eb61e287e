#ifndef UBIQ_FILE_SUPPORT_H
#define UBIQ_FILE_SUPPORT_H

#include <stdint.h>

/// Asks the kernel to start writing `len` bytes at `offset` of `fd` to disk without waiting
/// (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so a later fsync has less left to do.
/// A hint only: returns 0, or -1 with errno set; callers still fsync.
int ubiq_start_writeback(int fd, int64_t offset, int64_t len);

/// Renames `from` to `to` only if nothing exists at `to` (Linux `renameat2(RENAME_NOREPLACE)`):
/// 0, or -1 with errno set (EEXIST when something is there; EINVAL or ENOSYS when the file
/// system or kernel cannot do it).
int ubiq_rename_noreplace(const char *from, const char *to);

/// Swaps `a` and `b` atomically (Linux `renameat2(RENAME_EXCHANGE)`); both must exist.
/// 0, or -1 with errno set (EINVAL or ENOSYS when unsupported).
int ubiq_rename_exchange(const char *a, const char *b);

#endif
