#define _GNU_SOURCE
#include <malloc.h>
#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include "CTetherShims.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

int tether_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

int tether_peer_groups(int fd, gid_t *groups, int capacity) {
    if (capacity < 0) capacity = 0;
    socklen_t length = (socklen_t)((size_t)capacity * sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &length) != 0) {
        if (errno == ERANGE) return (int)(length / sizeof(gid_t));  /* the size needed */
        return -1;
    }
    return (int)(length / sizeof(gid_t));
}

int tether_accept_cloexec(int fd) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC);
}

#include <sqlite3.h>

int tether_sqlite_no_bulk_page_cache(void) {
    return sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
}

int tether_sqlite_no_checkpoint_on_close(void *db) {
    return sqlite3_db_config((sqlite3 *)db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

int tether_malloc_arena_max(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}

int tether_malloc_trim(void) {
    return malloc_trim(0);
}

#include <stdlib.h>
#include <unistd.h>

long long tether_sqlite_copy_main_file(void *db, int out) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control((sqlite3 *)db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == 0 ||
        file->pMethods == 0) {
        errno = EINVAL;
        return -1;
    }
    sqlite3_int64 size = 0;
    if (file->pMethods->xFileSize(file, &size) != SQLITE_OK) { errno = EIO; return -1; }
    const int chunk = 1 << 20;
    char *buffer = malloc(chunk);
    if (buffer == 0) { errno = ENOMEM; return -1; }
    for (sqlite3_int64 offset = 0; offset < size;) {
        int n = size - offset < chunk ? (int)(size - offset) : chunk;
        if (file->pMethods->xRead(file, buffer, n, offset) != SQLITE_OK) { free(buffer); errno = EIO; return -1; }
        for (int written = 0; written < n;) {
            ssize_t w = pwrite(out, buffer + written, (size_t)(n - written), (off_t)(offset + written));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) { int saved = errno; free(buffer); errno = saved; return -1; }
            written += (int)w;
        }
        offset += n;
    }
    free(buffer);
    return (long long)size;
}
