/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store.c - the store of learned profiles (--treematch=learn, `treematch
 * store`): one entry per application and scale, kept in a directory only its
 * user may read, so that later runs are placed without naming anything.
 *
 * The key: the executable's identity (its ELF build id, or a hash of its
 * content with its size when it has none: a script, a stripped build), the
 * rank count and an optional name the user gives. The entry's files are named
 * by a hash of the key (16 hex digits):
 *   STEM.compiled  the profile in its compiled form (profile/compiled.c),
 *              usable as any profile file (--treematch=STEM.compiled)
 *   STEM.meta  512 bytes, little-endian, written last (it commits the entry):
 *                0  "TMSTORE1"             8  version (1)   12  key kind
 *               16  ranks                  20  id length    24  id[32]
 *               56  name[64] (NUL-padded) 120  executable's path[256]
 *              376  .compiled size            384  .compiled checksum (FNV-1a words)
 *              392  created (ns)          400  zeros       504  checksum of 0..504
 *              Its mtime is the entry's last use (least recently used goes
 *              first when the store is over its cap).
 * Writers (put, forget, gc) hold an exclusive flock on DIR/.lock, readers a
 * shared one: a reader never sees a new .compiled with an old .meta. Files are
 * written to a temporary name, fsynced and renamed, then the directory is
 * fsynced. An entry whose .meta or .compiled does not check is removed, and the
 * caller is told in one line.
 */
#include "profile/profile_private.h"
#include "treematch/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define META_SIZE    512
#define META_VERSION 1u
static const unsigned char meta_magic[8] = {'T', 'M', 'S', 'T', 'O', 'R', 'E', '1'};
#define OFF_VERSION   8
#define OFF_KIND      12
#define OFF_RANKS     16
#define OFF_IDLEN     20
#define OFF_ID        24
#define OFF_NAME      56
#define OFF_EXE       120
#define OFF_SIZE      376
#define OFF_SUM       384
#define OFF_CREATED   392
#define OFF_HEADSUM   504
#define MAX_PROF      ((uint64_t)1 << 32) /* a stored profile: 4 GiB */
#define PROF_EXT      ".compiled"
#define MAX_EXE_BYTES ((uint64_t)8 << 30) /* content-hashed executables */
#define MAX_NOTES     (1 << 20)           /* bytes of one PT_NOTE segment */
#define MAX_PHDRS     4096

/* ---- the key ------------------------------------------------------------ */

static uint64_t fnv_bytes(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * TMATCH__FNV_PRIME;
	return h;
}

/* The little-endian ELF64 / ELF32 build id of fd, 1 if found, 0 if none. */
static int elf_build_id(int fd, const struct stat *st, unsigned char *id, int *id_len)
{
	unsigned char eh[64], ph[56];
	unsigned char *notes = NULL;
	uint64_t phoff;
	unsigned phnum, phentsize, i;
	int is64, found = 0;

	if (tmatch__pread_all(fd, eh, sizeof(eh), 0) < 0 || memcmp(eh, "\177ELF", 4) != 0 ||
	    (eh[4] != 1 && eh[4] != 2) || eh[5] != 1)
		return 0;
	is64 = eh[4] == 2;
	phoff = is64 ? tmatch__get64(eh + 32) : tmatch__get32(eh + 28);
	phentsize = (unsigned)(is64 ? eh[54] | eh[55] << 8 : eh[42] | eh[43] << 8);
	phnum = (unsigned)(is64 ? eh[56] | eh[57] << 8 : eh[44] | eh[45] << 8);
	if (phnum > MAX_PHDRS || phentsize < (is64 ? 56u : 32u) || phoff > (uint64_t)st->st_size)
		return 0;
	for (i = 0; i < phnum && !found; i++) {
		uint64_t off, size, p;

		if (tmatch__pread_all(fd, ph, is64 ? 56 : 32, phoff + (uint64_t)i * phentsize) < 0)
			return 0;
		if (tmatch__get32(ph) != 4) /* PT_NOTE */
			continue;
		off = is64 ? tmatch__get64(ph + 8) : tmatch__get32(ph + 4);
		size = is64 ? tmatch__get64(ph + 32) : tmatch__get32(ph + 16);
		if (size < 12 || size > MAX_NOTES || off > (uint64_t)st->st_size ||
		    size > (uint64_t)st->st_size - off)
			continue;
		if (!(notes = malloc(size)))
			return 0;
		if (tmatch__pread_all(fd, notes, size, off) < 0) {
			free(notes);
			return 0;
		}
		for (p = 0; p + 12 <= size;) {
			uint64_t namesz = tmatch__get32(notes + p),
			         descsz = tmatch__get32(notes + p + 4);
			uint32_t type = tmatch__get32(notes + p + 8);
			uint64_t name_at = p + 12,
			         desc_at = name_at + ((namesz + 3) & ~(uint64_t)3);

			if (desc_at > size || descsz > size - desc_at)
				break;
			if (type == 3 && namesz == 4 && !memcmp(notes + name_at, "GNU", 4) &&
			    descsz >= 8 && descsz <= TMATCH_STORE_ID_MAX) {
				memcpy(id, notes + desc_at, descsz);
				*id_len = (int)descsz;
				found = 1;
				break;
			}
			p = desc_at + ((descsz + 3) & ~(uint64_t)3);
		}
		free(notes);
		notes = NULL;
	}
	return found;
}

