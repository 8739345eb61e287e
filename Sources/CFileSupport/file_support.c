#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <errno.h>
#include "file_support.h"

int ubiq_start_writeback(int fd, int64_t offset, int64_t len) {
#ifdef SYNC_FILE_RANGE_WRITE
    return sync_file_range(fd, (off_t)offset, (off_t)len, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)len;
    return 0;
#endif
}

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static int rename2(const char *from, const char *to, unsigned int flags) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags);
#else
    (void)from; (void)to; (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

int ubiq_rename_noreplace(const char *from, const char *to) { return rename2(from, to, RENAME_NOREPLACE); }

int ubiq_rename_exchange(const char *a, const char *b) { return rename2(a, b, RENAME_EXCHANGE); }
