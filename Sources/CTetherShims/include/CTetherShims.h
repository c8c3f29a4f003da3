#ifndef TETHER_SHIMS_H
#define TETHER_SHIMS_H
#include <sys/types.h>

/// The peer of a connected Unix socket (SO_PEERCRED, which needs _GNU_SOURCE and is not
/// visible through Swift's Glibc module). Returns 0, or -1 with errno set.
int tether_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// The supplementary groups of the peer of a connected Unix socket as the kernel recorded them
/// at connect(2) (SO_PEERGROUPS, Linux 4.13 and later). Writes up to `capacity` groups to
/// `groups` and returns how many the peer has — more than `capacity` means call again with a
/// larger buffer — or -1 with errno set (ENOPROTOOPT: the kernel does not know the option).
int tether_peer_groups(int fd, gid_t *groups, int capacity);

/// accept4(2) with SOCK_CLOEXEC. Returns the new descriptor, or -1 with errno set.
int tether_accept_cloexec(int fd);

/// Turns off the initial bulk page-cache allocation of every SQLite connection opened
/// afterwards (sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0); variadic, so not callable
/// from Swift): pages are then allocated as they are used. Must run before SQLite is
/// initialised (the first connection). Returns an SQLite result code (0 is SQLITE_OK).
int tether_sqlite_no_bulk_page_cache(void);

/// Makes closing the SQLite connection `db` (an `sqlite3 *`) leave the WAL as it is: no
/// checkpoint, the `-wal` and `-shm` files kept, even when it is the database's last connection
/// (sqlite3_db_config(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1); variadic, so not callable from
/// Swift). Returns an SQLite result code (0 is SQLITE_OK).
int tether_sqlite_no_checkpoint_on_close(void *db);

/// Copies the whole main database file (`journal` 0) or WAL file (`journal` 1) of the SQLite
/// connection `db` (an `sqlite3 *`) to the empty file open as `destination`, through the
/// descriptor SQLite itself holds: opening the file again and closing it would drop every POSIX
/// lock the process holds on it, SQLite's included. The descriptor is used only when the
/// connection's VFS is a unix one and the descriptor is the file at `path` (same device and
/// inode); then a reflink (FICLONE) where the filesystem shares extents, else
/// copy_file_range(2). Otherwise, or when the kernel refuses both, the file is read through
/// SQLite's own I/O methods. Returns how it copied (1 reflink, 2 copy_file_range, 3 SQLite
/// reads, 0 nothing to copy: no such file open), or -errno (or -1000 - an SQLite result code).
/// `copied` receives the bytes copied.
int tether_sqlite_copy_file(void *db, int journal, const char *path, int destination, long long *copied);

/// Caps glibc malloc at `arenas` arenas (mallopt(M_ARENA_MAX), declared in <malloc.h>, which
/// Swift's Glibc module does not include). Returns 1 on success, 0 on failure.
int tether_malloc_arena_max(int arenas);

/// Gives memory malloc holds free back to the system (malloc_trim(0), <malloc.h>). Returns 1
/// if some was released.
int tether_malloc_trim(void);

/// Compresses `length` bytes at `source` into a zlib stream (RFC 1950) at `destination`, which
/// holds `capacity` bytes, with zlib's `level` (1 fastest … 9 smallest). Returns the stream's
/// length, or -1 when it does not fit in `capacity` (the data does not compress) or zlib fails.
long tether_zlib_compress(const void *source, unsigned long length, void *destination, unsigned long capacity, int level);

/// Inflates the zlib stream of `length` bytes at `source` into `destination`, which must come
/// out exactly `expected` bytes. Returns 0, or -1 when the stream is damaged, its checksum fails,
/// or it inflates to any other length.
int tether_zlib_inflate(const void *source, unsigned long length, void *destination, unsigned long expected);

#endif