/* Two FNV-1a hashes of the whole file and its size: 24 bytes of id. */
static int content_id(int fd, const struct stat *st, const char *path, unsigned char *id,
                      int *id_len, tmatch_error_t *err)
{
	unsigned char *buf;
	uint64_t h1 = TMATCH__FNV_BASIS, h2 = TMATCH__FNV_BASIS ^ 0x5bd1e995u, off = 0;

	if ((uint64_t)st->st_size > MAX_EXE_BYTES)
		return tmatch_error_set(
		    err, EFBIG, path, 0, 0,
		    "larger than %llu GiB and without an ELF build id, so it is not "
		    "learned: link it with -Wl,--build-id",
		    (unsigned long long)(MAX_EXE_BYTES >> 30));
	if (!(buf = malloc(1 << 20)))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	while (off < (uint64_t)st->st_size) {
		size_t n = (uint64_t)st->st_size - off < (1 << 20) ? (size_t)(st->st_size - off)
		                                                   : (size_t)1 << 20;
		if (tmatch__pread_all(fd, buf, n, off) < 0) {
			free(buf);
			return tmatch_error_set(err, EIO, path, 0, 0, "cannot read it: %s",
			                        strerror(errno ? errno : EIO));
		}
		h1 = fnv_bytes(h1, buf, n);
		h2 = fnv_bytes(h2, buf, n);
		off += n;
	}
	free(buf);
	tmatch__put64(id, h1);
	tmatch__put64(id + 8, h2);
	tmatch__put64(id + 16, (uint64_t)st->st_size);
	*id_len = 24;
	return 0;
}

int tmatch_profile_store_key(const char *exe, int ranks, const char *name,
                             tmatch_profile_store_key_t *key, tmatch_error_t *err)
{
	struct stat st;
	int fd, rc = 0;

	if (!exe || !key || ranks < 1)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_profile_store_key: no executable or no ranks");
	if (name && strlen(name) >= sizeof(key->name))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "the application name is longer than %zu characters",
		                        sizeof(key->name) - 1);
	memset(key, 0, sizeof(*key));
	key->ranks = ranks;
	if (name)
		strcpy(key->name, name);
	fd = open(exe, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return tmatch_error_set(err, errno, exe, 0, 0, "cannot open the executable: %s",
		                        strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return tmatch_error_set(err, EINVAL, exe, 0, 0, "not a regular file");
	}
	if (elf_build_id(fd, &st, key->id, &key->id_len))
		key->kind = TMATCH_STORE_KEY_BUILD_ID;
	else if ((rc = content_id(fd, &st, exe, key->id, &key->id_len, err)) == 0)
		key->kind = TMATCH_STORE_KEY_CONTENT;
	close(fd);
	return rc;
}

void tmatch_profile_store_stem(const tmatch_profile_store_key_t *key, char *buf, size_t len)
{
	unsigned char w[4];
	uint64_t h = TMATCH__FNV_BASIS;

	tmatch__put32(w, (uint32_t)key->kind);
	h = fnv_bytes(h, w, 4);
	tmatch__put32(w, (uint32_t)key->ranks);
	h = fnv_bytes(h, w, 4);
	h = fnv_bytes(h, key->id, (size_t)key->id_len);
	h = fnv_bytes(h, (const unsigned char *)key->name, strlen(key->name));
	snprintf(buf, len, "%016llx", (unsigned long long)h);
}

