#define _GNU_SOURCE
#include <zlib.h>
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

#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* The start of SQLite's unixFile (os_unix.c), unchanged since 2008: its descriptor follows
   the methods, the VFS and the inode record. Checked against `path` before any use. */
struct tether_unix_file_prefix {
    const sqlite3_io_methods *methods;
    sqlite3_vfs *vfs;
    void *inode;
    int fd;
};

static int tether_write_all(int fd, const char *bytes, size_t count) {
    while (count > 0) {
        ssize_t written = write(fd, bytes, count);
        if (written < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        bytes += written;
        count -= (size_t)written;
    }
    return 0;
}

int tether_sqlite_copy_file(void *db, int journal, const char *path, int destination, long long *copied) {
    *copied = 0;
    sqlite3_file *file = NULL;
    int op = journal ? SQLITE_FCNTL_JOURNAL_POINTER : SQLITE_FCNTL_FILE_POINTER;
    int rc = sqlite3_file_control((sqlite3 *)db, "main", op, &file);
    if (rc != SQLITE_OK) return -1000 - rc;
    if (file == NULL || file->pMethods == NULL) return 0;
    sqlite3_int64 size = 0;
    rc = file->pMethods->xFileSize(file, &size);
    if (rc != SQLITE_OK) return -1000 - rc;
    if (size == 0) return 0;

    sqlite3_vfs *vfs = NULL;
    int fd = -1;
    if (sqlite3_file_control((sqlite3 *)db, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) == SQLITE_OK && vfs != NULL &&
        vfs->zName != NULL && strncmp(vfs->zName, "unix", 4) == 0) {
        int candidate = ((struct tether_unix_file_prefix *)file)->fd;
        struct stat held, named;
        if (candidate >= 0 && fstat(candidate, &held) == 0 && stat(path, &named) == 0 && held.st_dev == named.st_dev &&
            held.st_ino == named.st_ino && S_ISREG(held.st_mode)) {
            fd = candidate;
        }
    }
    if (fd >= 0) {
        if (ioctl(destination, FICLONE, fd) == 0) {
            *copied = size;
            return 1;
        }
        loff_t from = 0, to = 0;
        int refused = 0;
        while (from < size) {
            ssize_t n = copy_file_range(fd, &from, destination, &to, (size_t)(size - from), 0);
            if (n < 0) {
                if (errno == EINTR) continue;
                if (from == 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == EPERM)) {
                    refused = 1;
                    break;
                }
                return -errno;
            }
            if (n == 0) break; /* shorter than it was: the rest is not there */
        }
        if (!refused) {
            *copied = from;
            return 2;
        }
    }
    /* SQLite's own reads, a megabyte at a time. */
    enum { chunk = 1 << 20 };
    char *buffer = sqlite3_malloc(chunk);
    if (buffer == NULL) return -ENOMEM;
    sqlite3_int64 offset = 0;
    while (offset < size) {
        int n = (int)((size - offset) < chunk ? (size - offset) : chunk);
        rc = file->pMethods->xRead(file, buffer, n, offset);
        if (rc != SQLITE_OK) {
            sqlite3_free(buffer);
            return -1000 - rc;
        }
        int failed = tether_write_all(destination, buffer, (size_t)n);
        if (failed != 0) {
            sqlite3_free(buffer);
            return failed;
        }
        offset += n;
    }
    sqlite3_free(buffer);
    *copied = offset;
    return 3;
}

int tether_malloc_arena_max(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}

int tether_malloc_trim(void) {
    return malloc_trim(0);
}

long tether_zlib_compress(const void *source, unsigned long length, void *destination, unsigned long capacity, int level) {
    uLongf written = capacity;
    if (compress2(destination, &written, source, length, level) != Z_OK) return -1;
    return (long)written;
}

int tether_zlib_inflate(const void *source, unsigned long length, void *destination, unsigned long expected) {
    z_stream stream = {0};
    stream.next_in = (Bytef *)source;
    stream.avail_in = (uInt)length;
    stream.next_out = destination;
    stream.avail_out = (uInt)expected;
    if (inflateInit(&stream) != Z_OK) return -1;
    int result = inflate(&stream, Z_FINISH);
    unsigned long produced = stream.total_out;
    unsigned long consumed = stream.total_in;
    inflateEnd(&stream);
    return result == Z_STREAM_END && produced == expected && consumed == length ? 0 : -1;
}
