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