void tmatch_profile_store_key_format(const tmatch_profile_store_key_t *key, char *buf, size_t len)
{
	char hex[2 * TMATCH_STORE_ID_MAX + 1];
	int i;

	for (i = 0; i < key->id_len && i < TMATCH_STORE_ID_MAX; i++)
		snprintf(hex + 2 * i, 3, "%02x", key->id[i]);
	hex[2 * i] = '\0';
	snprintf(buf, len, "%s %s, %d ranks%s%s",
	         key->kind == TMATCH_STORE_KEY_BUILD_ID ? "build-id" : "content", hex, key->ranks,
	         key->name[0] ? ", name " : "", key->name);
}

/* ---- the directory ------------------------------------------------------ */

/* mkdir -p, mode 0700 for what it makes. */
static int make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* The user's own directory: a directory (not a link), theirs, 0700 or less. */
static int check_private(const char *dir, tmatch_error_t *err)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return tmatch_error_set(err, errno, dir, 0, 0, "cannot use the store: %s",
		                        strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return tmatch_error_set(
		    err, ENOTDIR, dir, 0, 0,
		    "the store is not a directory (a link or a file): remove it");
	if (st.st_uid != geteuid())
		return tmatch_error_set(
		    err, EPERM, dir, 0, 0,
		    "the store belongs to uid %ld, not to you: remove it or set "
		    "another one",
		    (long)st.st_uid);
	if (st.st_mode & 077)
		return tmatch_error_set(
		    err, EPERM, dir, 0, 0,
		    "the store is open to other users (mode %04o): chmod 700 it",
		    (unsigned)(st.st_mode & 07777));
	return 0;
}

int tmatch_profile_store_dir(const char *site, const char *xdg, const char *home, int create,
                             char *dir, size_t len, tmatch_error_t *err)
{
	const char *base;
	struct stat st;
	int n;

	if (!dir || len == 0)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_profile_store_dir: no buffer");
	if (site && *site) {
		if (site[0] != '/')
			return tmatch_error_set(err, EINVAL, site, 0, 0,
			                        "the site store must be an absolute path");
		if (stat(site, &st) < 0 || !S_ISDIR(st.st_mode))
			return tmatch_error_set(
			    err, ENOENT, site, 0, 0,
			    "the site store does not exist: the admin creates it "
			    "(mode 1777, or one 0700 directory per user)");
		/* others may write there: only with the sticky bit, so that
		   nobody can replace the user's own directory */
		if ((st.st_mode & 002) && !(st.st_mode & S_ISVTX))
			return tmatch_error_set(
			    err, EPERM, site, 0, 0,
			    "the site store is writable by everyone without the "
			    "sticky bit: chmod 1777 it");
		n = snprintf(dir, len, "%s/%ld", site, (long)geteuid());
	} else {
		base = xdg ? xdg : getenv("XDG_CACHE_HOME");
		if (base && base[0] == '/') {
			n = snprintf(dir, len, "%s/treematch/store", base);
		} else {
			struct passwd *pw;

			/* the caller's own environment and passwd entry; one who
			   gives home looks nothing up (the plugin's helper has no
			   environment and no NSS) */
			if (!home) {
				home = getenv("HOME");
				if ((!home || home[0] != '/') && (pw = getpwuid(geteuid())))
					home = pw->pw_dir;
			}
			if (!home || home[0] != '/')
				return tmatch_error_set(
				    err, ENOENT, NULL, 0, 0,
				    "no home directory for the profile store: set "
				    "XDG_CACHE_HOME");
			n = snprintf(dir, len, "%s/.cache/treematch/store", home);
		}
	}
	if (n < 0 || (size_t)n >= len)
		return tmatch_error_set(err, ENAMETOOLONG, NULL, 0, 0,
		                        "the profile store's path is too long");
	if (create && make_dirs(dir) < 0)
		return tmatch_error_set(err, errno, dir, 0, 0, "cannot create the store: %s",
		                        strerror(errno));
	return check_private(dir, err);
}

/* ---- one entry ---------------------------------------------------------- */

static int lock_store(const char *dir, int how, tmatch_error_t *err)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return tmatch_error_set(err, errno, path, 0, 0, "cannot lock the store: %s",
		                        strerror(errno));
	while (flock(fd, how) < 0) {
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return tmatch_error_set(err, e, path, 0, 0, "cannot lock the store: %s",
			                        strerror(e));
		}
	}
	return fd;
}

