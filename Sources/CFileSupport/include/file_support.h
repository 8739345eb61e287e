#ifndef UBIQ_FILE_SUPPORT_H
#define UBIQ_FILE_SUPPORT_H

#include <stdint.h>

/// Asks the kernel to start writing `len` bytes at `offset` of `fd` to disk without waiting
/// (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so a later fsync has less left to do.
/// A hint only: returns 0, or -1 with errno set; callers still fsync.
int ubiq_start_writeback(int fd, int64_t offset, int64_t len);

#endif
