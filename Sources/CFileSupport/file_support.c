#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <errno.h>
#include "file_support.h"

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

int ubiq_renameat(int fromdir, const char *from, int todir, const char *to, unsigned int flags) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, fromdir, from, todir, to, flags);
#else
    if (flags != 0) { errno = ENOSYS; return -1; }
    return renameat(fromdir, from, todir, to);
#endif
}

// MARK: folders beneath a root, no link followed

#include <string.h>
#include <stdint.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_SYMLINKS 0x04
#endif
#ifndef RESOLVE_BENEATH
#define RESOLVE_BENEATH 0x08
#endif

struct ubiq_open_how { uint64_t flags; uint64_t mode; uint64_t resolve; };

int ubiq_open_dir(const char *path) { return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC); }

int ubiq_open_beneath(int rootfd, const char *rel) {
    if (rel[0] == 0) return (int)fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
    struct ubiq_open_how how = { O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH };
    long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return (int)fd;
    // No openat2 (a kernel before 5.6, or a filter that refuses it): one component at a time.
    char buf[4096];
    size_t n = strlen(rel);
    if (n >= sizeof buf) { errno = ENAMETOOLONG; return -1; }
    memcpy(buf, rel, n + 1);
    int dir = (int)fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
    if (dir < 0) return -1;
    char *save = NULL;
    for (char *part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
        if (strcmp(part, "..") == 0 || strcmp(part, ".") == 0) { close(dir); errno = EXDEV; return -1; }
        int next = openat(dir, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int saved = errno;
        close(dir);
        if (next < 0) { errno = saved == ENOTDIR ? ELOOP : saved; return -1; }
        dir = next;
    }
    return dir;
}

// MARK: statx

#include <sys/stat.h>

int ubiq_stat_at(int dirfd, const char *path, ubiq_stat *out) {
    struct statx sx;
    if (statx(dirfd, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS | STATX_BTIME, &sx) != 0) return -1;
    out->mode = sx.stx_mode;
    out->ino = sx.stx_ino;
    out->size = (int64_t)sx.stx_size;
    out->mtime_ns = (int64_t)sx.stx_mtime.tv_sec * 1000000000LL + sx.stx_mtime.tv_nsec;
    out->ctime_ns = (int64_t)sx.stx_ctime.tv_sec * 1000000000LL + sx.stx_ctime.tv_nsec;
    out->btime_ns = (sx.stx_mask & STATX_BTIME) ? (int64_t)sx.stx_btime.tv_sec * 1000000000LL + sx.stx_btime.tv_nsec : 0;
    return 0;
}

// MARK: sequential writer

#include <stdlib.h>
#include <string.h>

#define UBIQ_BLOCK 4096

struct ubiq_writer {
    int fd;
    int direct;           // O_DIRECT is on for fd
    unsigned char *buf;   // UBIQ_BLOCK-aligned
    size_t cap;           // multiple of UBIQ_BLOCK
    size_t used;          // bytes in buf
    int64_t buf_offset;   // file offset of buf[0] (a multiple of UBIQ_BLOCK)
};

static int set_direct(int fd, int on) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    flags = on ? (flags | O_DIRECT) : (flags & ~O_DIRECT);
    return fcntl(fd, F_SETFL, flags);
}

static int write_fully(int fd, const unsigned char *p, size_t len, int64_t off) {
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0) { if (errno == EINTR) continue; return -1; }
        if (n == 0) { errno = EIO; return -1; }
        p += n; len -= (size_t)n; off += n;
    }
    return 0;
}

/// Writes buf[0..<len] at buf_offset; with O_DIRECT `len` must be a multiple of UBIQ_BLOCK. If
/// the file system refuses direct writes (EINVAL), falls back to plain writes for good.
static int write_out(ubiq_writer *w, size_t len) {
    if (w->direct) {
        if (write_fully(w->fd, w->buf, len, w->buf_offset) == 0) return 0;
        if (errno != EINVAL) return -1;
        w->direct = 0;
        if (set_direct(w->fd, 0) != 0) return -1;
    }
    return write_fully(w->fd, w->buf, len, w->buf_offset);
}