/* A shared lock through a read-only descriptor (a reader that may not
   write: the plugin's helper); -1, and no lock, when there is no lock file. */
static int lock_store_readonly(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/.lock", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd >= 0)
		while (flock(fd, LOCK_SH) < 0 && errno == EINTR)
			;
	return fd;
}

static void unlock_store(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* FNV-1a over the file's 8-byte words, the tail zero-padded to a word. */
static int file_checksum(int fd, uint64_t size, uint64_t *sum)
{
	unsigned char *buf = malloc(1 << 20);
	uint64_t h = TMATCH__FNV_BASIS, off = 0;

	if (!buf)
		return -1;
	while (off < size) {
		size_t n = size - off < (1 << 20) ? (size_t)(size - off) : (size_t)1 << 20;
		size_t padded = (n + 7) & ~(size_t)7;

		if (tmatch__pread_all(fd, buf, n, off) < 0) {
			free(buf);
			return -1;
		}
		memset(buf + n, 0, padded - n);
		h = tmatch__checksum(h, buf, padded);
		off += n;
	}
	free(buf);
	*sum = h;
	return 0;
}

static int write_file(const char *dir, const char *name, const void *buf, size_t len, int src_fd,
                      uint64_t src_len, tmatch_error_t *err)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	int fd, ok = 1;

	snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return tmatch_error_set(err, errno, dir, 0, 0, "cannot write to the store: %s",
		                        strerror(errno));
	if (buf)
		ok = tmatch__write_all(fd, buf, len) == 0;
	if (ok && src_fd >= 0) {
		unsigned char *chunk = malloc(1 << 20);
		uint64_t off = 0;

		ok = chunk != NULL;
		while (ok && off < src_len) {
			size_t n =
			    src_len - off < (1 << 20) ? (size_t)(src_len - off) : (size_t)1 << 20;
			ok = tmatch__pread_all(src_fd, chunk, n, off) == 0 &&
			     tmatch__write_all(fd, chunk, n) == 0;
			off += n;
		}
		free(chunk);
	}
	if (!ok || fsync(fd) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno ? errno : EIO;
		close(fd);
		unlink(tmp);
		return tmatch_error_set(err, e, dir, 0, 0, "cannot write to the store: %s",
		                        strerror(e));
	}
	return 0;
}

static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Reads and checks STEM.meta: 0 and the entry, or -1 with why. */
static int read_meta(const char *dir, const char *stem, tmatch_profile_store_entry_t *e,
                     tmatch_error_t *err)
{
	unsigned char m[META_SIZE];
	char path[PATH_MAX];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s.meta", dir, stem);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return tmatch_error_set(err, errno, path, 0, 0, "%s", strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != META_SIZE ||
	    tmatch__pread_all(fd, m, META_SIZE, 0) < 0) {
		close(fd);
		return tmatch_error_set(err, EPROTO, path, 0, 0,
		                        "not a store entry (size or type)");
	}
	close(fd);
	if (memcmp(m, meta_magic, sizeof(meta_magic)) != 0 ||
	    tmatch__checksum(TMATCH__FNV_BASIS, m, OFF_HEADSUM) != tmatch__get64(m + OFF_HEADSUM))
		return tmatch_error_set(err, EPROTO, path, 0, 0,
		                        "damaged (its checksum does not match)");
	if (tmatch__get32(m + OFF_VERSION) != META_VERSION)
		return tmatch_error_set(err, EPROTO, path, 0, 0,
		                        "written by another version of treematch (%u)",
		                        tmatch__get32(m + OFF_VERSION));
	memset(e, 0, sizeof(*e));
	e->key.kind = (int)tmatch__get32(m + OFF_KIND);
	e->key.ranks = (int)tmatch__get32(m + OFF_RANKS);
	e->key.id_len = (int)tmatch__get32(m + OFF_IDLEN);
	if ((e->key.kind != TMATCH_STORE_KEY_BUILD_ID && e->key.kind != TMATCH_STORE_KEY_CONTENT) ||
	    e->key.ranks < 1 || e->key.id_len < 1 || e->key.id_len > TMATCH_STORE_ID_MAX ||
	    m[OFF_NAME + 63] || m[OFF_EXE + 255])
		return tmatch_error_set(err, EPROTO, path, 0, 0,
		                        "damaged (a field is out of range)");
	memcpy(e->key.id, m + OFF_ID, (size_t)e->key.id_len);
	memcpy(e->key.name, m + OFF_NAME, 64);
	memcpy(e->exe, m + OFF_EXE, 256);
	e->size = tmatch__get64(m + OFF_SIZE);
	e->checksum = tmatch__get64(m + OFF_SUM);
	e->created_ns = (int64_t)tmatch__get64(m + OFF_CREATED);
	e->used_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	snprintf(e->stem, sizeof(e->stem), "%s", stem);
	tmatch_profile_store_stem(&e->key, path, sizeof(path));
	if (strcmp(path, stem) != 0 || e->size > MAX_PROF)
		return tmatch_error_set(err, EPROTO, stem, 0, 0,
		                        "damaged (its key does not give its name)");
	return 0;
}

