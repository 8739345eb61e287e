#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "file_support.h"

// Blocks of UBIQ_BLOCK_SIZE bytes, mapped once and handed out again and again. `all` lists every
// block this pool owns (so `free` can tell its blocks from the heap's); `idle` those not in use.
#define MAX_BLOCKS 64
#define MAX_IDLE 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *all[MAX_BLOCKS];
static int all_count;
static void *idle[MAX_BLOCKS];
static int idle_count;

static int owned(void *p) {
    for (int i = 0; i < all_count; i++) if (all[i] == p) return 1;
    return 0;
}

// A block mapped afresh (its pages are zeroed and faulted in on first use, once).
static void *map_block(void) {
    void *p = mmap(NULL, UBIQ_BLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void *take_block(void) {
    pthread_mutex_lock(&lock);
    if (idle_count > 0) {
        void *p = idle[--idle_count];
        pthread_mutex_unlock(&lock);
        return p;
    }
    if (all_count == MAX_BLOCKS) { pthread_mutex_unlock(&lock); return NULL; }
    void *p = map_block();
    if (!p) { pthread_mutex_unlock(&lock); return NULL; }
    all[all_count++] = p;
    pthread_mutex_unlock(&lock);
    return p;
}

// Returns 1 if `p` was one of the pool's blocks (now idle again, or unmapped past MAX_IDLE).
static int give_block(void *p) {
    pthread_mutex_lock(&lock);
    if (!owned(p)) { pthread_mutex_unlock(&lock); return 0; }
    if (idle_count < MAX_IDLE) {
        idle[idle_count++] = p;
    } else {
        for (int i = 0; i < all_count; i++) if (all[i] == p) { all[i] = all[--all_count]; break; }
        munmap(p, UBIQ_BLOCK_SIZE);
    }
    pthread_mutex_unlock(&lock);
    return 1;
}

static int pooled_size(size_t size) { return size >= UBIQ_BLOCK_MIN && size <= UBIQ_BLOCK_SIZE; }

void *ubiq_block_alloc(size_t size) {
    if (pooled_size(size)) { void *p = take_block(); if (p) return p; }
    return malloc(size ? size : 1);
}

void *ubiq_block_alloc_aligned(size_t size) {
    if (pooled_size(size)) { void *p = take_block(); if (p) return p; }
    void *p = NULL;
    return posix_memalign(&p, 4096, size ? size : 4096) == 0 ? p : NULL;
}

void ubiq_block_free(void *p) {
    if (p && !give_block(p)) free(p);
}

void *ubiq_block_realloc(void *p, size_t old_size, size_t new_size) {
    if (!p) return ubiq_block_alloc(new_size);
    pthread_mutex_lock(&lock);
    int mine = owned(p);
    pthread_mutex_unlock(&lock);
    if (mine && new_size <= UBIQ_BLOCK_SIZE) return p;  // a block holds UBIQ_BLOCK_SIZE already
    if (!mine && !pooled_size(new_size)) return realloc(p, new_size);
    void *q = ubiq_block_alloc(new_size);
    if (!q) return NULL;
    memcpy(q, p, old_size < new_size ? old_size : new_size);
    ubiq_block_free(p);
    return q;
}

void ubiq_block_copy(void *dst, const void *src, size_t count) { memcpy(dst, src, count); }

void ubiq_block_trim(void) {
    pthread_mutex_lock(&lock);
    while (idle_count > 0) {
        void *p = idle[--idle_count];
        for (int i = 0; i < all_count; i++) if (all[i] == p) { all[i] = all[--all_count]; break; }
        munmap(p, UBIQ_BLOCK_SIZE);
    }
    pthread_mutex_unlock(&lock);
}

int ubiq_block_stats(int *in_use, int *idle_out) {
    pthread_mutex_lock(&lock);
    *in_use = all_count - idle_count;
    *idle_out = idle_count;
    pthread_mutex_unlock(&lock);
    return all_count;
}