ubiq_writer *ubiq_writer_open(int fd, int64_t offset, size_t buffer_size) {
    size_t cap = (buffer_size + UBIQ_BLOCK - 1) / UBIQ_BLOCK * UBIQ_BLOCK;
    if (cap < UBIQ_BLOCK) cap = UBIQ_BLOCK;
    ubiq_writer *w = calloc(1, sizeof *w);
    if (!w) { errno = ENOMEM; return NULL; }
    if (posix_memalign((void **)&w->buf, UBIQ_BLOCK, cap) != 0) { free(w); errno = ENOMEM; return NULL; }
    w->fd = fd;
    w->cap = cap;
    w->buf_offset = offset / UBIQ_BLOCK * UBIQ_BLOCK;
    w->used = (size_t)(offset - w->buf_offset);
    // The head of the first block is the file's own bytes: read them back so rewriting the
    // block keeps them.
    size_t got = 0;
    while (got < w->used) {
        ssize_t n = pread(fd, w->buf + got, w->used - got, (off_t)(w->buf_offset + (int64_t)got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { if (n == 0) errno = EIO; free(w->buf); free(w); return NULL; }
        got += (size_t)n;
    }
    w->direct = set_direct(fd, 1) == 0;
    return w;
}

int ubiq_writer_write(ubiq_writer *w, const void *bytes, size_t len) {
    const unsigned char *p = bytes;
    while (len > 0) {
        size_t n = w->cap - w->used;
        if (n > len) n = len;
        memcpy(w->buf + w->used, p, n);
        w->used += n; p += n; len -= n;
        if (w->used == w->cap) {
            if (write_out(w, w->cap) != 0) return -1;
            w->buf_offset += (int64_t)w->cap;
            w->used = 0;
        }
    }
    return 0;
}

int ubiq_writer_finish(ubiq_writer *w) {
    int64_t end = w->buf_offset + (int64_t)w->used;
    if (w->used > 0) {
        size_t len = w->used;
        if (w->direct) {  // a whole last block, zero-padded, then cut back to the true end
            len = (w->used + UBIQ_BLOCK - 1) / UBIQ_BLOCK * UBIQ_BLOCK;
            memset(w->buf + w->used, 0, len - w->used);
        }
        if (write_out(w, len) != 0) return -1;
    }
    if (w->direct) {
        w->direct = 0;
        if (set_direct(w->fd, 0) != 0) return -1;
    }
    w->buf_offset = end;
    w->used = 0;
    return ftruncate(w->fd, (off_t)end);
}

int ubiq_writer_is_direct(const ubiq_writer *w) { return w->direct; }

int ubiq_write_whole(int fd, const void *buf, size_t padded, int64_t size) {
    if (set_direct(fd, 1) == 0) {
        int rc = write_fully(fd, buf, padded, 0);
        int saved = errno;
        if (set_direct(fd, 0) != 0) return -1;
        if (rc == 0) return ftruncate(fd, (off_t)size);
        if (saved != EINVAL) { errno = saved; return -1; }
    }
    // No direct I/O here: the bytes as they are (and nothing a refused direct write left past them).
    if (write_fully(fd, buf, (size_t)size, 0) != 0) return -1;
    return ftruncate(fd, (off_t)size);
}

void ubiq_writer_free(ubiq_writer *w) {
    if (!w) return;
    if (w->direct) set_direct(w->fd, 0);
    free(w->buf);
    free(w);
}

// MARK: direct reads

int ubiq_open_direct(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (fd < 0 && errno == EINVAL) fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd;
}

static int64_t read_fully(int fd, unsigned char *p, size_t len, int64_t off) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, p + done, len - done, (off_t)(off + (int64_t)done));
        if (n < 0) { if (errno == EINTR) continue; return -1; }
        if (n == 0) break;
        done += (size_t)n;
    }
    return (int64_t)done;
}

int64_t ubiq_read_aligned(int fd, void *dst, size_t len, int64_t offset) {
    int64_t got = read_fully(fd, dst, len, offset);
    if (got < 0 && errno == EINVAL) {
        int flags = fcntl(fd, F_GETFL);
        if (flags >= 0 && (flags & O_DIRECT)) {
            if (fcntl(fd, F_SETFL, flags & ~O_DIRECT) != 0) return -1;
            got = read_fully(fd, dst, len, offset);
        }
    }
    return got;
}

#include <malloc.h>

int ubiq_tune_malloc(void) {
    if (getenv("MALLOC_MMAP_THRESHOLD_") || getenv("MALLOC_TRIM_THRESHOLD_") || getenv("MALLOC_TOP_PAD_")) return 0;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
    return 1;
}

void ubiq_trim_memory(void) {
    ubiq_block_trim();
    malloc_trim(0);
}

int ubiq_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