static void remove_entry(const char *dir, const char *stem)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s.meta", dir, stem);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s" PROF_EXT, dir, stem);
	unlink(path);
}

static int same_key(const tmatch_profile_store_key_t *a, const tmatch_profile_store_key_t *b)
{
	return a->kind == b->kind && a->ranks == b->ranks && a->id_len == b->id_len &&
	       !memcmp(a->id, b->id, (size_t)a->id_len) && !strcmp(a->name, b->name);
}

int tmatch_profile_store_get(const char *dir, const tmatch_profile_store_key_t *key, unsigned flags,
                             char *path, size_t len, tmatch_error_t *err)
{
	tmatch_profile_store_entry_t e;
	tmatch_error_t why;
	char stem[17], prof[PATH_MAX];
	struct stat st;
	uint64_t sum;
	int lk, fd, bad = 0;

	tmatch_profile_store_stem(key, stem, sizeof(stem));
	if (flags & TMATCH_STORE_READONLY)
		lk = lock_store_readonly(dir);
	else if ((lk = lock_store(dir, LOCK_SH, err)) < 0)
		return -1;
	tmatch_error_clear(&why);
	snprintf(prof, sizeof(prof), "%s/%s.meta", dir, stem);
	if (access(prof, F_OK) < 0) {
		unlock_store(lk);
		return 0;
	}
	snprintf(prof, sizeof(prof), "%s/%s" PROF_EXT, dir, stem);
	if (read_meta(dir, stem, &e, &why) < 0) {
		bad = 1;
	} else if (!same_key(&e.key, key)) {
		bad = tmatch_error_set(&why, EPROTO, NULL, 0, 0,
		                       "another application's (hash collision)");
	} else if ((fd = open(prof, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0) {
		bad = tmatch_error_set(&why, errno, NULL, 0, 0, "its profile is missing");
	} else {
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != e.size)
			tmatch_error_set(&why, EPROTO, NULL, 0, 0, "its profile has another size");
		else if (file_checksum(fd, e.size, &sum) < 0 || sum != e.checksum)
			tmatch_error_set(&why, EPROTO, NULL, 0, 0,
			                 "its profile's checksum does not match");
		close(fd);
		bad = why.msg[0] != '\0';
	}
	unlock_store(lk);
	if (bad && (flags & TMATCH_STORE_READONLY))
		return tmatch_error_set(err, EPROTO, dir, 0, 0,
		                        "the stored profile %s is damaged: %s; not used", stem,
		                        why.msg);
	if (bad) {
		/* removed under the writers' lock, if it is still the same one */
		if ((lk = lock_store(dir, LOCK_EX, NULL)) >= 0) {
			remove_entry(dir, stem);
			unlock_store(lk);
		}
		return tmatch_error_set(err, EPROTO, dir, 0, 0,
		                        "discarded the stored profile %s: %s; it will be recorded "
		                        "again",
		                        stem, why.msg);
	}
	snprintf(prof, sizeof(prof), "%s/%s.meta", dir, stem);
	if (!(flags & TMATCH_STORE_READONLY))
		utimensat(AT_FDCWD, prof,
		          (const struct timespec[2]){{0, UTIME_OMIT}, {0, UTIME_NOW}}, 0);
	if ((size_t)snprintf(path, len, "%s/%s" PROF_EXT, dir, stem) >= len)
		return tmatch_error_set(err, ENAMETOOLONG, dir, 0, 0,
		                        "the store's path is too long");
	return 1;
}

int tmatch_profile_store_put(const char *dir, const tmatch_profile_store_key_t *key,
                             const char *profile, const char *exe, uint64_t cap,
                             tmatch_error_t *err)
{
	unsigned char m[META_SIZE];
	char stem[17], name[32];
	struct stat st;
	struct timespec now;
	uint64_t sum;
	int lk, fd, rc;
	tmatch_profile_t *p;
	FILE *tmp;

	if (!dir || !key || !profile)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_profile_store_put: NULL");
	/* the profile is checked (and compiled) before anything is stored */
	p = tmatch_profile_load(profile, NULL, NULL, NULL, err);
	if (!p)
		return -1;
	if (tmatch_profile_ranks(p) != key->ranks) {
		rc = tmatch_error_set(err, EINVAL, profile, 0, 0,
		                      "the profile has %d ranks, the run %d: not stored",
		                      tmatch_profile_ranks(p), key->ranks);
		tmatch_profile_destroy(p);
		return rc;
	}
	tmp = tmpfile();
	if (!tmp || tmatch_profile_compile(p, tmp, err) < 0 || fflush(tmp) != 0) {
		rc = tmp ? -1 : tmatch_error_set(err, errno, NULL, 0, 0, "no temporary file");
		if (tmp)
			fclose(tmp);
		tmatch_profile_destroy(p);
		return rc;
	}
	tmatch_profile_destroy(p);
	fd = fileno(tmp);
	if (fstat(fd, &st) < 0 || file_checksum(fd, (uint64_t)st.st_size, &sum) < 0) {
		fclose(tmp);
		return tmatch_error_set(err, EIO, NULL, 0, 0,
		                        "cannot read the compiled profile back");
	}

	memset(m, 0, sizeof(m));
	memcpy(m, meta_magic, sizeof(meta_magic));
	tmatch__put32(m + OFF_VERSION, META_VERSION);
	tmatch__put32(m + OFF_KIND, (uint32_t)key->kind);
	tmatch__put32(m + OFF_RANKS, (uint32_t)key->ranks);
	tmatch__put32(m + OFF_IDLEN, (uint32_t)key->id_len);
	memcpy(m + OFF_ID, key->id, (size_t)key->id_len);
	snprintf((char *)m + OFF_NAME, 64, "%s", key->name);
	snprintf((char *)m + OFF_EXE, 256, "%s", exe ? exe : "");
	tmatch__put64(m + OFF_SIZE, (uint64_t)st.st_size);
	tmatch__put64(m + OFF_SUM, sum);
	clock_gettime(CLOCK_REALTIME, &now);
	tmatch__put64(m + OFF_CREATED, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	tmatch__put64(m + OFF_HEADSUM, tmatch__checksum(TMATCH__FNV_BASIS, m, OFF_HEADSUM));

	tmatch_profile_store_stem(key, stem, sizeof(stem));
	if ((lk = lock_store(dir, LOCK_EX, err)) < 0) {
		fclose(tmp);
		return -1;
	}
	/* the old .meta goes first: a crash between the two renames leaves
	   no entry, never a new profile under an old description */
	remove_entry(dir, stem);
	snprintf(name, sizeof(name), "%s" PROF_EXT, stem);
	rc = write_file(dir, name, NULL, 0, fd, (uint64_t)st.st_size, err);
	fclose(tmp);
	snprintf(name, sizeof(name), "%s.meta", stem);
	if (rc == 0)
		rc = write_file(dir, name, m, sizeof(m), -1, 0, err);
	if (rc == 0) {
		sync_dir(dir);
		if (cap)
			rc = tmatch__store_gc_locked(dir, cap, stem, NULL, err);
	}
	unlock_store(lk);
	return rc;
}

/* ---- the whole store ---------------------------------------------------- */

static int by_use(const void *a, const void *b)
{
	const tmatch_profile_store_entry_t *x = a, *y = b;
	return (x->used_ns > y->used_ns) - (x->used_ns < y->used_ns);
}

/* Every entry (damaged ones are skipped, counted in *damaged), by last use. */
static int list_entries(const char *dir, tmatch_profile_store_entry_t **out, int *n, int *damaged,
                        int remove_damaged, tmatch_error_t *err)
{
	tmatch_profile_store_entry_t *v = NULL;
	struct dirent *d;
	DIR *dp = opendir(dir);
	int cap = 0, count = 0, bad = 0;

	*out = NULL;
	*n = 0;
	if (!dp)
		return tmatch_error_set(err, errno, dir, 0, 0, "cannot read the store: %s",
		                        strerror(errno));
	while ((d = readdir(dp))) {
		size_t l = strlen(d->d_name);
		char stem[17];
		tmatch_error_t why;

		if (l != 21 || strcmp(d->d_name + 16, ".meta") != 0)
			continue;
		memcpy(stem, d->d_name, 16);
		stem[16] = '\0';
		if (count == cap) {
			tmatch_profile_store_entry_t *w;
			cap = cap ? 2 * cap : 16;
			if (!(w = realloc(v, (size_t)cap * sizeof(*v)))) {
				free(v);
				closedir(dp);
				return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
			}
			v = w;
		}
		if (read_meta(dir, stem, &v[count], &why) < 0) {
			if (remove_damaged)
				remove_entry(dir, stem);
			bad++;
			continue;
		}
		count++;
	}
	closedir(dp);
	if (count)
		qsort(v, (size_t)count, sizeof(*v), by_use);
	*out = v;
	*n = count;
	if (damaged)
		*damaged = bad;
	return 0;
}

int tmatch_profile_store_list(const char *dir, tmatch_profile_store_entry_t **out, int *n,
                              int *damaged, tmatch_error_t *err)
{
	int lk = lock_store(dir, LOCK_SH, err), rc;

	if (lk < 0)
		return -1;
	rc = list_entries(dir, out, n, damaged, 0, err);
	unlock_store(lk);
	return rc;
}

int tmatch_profile_store_forget(const char *dir, const char *prefix, int *removed,
                                tmatch_error_t *err)
{
	tmatch_profile_store_entry_t *v;
	int n, lk, i, count = 0;

	if (!prefix || !*prefix)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "give an entry (its 16 hex digits, or their start)");
	if ((lk = lock_store(dir, LOCK_EX, err)) < 0)
		return -1;
	if (list_entries(dir, &v, &n, NULL, 0, err) < 0) {
		unlock_store(lk);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!strncmp(v[i].stem, prefix, strlen(prefix)) || !strcmp(v[i].key.name, prefix)) {
			remove_entry(dir, v[i].stem);
			count++;
		}
	free(v);
	sync_dir(dir);
	unlock_store(lk);
	if (removed)
		*removed = count;
	return 0;
}

int tmatch__store_gc_locked(const char *dir, uint64_t cap, const char *keep, int *removed,
                            tmatch_error_t *err)
{
	tmatch_profile_store_entry_t *v;
	struct dirent *d;
	DIR *dp;
	uint64_t total = 0;
	int n, i, count = 0;
	time_t now = time(NULL);

	/* leftovers: temporaries older than an hour, profiles without a .meta;
	   damaged entries go with the listing */
	if ((dp = opendir(dir))) {
		while ((d = readdir(dp))) {
			char path[PATH_MAX];
			struct stat st;
			size_t l = strlen(d->d_name);

			snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
			if (d->d_name[0] == '.' && l > 8 && lstat(path, &st) == 0 &&
			    S_ISREG(st.st_mode) && st.st_mtime < now - 3600 &&
			    strcmp(d->d_name, ".lock") != 0) {
				unlink(path);
			} else if (l == 16 + strlen(PROF_EXT) &&
			           !strcmp(d->d_name + 16, PROF_EXT)) {
				char meta[PATH_MAX];

				snprintf(meta, sizeof(meta), "%s/%.16s.meta", dir, d->d_name);
				if (access(meta, F_OK) < 0)
					unlink(path);
			}
		}
		closedir(dp);
	}
	if (list_entries(dir, &v, &n, NULL, 1, err) < 0)
		return -1;
	for (i = 0; i < n; i++)
		total += v[i].size + META_SIZE;
	for (i = 0; i < n && total > cap; i++) {
		if (keep && !strcmp(v[i].stem, keep))
			continue;
		remove_entry(dir, v[i].stem);
		total -= v[i].size + META_SIZE;
		count++;
	}
	free(v);
	sync_dir(dir);
	if (removed)
		*removed = count;
	return 0;
}

int tmatch_profile_store_gc(const char *dir, uint64_t cap, int *removed, tmatch_error_t *err)
{
	int lk = lock_store(dir, LOCK_EX, err), rc;

	if (lk < 0)
		return -1;
	rc = tmatch__store_gc_locked(dir, cap, NULL, removed, err);
	unlock_store(lk);
	return rc;
}
