/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store.c - the store of learned profiles (--treematch=learn, `treematch
 * store`): one entry per application and scale, kept in a directory only its
 * user may read, so that later runs are placed without naming anything.
 *
 * The key: the executable's identity (its ELF build id, read with libelf,
 * or the SHA-256 of its content when it has none: a script, a stripped
 * build), the rank count and an optional name the user gives. The entry's
 * files are named by the first 8 bytes of the SHA-256 of the key (16 hex
 * digits; version 1 used FNV-1a for both, and its entries are still found
 * and moved, migrate_v1). Version 3 checksums with XXH3 (64 bits) what
 * versions 1 and 2 checksummed with FNV-1a (words, the tail zero-padded),
 * still checked as such when their entries are read:
 *   STEM.compiled  the profile in its compiled form (profile/compiled.c),
 *              usable as any profile file (--treematch=STEM.compiled)
 *   STEM.meta  512 bytes, little-endian, written last (it commits the entry):
 *                0  "TMSTORE1"             8  version (3)   12  key kind
 *               16  ranks                  20  id length    24  id[32]
 *               56  name[64] (NUL-padded) 120  executable's path[256]
 *              376  .compiled size            384  .compiled checksum
 *              392  created (ns)          400  zeros       504  checksum of 0..504
 *              Its mtime is the entry's last use (least recently used goes
 *              first when the store is over its cap).
 * Writers (put, forget, gc) hold an exclusive flock on DIR/.lock, readers a
 * shared one: a reader never sees a new .compiled with an old .meta. A put
 * writes both files in full to temporary names (.STEM.compiled.XXXXXX,
 * .STEM.meta.XXXXXX) and fsyncs them, then, under the lock, removes the old
 * .meta, renames the profile in and the .meta last, and fsyncs the
 * directory: a full file system leaves no entry and no temporary, a crash at
 * most a profile without its .meta, which is never an entry and which the
 * next gc removes. An entry whose .meta or .compiled does not check is
 * removed, and the caller is told in one line. A step that learns records
 * into .rec-JOB.STEP.yml, which srun stores and removes when the step ends.
 *
 * The directory is the user's, mode 0700. It is opened once, walking its
 * path from "/" through descriptors: every directory on the way must be
 * root's or the user's and not writable by others unless it is sticky, a
 * link on the way must be root's or the user's, the store itself a
 * directory (O_NOFOLLOW); everything after goes through that descriptor
 * (openat, renameat, unlinkat, fstatat), so nobody can move it under the
 * user's feet. Clean-up removes only names of the store's own patterns. A
 * site store's per-user directory (DIR/UID) is made by root
 * (tmatch_profile_store_make_user_dir) when the site directory is root's.
 */
#include "profile/profile_private.h"
#include "treematch/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <nettle/sha2.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define META_SIZE 512
/* 1: the FNV-1a keys (stem_v1), read and moved to 3; 2: the SHA-256 keys
   with FNV-1a checksums, read as they are */
#define META_VERSION 3u
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
#define MAX_NOTES     (1 << 20)           /* bytes of one note segment or section */
#define MAX_PHDRS     4096
#define MAX_SHDRS     65536

/* ---- the key ------------------------------------------------------------ */

/* FNV-1a of bytes: the names and content ids the store's format 1 gave its
   entries (stem_v1, content_id), computed only to find those entries. An
   identity, not a checksum: it cannot change without losing them. */
static uint64_t fnv_bytes(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * TMATCH__FNV_PRIME;
	return h;
}

/*
 * The GNU build id among the notes of d (libelf's, in the host's byte
 * order): 1 and the id when found, 0 when none, -1 when a note overruns
 * the notes (a truncated note, a name or description larger than what
 * holds it). `where` names the segment or section in the message.
 */
static int notes_build_id(Elf_Data *d, const char *exe, const char *where, unsigned char *id,
                          int *id_len, tmatch_error_t *err)
{
	size_t off = 0, next, name_at, desc_at;
	GElf_Nhdr nh;

	while (off < d->d_size) {
		next = gelf_getnote(d, off, &nh, &name_at, &desc_at);
		if (next == 0) {
			if (d->d_size - off < sizeof(nh)) /* the alignment's padding */
				return 0;
			return tmatch_error_set(
			    err, EINVAL, exe, 0, 0,
			    "a malformed ELF file: the note at byte %zu of its %s "
			    "overruns it",
			    off, where);
		}
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(ELF_NOTE_GNU) &&
		    !memcmp((const char *)d->d_buf + name_at, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) &&
		    nh.n_descsz >= 8 && nh.n_descsz <= TMATCH_STORE_ID_MAX) {
			memcpy(id, (const char *)d->d_buf + desc_at, nh.n_descsz);
			*id_len = (int)nh.n_descsz;
			return 1;
		}
		off = next;
	}
	return 0;
}

/*
 * The ELF build id of fd (libelf: either byte order, either class), from
 * its PT_NOTE segments, else its SHT_NOTE sections: 1 and the id when
 * found; 0 when fd is not an ELF file or has none (the caller hashes its
 * content); -1 with err when it starts as an ELF file that libelf cannot
 * read or whose notes are malformed. At most MAX_PHDRS program and
 * MAX_SHDRS section headers and MAX_NOTES bytes of one note segment or
 * section are looked at; larger ones are skipped.
 */
static int elf_build_id(int fd, const char *exe, unsigned char *id, int *id_len,
                        tmatch_error_t *err)
{
	unsigned char magic[SELFMAG];
	size_t n, i;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	int rc = 0;

	if (tmatch__pread_all(fd, magic, sizeof(magic), 0) < 0 ||
	    memcmp(magic, ELFMAG, SELFMAG) != 0)
		return 0;
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ, NULL)) ||
	    elf_kind(elf) != ELF_K_ELF) {
		rc = tmatch_error_set(err, EINVAL, exe, 0, 0, "a malformed ELF file (libelf: %s)",
		                      elf_errmsg(-1) ? elf_errmsg(-1) : "not an ELF object");
		elf_end(elf);
		return rc;
	}
	if (elf_getphdrnum(elf, &n) != 0 || n > MAX_PHDRS)
		goto bad;
	for (i = 0; i < n && rc == 0; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph))
			goto bad;
		if (ph.p_type != PT_NOTE || ph.p_filesz > MAX_NOTES)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
		                         ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (!d)
			goto bad;
		rc = notes_build_id(d, exe, "note segment", id, id_len, err);
	}
	if (rc == 0 && (elf_getshdrnum(elf, &n) != 0 || n > MAX_SHDRS))
		goto bad;
	while (rc == 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			goto bad;
		if (sh.sh_type != SHT_NOTE || sh.sh_size > MAX_NOTES)
			continue;
		if (!(d = elf_getdata(scn, NULL)))
			goto bad;
		rc = notes_build_id(d, exe, "note section", id, id_len, err);
	}
	elf_end(elf);
	return rc;
bad:
	tmatch_error_set(err, EINVAL, exe, 0, 0, "a malformed ELF file (libelf: %s)",
	                 elf_errmsg(-1) ? elf_errmsg(-1) : "too many headers");
	elf_end(elf);
	return -1;
}

/*
 * The file's content key: its SHA-256 (nettle), 32 bytes of id; and, in
 * the same pass, the id format 1 of the store gave it (two FNV-1a hashes
 * of the content and its size, 24 bytes), with which entries written then
 * are found (v1_id).
 */
static int content_id(int fd, const struct stat *st, const char *path,
                      tmatch_profile_store_key_t *key, tmatch_error_t *err)
{
	unsigned char *buf;
	uint64_t h1 = TMATCH__FNV_BASIS, h2 = TMATCH__FNV_BASIS ^ 0x5bd1e995u, off = 0;
	struct sha256_ctx sha;

	if ((uint64_t)st->st_size > MAX_EXE_BYTES)
		return tmatch_error_set(
		    err, EFBIG, path, 0, 0,
		    "larger than %llu GiB and without an ELF build id, so it is not "
		    "learned: link it with -Wl,--build-id",
		    (unsigned long long)(MAX_EXE_BYTES >> 30));
	if (!(buf = malloc(1 << 20)))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	sha256_init(&sha);
	while (off < (uint64_t)st->st_size) {
		size_t n = (uint64_t)st->st_size - off < (1 << 20) ? (size_t)(st->st_size - off)
		                                                   : (size_t)1 << 20;
		if (tmatch__pread_all(fd, buf, n, off) < 0) {
			free(buf);
			return tmatch_error_set(err, EIO, path, 0, 0, "cannot read it: %s",
			                        strerror(errno ? errno : EIO));
		}
		sha256_update(&sha, n, buf);
		h1 = fnv_bytes(h1, buf, n);
		h2 = fnv_bytes(h2, buf, n);
		off += n;
	}
	free(buf);
	sha256_digest(&sha, SHA256_DIGEST_SIZE, key->id);
	key->id_len = SHA256_DIGEST_SIZE;
	tmatch__put64(key->v1_id, h1);
	tmatch__put64(key->v1_id + 8, h2);
	tmatch__put64(key->v1_id + 16, (uint64_t)st->st_size);
	key->v1_id_len = 24;
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
	if ((rc = elf_build_id(fd, exe, key->id, &key->id_len, err)) == 1) {
		key->kind = TMATCH_STORE_KEY_BUILD_ID;
		rc = 0;
	} else if (rc == 0 && (rc = content_id(fd, &st, exe, key, err)) == 0)
		key->kind = TMATCH_STORE_KEY_CONTENT;
	close(fd);
	return rc;
}

/* The stem format 1 of the store gave a key: FNV-1a of its fields. */
static void stem_v1(const tmatch_profile_store_key_t *key, char *buf, size_t len)
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

/* key as format 1 of the store had it: its v1 id when it has one. */
static void key_v1(const tmatch_profile_store_key_t *key, tmatch_profile_store_key_t *v1)
{
	*v1 = *key;
	if (key->v1_id_len > 0) {
		memset(v1->id, 0, sizeof(v1->id));
		memcpy(v1->id, key->v1_id, (size_t)key->v1_id_len);
		v1->id_len = key->v1_id_len;
	}
	v1->v1_id_len = 0;
}

/* The first 8 bytes of the SHA-256 of the key's kind, ranks, id and name. */
void tmatch_profile_store_stem(const tmatch_profile_store_key_t *key, char *buf, size_t len)
{
	unsigned char w[12], d[SHA256_DIGEST_SIZE];
	struct sha256_ctx sha;
	uint64_t h = 0;

	tmatch__put32(w, (uint32_t)key->kind);
	tmatch__put32(w + 4, (uint32_t)key->ranks);
	tmatch__put32(w + 8, (uint32_t)key->id_len);
	sha256_init(&sha);
	sha256_update(&sha, sizeof(w), w);
	sha256_update(&sha, (size_t)key->id_len, key->id);
	sha256_update(&sha, strlen(key->name), (const uint8_t *)key->name);
	sha256_digest(&sha, sizeof(d), d);
	for (int i = 0; i < 8; i++)
		h = h << 8 | d[i];
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

struct tmatch_profile_store {
	int fd;              /* the store's directory, opened once */
	char path[PATH_MAX]; /* its name (links resolved): messages, other processes */
};

#define MAX_LINKS 40 /* symbolic links followed on the way, as the kernel allows */

/*
 * May a directory on the way to a store hold it? Whoever can write to it
 * can rename what is under it and put a link in its place; so it must be
 * root's or the caller's, and not writable by group or others unless it is
 * sticky (then only an entry's owner may rename or remove that entry).
 */
static int ancestor_ok(const struct stat *st, uid_t me)
{
	return (st->st_uid == 0 || st->st_uid == me) &&
	       (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX));
}

/* Why a directory failed ancestor_ok, and what fixes it (site: the admin's
   site directory itself). */
static int refuse_ancestor(const char *name, const struct stat *st, uid_t me, int site,
                           tmatch_error_t *err)
{
	if (st->st_uid != 0 && st->st_uid != me)
		return tmatch_error_set(err, EPERM, name, 0, 0, "%s belongs to uid %ld: %s",
		                        site ? "the site store"
		                             : "on the way to the profile "
		                               "store, this directory",
		                        (long)st->st_uid,
		                        site ? "the admin makes it root's (mode 755 or 1777)"
		                             : "use a directory only you or root can change");
	return tmatch_error_set(err, EPERM, name, 0, 0,
	                        "%s is writable by other users without the sticky bit (mode "
	                        "%04o): %s",
	                        site ? "the site store"
	                             : "on the way to the profile store, this "
	                               "directory",
	                        (unsigned)(st->st_mode & 07777),
	                        site ? "chmod 755 it (root makes each user's directory) or chmod "
	                               "1777 it"
	                             : "chmod go-w it, or use a directory only you can change");
}

/* dst = a "/" b, bounded; -1 when it does not fit. */
static int join(char *dst, size_t len, const char *a, const char *b)
{
	int n = snprintf(dst, len, "%s%s%s", a, a[0] && a[strlen(a) - 1] != '/' ? "/" : "", b);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * Opens the absolute path `path` as a directory one component at a time
 * from "/", through descriptors: every directory on the way passes
 * ancestor_ok (the last one is the caller's to judge); a symbolic link on
 * the way is followed only when root or the caller owns it (it then sits in
 * a directory nobody else can change); the last component must be a
 * directory itself, never a link. With `create`, missing components are
 * made, mode 0700. Returns the descriptor (O_DIRECTORY, opened with
 * O_NOFOLLOW) with its stat in *st and the path walked (links resolved) in
 * `walked`; -1 with err.
 */
static int walk(const char *path, int create, struct stat *st, char *walked, size_t wlen,
                tmatch_error_t *err)
{
	char todo[2 * PATH_MAX], rest[2 * PATH_MAX], comp[NAME_MAX + 1], target[PATH_MAX];
	uid_t me = geteuid();
	int fd = -1, links = 0, e;
	const char *p;

	memset(st, 0, sizeof(*st));
	if (!path || path[0] != '/')
		return tmatch_error_set(err, EINVAL, path, 0, 0,
		                        "the profile store must be an absolute path");
	if (strlen(path) >= PATH_MAX)
		return tmatch_error_set(err, ENAMETOOLONG, NULL, 0, 0,
		                        "the profile store's path is too long");
	snprintf(todo, sizeof(todo), "%s", path);
restart:
	if (fd >= 0)
		close(fd);
	if ((fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(fd, st) < 0) {
		e = errno;
		if (fd >= 0)
			close(fd);
		return tmatch_error_set(err, e, "/", 0, 0, "cannot open: %s", strerror(e));
	}
	snprintf(walked, wlen, "/");
	if (!ancestor_ok(st, me)) {
		close(fd);
		return refuse_ancestor("/", st, me, 0, err);
	}
	p = todo;
	for (;;) {
		size_t n;
		int last;
		struct stat lst;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			close(fd);
			return tmatch_error_set(err, ENAMETOOLONG, path, 0, 0,
			                        "a name in the store's path is too long");
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		last = p[strspn(p, "/")] == '\0';
		if (!strcmp(comp, "."))
			continue;
		if (fstatat(fd, comp, &lst, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT && create &&
		    strcmp(comp, "..") != 0) {
			if (mkdirat(fd, comp, 0700) < 0 && errno != EEXIST) {
				e = errno;
				close(fd);
				join(target, sizeof(target), walked, comp);
				return tmatch_error_set(err, e, target, 0, 0,
				                        "cannot create the profile store: %s",
				                        strerror(e));
			}
		}
		if (fstatat(fd, comp, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
			e = errno;
			close(fd);
			join(target, sizeof(target), walked, comp);
			return tmatch_error_set(err, e, target, 0, 0,
			                        "cannot use the profile store: %s", strerror(e));
		}
		if (S_ISLNK(lst.st_mode)) {
			ssize_t len;

			join(target, sizeof(target), walked, comp);
			if (last) {
				close(fd);
				return tmatch_error_set(
				    err, ENOTDIR, target, 0, 0,
				    "the profile store is not a directory (a link): remove it");
			}
			if (lst.st_uid != 0 && lst.st_uid != me) {
				close(fd);
				return tmatch_error_set(
				    err, EPERM, target, 0, 0,
				    "on the way to the profile store, a link of "
				    "uid %ld: use a path only you or root can change",
				    (long)lst.st_uid);
			}
			if (++links > MAX_LINKS ||
			    (len = readlinkat(fd, comp, target, sizeof(target) - 1)) <= 0) {
				close(fd);
				return tmatch_error_set(
				    err, ELOOP, path, 0, 0,
				    "the profile store's path has too many links");
			}
			target[len] = '\0';
			snprintf(rest, sizeof(rest), "%s", p);
			if ((size_t)snprintf(todo, sizeof(todo), "%s/%s", target, rest) >=
			    sizeof(todo)) {
				close(fd);
				return tmatch_error_set(err, ENAMETOOLONG, path, 0, 0,
				                        "the profile store's path is too long");
			}
			if (target[0] == '/')
				goto restart;
			p = todo;
			continue;
		}
		if (!S_ISDIR(lst.st_mode)) {
			close(fd);
			join(target, sizeof(target), walked, comp);
			return tmatch_error_set(
			    err, ENOTDIR, target, 0, 0,
			    "not a directory: the profile store cannot be under it");
		}
		e = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (e < 0 || fstat(e, st) < 0) {
			int en = errno;

			if (e >= 0)
				close(e);
			close(fd);
			join(target, sizeof(target), walked, comp);
			return tmatch_error_set(err, en, target, 0, 0,
			                        "cannot use the profile store: %s", strerror(en));
		}
		close(fd);
		fd = e;
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(walked, '/');

			if (slash && slash != walked)
				*slash = '\0';
			else
				snprintf(walked, wlen, "/");
		} else if (join(target, sizeof(target), walked, comp) < 0 ||
		           (size_t)snprintf(walked, wlen, "%s", target) >= wlen) {
			close(fd);
			return tmatch_error_set(err, ENAMETOOLONG, path, 0, 0,
			                        "the profile store's path is too long");
		}
		if (!last && !ancestor_ok(st, me)) {
			close(fd);
			return refuse_ancestor(walked, st, me, 0, err);
		}
	}
	return fd;
}

/* The store itself: the caller's, closed to everyone else. */
static int check_private(const char *dir, const struct stat *st, tmatch_error_t *err)
{
	if (st->st_uid != geteuid())
		return tmatch_error_set(err, EPERM, dir, 0, 0,
		                        "the store belongs to uid %ld, not to you: remove it or "
		                        "set another one",
		                        (long)st->st_uid);
	if (st->st_mode & 077)
		return tmatch_error_set(
		    err, EPERM, dir, 0, 0,
		    "the store is open to other users (mode %04o): chmod 700 it",
		    (unsigned)(st->st_mode & 07777));
	return 0;
}

static tmatch_profile_store_t *store_of(int fd, const char *walked, tmatch_error_t *err)
{
	tmatch_profile_store_t *s = calloc(1, sizeof(*s));

	if (!s) {
		close(fd);
		tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
		return NULL;
	}
	s->fd = fd;
	snprintf(s->path, sizeof(s->path), "%s", walked);
	return s;
}

tmatch_profile_store_t *tmatch_profile_store_open_path(const char *dir, unsigned flags,
                                                       tmatch_error_t *err)
{
	char walked[PATH_MAX];
	struct stat st;
	int fd;

	fd = walk(dir, (flags & TMATCH_STORE_CREATE) != 0, &st, walked, sizeof(walked), err);
	if (fd < 0)
		return NULL;
	if (check_private(walked, &st, err) < 0) {
		close(fd);
		return NULL;
	}
	return store_of(fd, walked, err);
}

/* The site directory, opened and checked: root's or the caller's, and
   closed to others unless sticky. -1 with err. */
static int open_site(const char *site, char *walked, size_t wlen, struct stat *st,
                     tmatch_error_t *err)
{
	int fd = walk(site, 0, st, walked, wlen, err);

	if (fd < 0) {
		if (errno == ENOENT)
			tmatch_error_set(
			    err, ENOENT, site, 0, 0,
			    "the site store does not exist: the admin creates it (mode "
			    "755: root makes each user's directory; or 1777)");
		return -1;
	}
	if (!ancestor_ok(st, geteuid())) {
		close(fd);
		return refuse_ancestor(site, st, geteuid(), 1, err);
	}
	return fd;
}

tmatch_profile_store_t *tmatch_profile_store_open(const char *site, const char *xdg,
                                                  const char *home, unsigned flags,
                                                  tmatch_error_t *err)
{
	char dir[PATH_MAX], walked[PATH_MAX], name[32];
	const char *base;
	struct stat st;
	int n, sfd, fd;

	if (site && *site) {
		if (site[0] != '/') {
			tmatch_error_set(err, EINVAL, site, 0, 0,
			                 "the site store must be an absolute path");
			return NULL;
		}
		if ((sfd = open_site(site, walked, sizeof(walked), &st, err)) < 0)
			return NULL;
		snprintf(name, sizeof(name), "%ld", (long)geteuid());
		if (join(dir, sizeof(dir), walked, name) < 0) {
			close(sfd);
			tmatch_error_set(err, ENAMETOOLONG, NULL, 0, 0,
			                 "the profile store's path is too long");
			return NULL;
		}
		/* made by root at the user's first step on a node; by the user
		   when the site directory lets them (1777) */
		if ((flags & TMATCH_STORE_CREATE) && mkdirat(sfd, name, 0700) < 0 &&
		    errno != EEXIST && errno != EACCES && errno != EPERM) {
			n = errno;
			close(sfd);
			tmatch_error_set(err, n, dir, 0, 0, "cannot create the profile store: %s",
			                 strerror(n));
			return NULL;
		}
		fd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		n = errno;
		close(sfd);
		if (fd < 0 && n == ENOENT) {
			tmatch_error_set(
			    err, ENOENT, dir, 0, 0,
			    "your directory in the site store is not made yet (root makes "
			    "it at your first step on a node)");
			return NULL;
		}
		if (fd < 0 || fstat(fd, &st) < 0) {
			n = errno;
			if (fd >= 0)
				close(fd);
			tmatch_error_set(
			    err, n == ELOOP ? ENOTDIR : n, dir, 0, 0,
			    n == ELOOP || n == ENOTDIR
			        ? "your directory in the site store is not a directory (a "
			          "link or a file): the admin removes it"
			        : "cannot use the profile store: %s",
			    strerror(n));
			return NULL;
		}
		if (check_private(dir, &st, err) < 0) {
			close(fd);
			return NULL;
		}
		return store_of(fd, dir, err);
	}
	base = xdg ? xdg : getenv("XDG_CACHE_HOME");
	if (base && base[0] == '/') {
		n = snprintf(dir, sizeof(dir), "%s/treematch/store", base);
	} else {
		struct passwd *pw;

		/* the caller's own environment and passwd entry; one who gives
		   home looks nothing up (the plugin's helper has no environment
		   and no NSS) */
		if (!home) {
			home = getenv("HOME");
			if ((!home || home[0] != '/') && (pw = getpwuid(geteuid())))
				home = pw->pw_dir;
		}
		if (!home || home[0] != '/') {
			tmatch_error_set(err, ENOENT, NULL, 0, 0,
			                 "no home directory for the profile store: set "
			                 "XDG_CACHE_HOME");
			return NULL;
		}
		n = snprintf(dir, sizeof(dir), "%s/.cache/treematch/store", home);
	}
	if (n < 0 || (size_t)n >= sizeof(dir)) {
		tmatch_error_set(err, ENAMETOOLONG, NULL, 0, 0,
		                 "the profile store's path is too long");
		return NULL;
	}
	return tmatch_profile_store_open_path(dir, flags, err);
}

int tmatch_profile_store_make_user_dir(const char *site, uid_t uid, gid_t gid, tmatch_error_t *err)
{
	char walked[PATH_MAX], name[32];
	struct stat st;
	int sfd, fd, e;

	if (!site || site[0] != '/')
		return tmatch_error_set(err, EINVAL, site, 0, 0,
		                        "the site store must be an absolute path");
	if ((sfd = open_site(site, walked, sizeof(walked), &st, err)) < 0)
		return -1;
	if (st.st_uid != 0 || geteuid() != 0) {
		close(sfd);
		return tmatch_error_set(err, EPERM, site, 0, 0,
		                        "only root makes users' directories in a site store of "
		                        "root's");
	}
	snprintf(name, sizeof(name), "%ld", (long)uid);
	if (mkdirat(sfd, name, 0700) < 0 && errno != EEXIST) {
		e = errno;
		close(sfd);
		return tmatch_error_set(err, e, site, 0, 0,
		                        "cannot make the directory of uid %ld: %s", (long)uid,
		                        strerror(e));
	}
	fd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	e = errno;
	close(sfd);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return tmatch_error_set(err, e, site, 0, 0, "the directory of uid %ld: %s",
		                        (long)uid, strerror(e));
	}
	/* made now by root (then given away), or the user's already */
	if (st.st_uid == 0 && uid != 0 && (fchown(fd, uid, gid) < 0 || fstat(fd, &st) < 0)) {
		e = errno;
		close(fd);
		return tmatch_error_set(err, e, site, 0, 0, "cannot give uid %ld its directory: %s",
		                        (long)uid, strerror(e));
	}
	if (st.st_uid != uid) {
		close(fd);
		return tmatch_error_set(err, EPERM, site, 0, 0,
		                        "the directory of uid %ld belongs to uid %ld (squatted): "
		                        "remove it",
		                        (long)uid, (long)st.st_uid);
	}
	if ((st.st_mode & 077) && fchmod(fd, 0700) < 0) {
		e = errno;
		close(fd);
		return tmatch_error_set(err, e, site, 0, 0,
		                        "cannot close the directory of uid %ld: %s", (long)uid,
		                        strerror(e));
	}
	close(fd);
	return 0;
}

const char *tmatch_profile_store_path(const tmatch_profile_store_t *s)
{
	return s ? s->path : NULL;
}

void tmatch_profile_store_close(tmatch_profile_store_t *s)
{
	if (!s)
		return;
	close(s->fd);
	free(s);
}

/* ---- the names in a store ------------------------------------------------ */

static int is_hex16(const char *p)
{
	for (int i = 0; i < 16; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return 0;
	return 1;
}

static int is_digits(const char *p, size_t n)
{
	if (n == 0 || n > 20)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	return 1;
}

/* ".XXXXXX" at p, as temp_name makes and mkstemp made: 1 if so. */
static int is_temp_suffix(const char *p)
{
	if (p[0] != '.' || strlen(p) != 7)
		return 0;
	for (int i = 1; i < 7; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') ||
		      (p[i] >= 'A' && p[i] <= 'Z')))
			return 0;
	return 1;
}

/* STEM.compiled (kind 1), STEM.meta (2), or neither (0). */
static int entry_file(const char *name)
{
	if (strlen(name) == 16 + strlen(PROF_EXT) && is_hex16(name) && !strcmp(name + 16, PROF_EXT))
		return 1;
	if (strlen(name) == 21 && is_hex16(name) && !strcmp(name + 16, ".meta"))
		return 2;
	return 0;
}

/* A temporary of put: .STEM.compiled.XXXXXX or .STEM.meta.XXXXXX. */
static int entry_temp(const char *name)
{
	size_t l = strlen(name);

	if (name[0] != '.' || l < 8)
		return 0;
	if (l == 1 + 16 + strlen(PROF_EXT) + 7 && is_hex16(name + 1) &&
	    !strncmp(name + 17, PROF_EXT, strlen(PROF_EXT)))
		return is_temp_suffix(name + 17 + strlen(PROF_EXT));
	if (l == 1 + 21 + 7 && is_hex16(name + 1) && !strncmp(name + 17, ".meta", 5))
		return is_temp_suffix(name + 22);
	return 0;
}

/* A recording, or the recorder's temporary of one: .rec-JOB.STEP.yml[.XXXXXX]. */
static int recording_file(const char *name)
{
	const char *p = name, *dot;

	if (strncmp(p, ".rec-", 5) != 0)
		return 0;
	p += 5;
	if (!(dot = strchr(p, '.')) || !is_digits(p, (size_t)(dot - p)))
		return 0;
	p = dot + 1;
	if (!(dot = strchr(p, '.')) || !is_digits(p, (size_t)(dot - p)) ||
	    strncmp(dot, ".yml", 4) != 0)
		return 0;
	return dot[4] == '\0' || is_temp_suffix(dot + 4);
}

int tmatch_profile_store_recording_name(uint64_t job_id, uint32_t step_id, char *buf, size_t len)
{
	int n = snprintf(buf, len, ".rec-%llu.%u.yml", (unsigned long long)job_id, step_id);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* ---- one entry ---------------------------------------------------------- */

static int lock_store(const tmatch_profile_store_t *s, int how, tmatch_error_t *err)
{
	struct stat st;
	int fd, e;

	fd = openat(s->fd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	if (fd < 0) {
		e = errno;
		return tmatch_error_set(err, e, s->path, 0, 0, "cannot lock the store (.lock): %s",
		                        strerror(e));
	}
	while (flock(fd, how) < 0) {
		if (errno != EINTR) {
			e = errno;
			close(fd);
			return tmatch_error_set(err, e, s->path, 0, 0,
			                        "cannot lock the store (.lock): %s", strerror(e));
		}
	}
	return fd;
}

/* A shared lock through a read-only descriptor (a reader that may not
   write: the plugin's helper); -1, and no lock, when there is no lock file. */
static int lock_store_readonly(const tmatch_profile_store_t *s)
{
	int fd = openat(s->fd, ".lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

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

/* The checksums of a .meta of version v and of its profile. */
static tmatch__sum_t meta_sum_algo(uint32_t v)
{
	return v >= 3 ? TMATCH__SUM_XXH3 : TMATCH__SUM_FNV1A;
}

/* A new temporary file ".NAME.XXXXXX" in the store (its name in tmp),
   opened for writing; -1 with err. */
static int temp_file(const tmatch_profile_store_t *s, const char *name, char *tmp, size_t len,
                     tmatch_error_t *err)
{
	static const char chars[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct timespec now;
	uint64_t x;
	int fd = -1;

	clock_gettime(CLOCK_MONOTONIC, &now);
	x = ((uint64_t)now.tv_nsec << 20) ^ (uint64_t)now.tv_sec ^ ((uint64_t)getpid() << 40) ^
	    (uint64_t)(uintptr_t)tmp;
	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		char suffix[7];

		for (int i = 0; i < 6; i++) {
			x = x * 6364136223846793005u + 1442695040888963407u;
			suffix[i] = chars[(x >> 33) % (sizeof(chars) - 1)];
		}
		suffix[6] = '\0';
		if ((size_t)snprintf(tmp, len, ".%s.%s", name, suffix) >= len)
			break;
		fd = openat(s->fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return tmatch_error_set(err, errno ? errno : EEXIST, s->path, 0, 0,
		                        "cannot write to the store: %s",
		                        strerror(errno ? errno : EEXIST));
	return fd;
}

static void sync_dir(const tmatch_profile_store_t *s)
{
	fsync(s->fd);
}

/* Reads and checks STEM.meta: 0 and the entry, or -1 with why. */
static int read_meta(const tmatch_profile_store_t *s, const char *stem,
                     tmatch_profile_store_entry_t *e, tmatch_error_t *err)
{
	unsigned char m[META_SIZE];
	char name[32], path[PATH_MAX + 32];
	struct stat st;
	int fd;

	memset(e, 0, sizeof(*e));
	memset(&st, 0, sizeof(st));
	snprintf(name, sizeof(name), "%s.meta", stem);
	snprintf(path, sizeof(path), "%s/%s", s->path, name);
	fd = openat(s->fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return tmatch_error_set(err, errno, path, 0, 0, "%s", strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != META_SIZE ||
	    tmatch__pread_all(fd, m, META_SIZE, 0) < 0) {
		close(fd);
		return tmatch_error_set(err, EPROTO, path, 0, 0,
		                        "not a store entry (size or type)");
	}
	close(fd);
	if (memcmp(m, meta_magic, sizeof(meta_magic)) != 0)
		return tmatch_error_set(err, EPROTO, path, 0, 0,
		                        "damaged (its checksum does not match)");
	if (tmatch__get32(m + OFF_VERSION) < 1 || tmatch__get32(m + OFF_VERSION) > META_VERSION)
		return tmatch_error_set(err, EPROTO, path, 0, 0,
		                        "written by another version of treematch (%u)",
		                        tmatch__get32(m + OFF_VERSION));
	if (tmatch__checksum(meta_sum_algo(tmatch__get32(m + OFF_VERSION)), m, OFF_HEADSUM) !=
	    tmatch__get64(m + OFF_HEADSUM))
		return tmatch_error_set(err, EPROTO, path, 0, 0,
		                        "damaged (its checksum does not match)");
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
	e->meta_sum = tmatch__get64(m + OFF_HEADSUM);
	e->created_ns = (int64_t)tmatch__get64(m + OFF_CREATED);
	e->used_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	snprintf(e->stem, sizeof(e->stem), "%s", stem);
	e->version = (int)tmatch__get32(m + OFF_VERSION);
	if (e->version == 1)
		stem_v1(&e->key, name, sizeof(name));
	else
		tmatch_profile_store_stem(&e->key, name, sizeof(name));
	if (strcmp(name, stem) != 0 || e->size > MAX_PROF)
		return tmatch_error_set(err, EPROTO, stem, 0, 0,
		                        "damaged (its key does not give its name)");
	return 0;
}

/* The .meta goes first: what is left is never an entry. */
static void remove_entry(const tmatch_profile_store_t *s, const char *stem)
{
	char name[32];

	snprintf(name, sizeof(name), "%s.meta", stem);
	unlinkat(s->fd, name, 0);
	snprintf(name, sizeof(name), "%s" PROF_EXT, stem);
	unlinkat(s->fd, name, 0);
}

static int same_key(const tmatch_profile_store_key_t *a, const tmatch_profile_store_key_t *b)
{
	return a->kind == b->kind && a->ranks == b->ranks && a->id_len == b->id_len &&
	       !memcmp(a->id, b->id, (size_t)a->id_len) && !strcmp(a->name, b->name);
}

/* The checksum (algo) of STEM.compiled, a regular file of size bytes: 0,
   or -1 with why. */
static int profile_sum(const tmatch_profile_store_t *s, const char *stem, uint64_t size,
                       tmatch__sum_t algo, uint64_t *sum, tmatch_error_t *why)
{
	char name[32];
	struct stat st;
	int fd, rc = 0;

	memset(&st, 0, sizeof(st));
	snprintf(name, sizeof(name), "%s" PROF_EXT, stem);
	fd = openat(s->fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return tmatch_error_set(why, EPROTO, NULL, 0, 0, "its profile is missing");
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != size)
		rc = tmatch_error_set(why, EPROTO, NULL, 0, 0, "its profile has another size");
	else if (tmatch__checksum_fd(fd, size, algo, sum) < 0)
		rc = tmatch_error_set(why, EPROTO, NULL, 0, 0,
		                      "its profile's checksum does not match");
	close(fd);
	return rc;
}

/*
 * The entry `stem` checked (its .meta, its key when `key` is given, the
 * version `want` of it when `want` is not 0, its profile's size and
 * checksum): 1 and *e; 0 when there is no .meta; -1 with why.
 */
static int check_entry(const tmatch_profile_store_t *s, const char *stem,
                       const tmatch_profile_store_key_t *key, uint64_t want,
                       tmatch_profile_store_entry_t *e, tmatch_error_t *why)
{
	uint64_t sum = 0;

	if (read_meta(s, stem, e, why) < 0)
		return errno == ENOENT ? 0 : -1;
	if (key && !same_key(&e->key, key))
		return tmatch_error_set(why, EPROTO, NULL, 0, 0,
		                        "another application's (hash collision)");
	if (want && e->meta_sum != want)
		return tmatch_error_set(why, ESTALE, NULL, 0, 0, "replaced since");
	if (profile_sum(s, stem, e->size, meta_sum_algo((uint32_t)e->version), &sum, why) < 0)
		return -1;
	if (sum != e->checksum)
		return tmatch_error_set(why, EPROTO, NULL, 0, 0,
		                        "its profile's checksum does not match");
	return 1;
}

static int entry_path(const tmatch_profile_store_t *s, const char *stem, char *path, size_t len,
                      tmatch_error_t *err)
{
	if ((size_t)snprintf(path, len, "%s/%s" PROF_EXT, s->path, stem) >= len)
		return tmatch_error_set(err, ENAMETOOLONG, s->path, 0, 0,
		                        "the store's path is too long");
	return 0;
}

static void make_meta(unsigned char *m, const tmatch_profile_store_key_t *key, const char *exe,
                      uint64_t size, uint64_t sum);

/*
 * Moves the format 1 entry `old` (checked, in *e) of key to key's stem
 * `stem`, under the writers' lock: a new .meta written whole first, the
 * old .meta removed, the profile renamed, the new .meta renamed in last
 * (a crash leaves at most a profile without its .meta, which gc removes).
 * 0 and the new entry in *e; -1 when it could not (the old one is kept).
 */
static int migrate_v1(const tmatch_profile_store_t *s, const char *old, const char *stem,
                      const tmatch_profile_store_key_t *key, tmatch_profile_store_entry_t *e)
{
	tmatch_profile_store_key_t v1;
	tmatch_profile_store_entry_t again;
	unsigned char m[META_SIZE];
	char tmp[64], from[32], to[32];
	tmatch_error_t why;
	uint64_t sum = 0;
	int lk, fd, rc = -1;

	if ((lk = lock_store(s, LOCK_EX, NULL)) < 0)
		return -1;
	tmatch_error_clear(&why);
	key_v1(key, &v1);
	/* another process may have moved or replaced it since it was read */
	if (check_entry(s, old, &v1, e->meta_sum, &again, &why) != 1)
		goto out;
	tmatch_error_clear(&why);
	if (check_entry(s, stem, NULL, 0, &again, &why) != 0)
		goto out;
	tmatch_error_clear(&why);
	/* the new .meta's version checksums the profile with XXH3 */
	if (profile_sum(s, old, e->size, TMATCH__SUM_XXH3, &sum, &why) < 0)
		goto out;
	make_meta(m, key, e->exe, e->size, sum);
	tmatch__put64(m + OFF_CREATED, (uint64_t)e->created_ns);
	tmatch__put64(m + OFF_HEADSUM, tmatch__checksum(TMATCH__SUM_XXH3, m, OFF_HEADSUM));
	snprintf(to, sizeof(to), "%s.meta", stem);
	if ((fd = temp_file(s, to, tmp, sizeof(tmp), &why)) < 0)
		goto out;
	if (tmatch__write_all(fd, m, META_SIZE) < 0 || fsync(fd) < 0) {
		close(fd);
		unlinkat(s->fd, tmp, 0);
		goto out;
	}
	close(fd);
	snprintf(from, sizeof(from), "%s.meta", old);
	unlinkat(s->fd, from, 0);
	snprintf(from, sizeof(from), "%s" PROF_EXT, old);
	snprintf(to, sizeof(to), "%s" PROF_EXT, stem);
	if (renameat(s->fd, from, s->fd, to) < 0) {
		unlinkat(s->fd, tmp, 0);
		goto out;
	}
	snprintf(to, sizeof(to), "%s.meta", stem);
	if (renameat(s->fd, tmp, s->fd, to) < 0) {
		unlinkat(s->fd, tmp, 0);
		goto out;
	}
	sync_dir(s);
	rc = 0; /* moved: *e becomes the new entry (its new version) */
	if (read_meta(s, stem, &again, &why) == 0)
		*e = again;
	else
		snprintf(e->stem, sizeof(e->stem), "%s", stem);
out:
	unlock_store(lk);
	return rc;
}

int tmatch_profile_store_get(const tmatch_profile_store_t *s, const tmatch_profile_store_key_t *key,
                             unsigned flags, char *path, size_t len,
                             tmatch_profile_store_entry_t *entry, tmatch_error_t *err)
{
	tmatch_profile_store_key_t v1;
	tmatch_profile_store_entry_t e;
	tmatch_error_t why;
	char stem[17], name[32], new_stem[17];
	int lk, rc;

	if (!s || !key || !path || len == 0)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_profile_store_get: NULL");
	tmatch_profile_store_stem(key, stem, sizeof(stem));
	snprintf(new_stem, sizeof(new_stem), "%s", stem);
	if (flags & TMATCH_STORE_READONLY)
		lk = lock_store_readonly(s);
	else if ((lk = lock_store(s, LOCK_SH, err)) < 0)
		return -1;
	tmatch_error_clear(&why);
	rc = check_entry(s, stem, key, 0, &e, &why);
	if (rc == 0) { /* an entry the store's format 1 wrote, under its key */
		key_v1(key, &v1);
		stem_v1(&v1, stem, sizeof(stem));
		tmatch_error_clear(&why);
		rc = check_entry(s, stem, &v1, 0, &e, &why);
	}
	unlock_store(lk);
	if (rc == 0)
		return 0;
	if (rc > 0 && e.version == 1 && !(flags & TMATCH_STORE_READONLY) &&
	    migrate_v1(s, stem, new_stem, key, &e) == 0)
		snprintf(stem, sizeof(stem), "%s", new_stem);
	if (rc < 0 && (flags & TMATCH_STORE_READONLY))
		return tmatch_error_set(err, EPROTO, s->path, 0, 0,
		                        "the stored profile %s is damaged: %s; not used", stem,
		                        why.msg);
	if (rc < 0) {
		/* removed under the writers' lock */
		if ((lk = lock_store(s, LOCK_EX, NULL)) >= 0) {
			remove_entry(s, stem);
			unlock_store(lk);
		}
		return tmatch_error_set(err, EPROTO, s->path, 0, 0,
		                        "discarded the stored profile %s: %s; it will be recorded "
		                        "again",
		                        stem, why.msg);
	}
	snprintf(name, sizeof(name), "%s.meta", stem);
	if (!(flags & TMATCH_STORE_READONLY))
		utimensat(s->fd, name, (const struct timespec[2]){{0, UTIME_OMIT}, {0, UTIME_NOW}},
		          AT_SYMLINK_NOFOLLOW);
	if (entry_path(s, stem, path, len, err) < 0)
		return -1;
	if (entry)
		*entry = e;
	return 1;
}

int tmatch_profile_store_find(const tmatch_profile_store_t *s, const char *stem, uint64_t meta_sum,
                              char *path, size_t len, tmatch_error_t *err)
{
	tmatch_profile_store_entry_t e;
	tmatch_error_t why;
	int lk, rc, e_no;

	if (!s || !stem || strlen(stem) != 16 || !is_hex16(stem) || !path || len == 0)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_profile_store_find: no store or no entry name");
	lk = lock_store_readonly(s);
	tmatch_error_clear(&why);
	rc = check_entry(s, stem, NULL, meta_sum, &e, &why);
	e_no = errno;
	unlock_store(lk);
	if (rc == 0)
		return tmatch_error_set(err, ENOENT, s->path, 0, 0, "the stored profile %s is gone",
		                        stem);
	if (rc < 0 && e_no == ESTALE)
		return tmatch_error_set(err, ESTALE, s->path, 0, 0,
		                        "the stored profile %s was replaced since it was chosen",
		                        stem);
	if (rc < 0)
		return tmatch_error_set(err, EPROTO, s->path, 0, 0,
		                        "the stored profile %s is damaged: %s", stem, why.msg);
	return entry_path(s, stem, path, len, err) < 0 ? -1 : 1;
}

/* The bytes of STEM.meta for key and a compiled profile of size and sum. */
static void make_meta(unsigned char *m, const tmatch_profile_store_key_t *key, const char *exe,
                      uint64_t size, uint64_t sum)
{
	struct timespec now;

	memset(m, 0, META_SIZE);
	memcpy(m, meta_magic, sizeof(meta_magic));
	tmatch__put32(m + OFF_VERSION, META_VERSION);
	tmatch__put32(m + OFF_KIND, (uint32_t)key->kind);
	tmatch__put32(m + OFF_RANKS, (uint32_t)key->ranks);
	tmatch__put32(m + OFF_IDLEN, (uint32_t)key->id_len);
	memcpy(m + OFF_ID, key->id, (size_t)key->id_len);
	snprintf((char *)m + OFF_NAME, 64, "%s", key->name);
	snprintf((char *)m + OFF_EXE, 256, "%s", exe ? exe : "");
	tmatch__put64(m + OFF_SIZE, size);
	tmatch__put64(m + OFF_SUM, sum);
	clock_gettime(CLOCK_REALTIME, &now);
	tmatch__put64(m + OFF_CREATED, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	tmatch__put64(m + OFF_HEADSUM, tmatch__checksum(TMATCH__SUM_XXH3, m, OFF_HEADSUM));
}

static int gc_locked(const tmatch_profile_store_t *s, uint64_t cap, const char *keep, int *removed,
                     tmatch_error_t *err);

/* Under the writers' lock: removes key's entry of the store's format 1,
   if there is one (a put has just replaced it). */
static void remove_v1(const tmatch_profile_store_t *s, const tmatch_profile_store_key_t *key)
{
	tmatch_profile_store_key_t v1;
	tmatch_profile_store_entry_t e;
	tmatch_error_t why;
	char stem[17];

	key_v1(key, &v1);
	stem_v1(&v1, stem, sizeof(stem));
	tmatch_error_clear(&why);
	if (read_meta(s, stem, &e, &why) == 0 && e.version == 1 && same_key(&e.key, &v1))
		remove_entry(s, stem);
}

int tmatch_profile_store_put(const tmatch_profile_store_t *s, const tmatch_profile_store_key_t *key,
                             int profile_fd, const char *name, const char *exe, uint64_t cap,
                             tmatch_error_t *err)
{
	unsigned char m[META_SIZE];
	char stem[17], base[32], tmp_prof[64] = "", tmp_meta[64] = "";
	struct stat st;
	uint64_t sum;
	int lk = -1, fd = -1, mfd = -1, rc = -1, e;
	tmatch_profile_t *p;
	FILE *f = NULL;

	if (!s || !key || profile_fd < 0)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_profile_store_put: NULL");
	/* the profile is checked (and compiled) before anything is stored */
	p = tmatch_profile_load_fd(profile_fd, name ? name : "profile", NULL, NULL, NULL, err);
	if (!p)
		return -1;
	if (tmatch_profile_ranks(p) != key->ranks) {
		rc = tmatch_error_set(err, EINVAL, name, 0, 0,
		                      "the profile has %d ranks, the run %d: not stored",
		                      tmatch_profile_ranks(p), key->ranks);
		tmatch_profile_destroy(p);
		return rc;
	}
	tmatch_profile_store_stem(key, stem, sizeof(stem));

	/* both files written in full beside the entry first: a full file
	   system or a crash here leaves no entry, only temporaries, removed */
	snprintf(base, sizeof(base), "%s" PROF_EXT, stem);
	if ((fd = temp_file(s, base, tmp_prof, sizeof(tmp_prof), err)) < 0)
		goto out;
	if (!(f = fdopen(fd, "w"))) {
		tmatch_error_set(err, errno, s->path, 0, 0, "cannot write to the store: %s",
		                 strerror(errno));
		goto out;
	}
	if (tmatch_profile_compile(p, f, err) < 0)
		goto out;
	if (fflush(f) != 0 || fsync(fd) < 0 || fstat(fd, &st) < 0 ||
	    tmatch__checksum_fd(fd, (uint64_t)st.st_size, TMATCH__SUM_XXH3, &sum) < 0) {
		// each call sets errno when it fails (EIO if one did not)
		// NOLINTNEXTLINE(clang-analyzer-unix.Errno)
		e = errno ? errno : EIO;
		tmatch_error_set(err, e, s->path, 0, 0, "cannot write to the store: %s",
		                 strerror(e));
		goto out;
	}
	make_meta(m, key, exe, (uint64_t)st.st_size, sum);
	snprintf(base, sizeof(base), "%s.meta", stem);
	if ((mfd = temp_file(s, base, tmp_meta, sizeof(tmp_meta), err)) < 0)
		goto out;
	if (tmatch__write_all(mfd, m, sizeof(m)) < 0 || fsync(mfd) < 0) {
		e = errno ? errno : EIO;
		tmatch_error_set(err, e, s->path, 0, 0, "cannot write to the store: %s",
		                 strerror(e));
		goto out;
	}

	/* then committed as a pair under the writers' lock: the old .meta
	   goes, the profile is renamed in, the .meta last */
	if ((lk = lock_store(s, LOCK_EX, err)) < 0)
		goto out;
	remove_entry(s, stem);
	snprintf(base, sizeof(base), "%s" PROF_EXT, stem);
	if (renameat(s->fd, tmp_prof, s->fd, base) < 0) {
		e = errno;
		tmatch_error_set(err, e, s->path, 0, 0, "cannot write to the store: %s",
		                 strerror(e));
		goto out;
	}
	tmp_prof[0] = '\0';
	snprintf(base, sizeof(base), "%s.meta", stem);
	if (renameat(s->fd, tmp_meta, s->fd, base) < 0) {
		e = errno;
		remove_entry(s, stem); /* never a profile without its .meta */
		tmatch_error_set(err, e, s->path, 0, 0, "cannot write to the store: %s",
		                 strerror(e));
		goto out;
	}
	tmp_meta[0] = '\0';
	remove_v1(s, key);
	sync_dir(s);
	rc = cap ? gc_locked(s, cap, stem, NULL, err) : 0;
out:
	if (tmp_prof[0])
		unlinkat(s->fd, tmp_prof, 0);
	if (tmp_meta[0])
		unlinkat(s->fd, tmp_meta, 0);
	unlock_store(lk);
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	if (mfd >= 0)
		close(mfd);
	tmatch_profile_destroy(p);
	return rc;
}

/* Removes the step's recording and the recorder's temporaries of it. */
static void drop_recording(const tmatch_profile_store_t *s, const char *name)
{
	DIR *dp;
	struct dirent *d;
	size_t l = strlen(name);
	int dfd = openat(s->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	unlinkat(s->fd, name, 0);
	if (dfd < 0 || !(dp = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((d = readdir(dp)))
		if (!strncmp(d->d_name, name, l) && is_temp_suffix(d->d_name + l))
			unlinkat(s->fd, d->d_name, 0);
	closedir(dp);
}

int tmatch_profile_store_take_recording(const tmatch_profile_store_t *s,
                                        const tmatch_profile_store_key_t *key, uint64_t job_id,
                                        uint32_t step_id, const char *exe, uint64_t cap,
                                        tmatch_error_t *err)
{
	char name[64], path[PATH_MAX + 64];
	struct stat st;
	int fd, rc;

	if (!s || !key ||
	    tmatch_profile_store_recording_name(job_id, step_id, name, sizeof(name)) < 0)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_profile_store_take_recording: NULL");
	snprintf(path, sizeof(path), "%s/%s", s->path, name);
	fd = openat(s->fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT) {
		drop_recording(s, name);
		return 0;
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = tmatch_error_set(err, fd < 0 ? errno : EINVAL, path, 0, 0,
		                      "not a recording (a link or not a regular file)");
	} else {
		rc = tmatch_profile_store_put(s, key, fd, path, exe, cap, err);
		rc = rc < 0 ? -1 : 1;
	}
	if (fd >= 0)
		close(fd);
	drop_recording(s, name);
	return rc;
}

/* ---- the whole store ---------------------------------------------------- */

static int by_use(const void *a, const void *b)
{
	const tmatch_profile_store_entry_t *x = a, *y = b;
	return (x->used_ns > y->used_ns) - (x->used_ns < y->used_ns);
}

/* Every entry (damaged ones are skipped, counted in *damaged), by last use. */
static int list_entries(const tmatch_profile_store_t *s, tmatch_profile_store_entry_t **out, int *n,
                        int *damaged, int remove_damaged, tmatch_error_t *err)
{
	tmatch_profile_store_entry_t *v = NULL;
	struct dirent *d;
	DIR *dp;
	int cap = 0, count = 0, bad = 0, dfd;

	*out = NULL;
	*n = 0;
	dfd = openat(s->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(dp = fdopendir(dfd))) {
		int e = errno;

		if (dfd >= 0)
			close(dfd);
		return tmatch_error_set(err, e, s->path, 0, 0, "cannot read the store: %s",
		                        strerror(e));
	}
	while ((d = readdir(dp))) {
		char stem[17];
		tmatch_error_t why;

		if (entry_file(d->d_name) != 2)
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
		if (read_meta(s, stem, &v[count], &why) < 0) {
			if (remove_damaged)
				remove_entry(s, stem);
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

int tmatch_profile_store_list(const tmatch_profile_store_t *s, tmatch_profile_store_entry_t **out,
                              int *n, int *damaged, tmatch_error_t *err)
{
	int lk, rc;

	if (!s || !out || !n)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_profile_store_list: NULL");
	if ((lk = lock_store(s, LOCK_SH, err)) < 0)
		return -1;
	rc = list_entries(s, out, n, damaged, 0, err);
	unlock_store(lk);
	return rc;
}

int tmatch_profile_store_forget(const tmatch_profile_store_t *s, const char *prefix, int *removed,
                                tmatch_error_t *err)
{
	tmatch_profile_store_entry_t *v;
	int n, lk, i, count = 0;

	if (!s || !prefix || !*prefix)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "give an entry (its 16 hex digits, or their start)");
	if ((lk = lock_store(s, LOCK_EX, err)) < 0)
		return -1;
	if (list_entries(s, &v, &n, NULL, 0, err) < 0) {
		unlock_store(lk);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!strncmp(v[i].stem, prefix, strlen(prefix)) || !strcmp(v[i].key.name, prefix)) {
			remove_entry(s, v[i].stem);
			count++;
		}
	free(v);
	sync_dir(s);
	unlock_store(lk);
	if (removed)
		*removed = count;
	return 0;
}

#define TEMP_AGE      3600  /* a put's temporaries: written in seconds */
#define RECORDING_AGE 86400 /* a recording waits for its srun to end */

/*
 * With the writers' lock held: what interrupted writes left (a put's
 * temporaries older than an hour, a profile without its .meta, recordings
 * and the recorder's temporaries older than a day: their srun is gone),
 * damaged entries, then the least recently used entries but `keep` until
 * the store holds at most cap bytes. Only names of the store's own
 * patterns, regular files, are ever removed.
 */
static int gc_locked(const tmatch_profile_store_t *s, uint64_t cap, const char *keep, int *removed,
                     tmatch_error_t *err)
{
	tmatch_profile_store_entry_t *v;
	struct dirent *d;
	DIR *dp;
	uint64_t total = 0;
	int n, i, count = 0, dfd;
	time_t now = time(NULL);

	dfd = openat(s->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0 && (dp = fdopendir(dfd))) {
		while ((d = readdir(dp))) {
			struct stat st;
			int temp = entry_temp(d->d_name), rec = recording_file(d->d_name);

			if (!temp && !rec && entry_file(d->d_name) != 1)
				continue;
			if (fstatat(s->fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISREG(st.st_mode))
				continue;
			if (temp || rec) {
				if (st.st_mtime < now - (temp ? TEMP_AGE : RECORDING_AGE))
					unlinkat(s->fd, d->d_name, 0);
			} else {
				char meta[32];

				snprintf(meta, sizeof(meta), "%.16s.meta", d->d_name);
				if (fstatat(s->fd, meta, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
				    errno == ENOENT)
					unlinkat(s->fd, d->d_name, 0);
			}
		}
		closedir(dp);
	} else if (dfd >= 0) {
		close(dfd);
	}
	if (list_entries(s, &v, &n, NULL, 1, err) < 0)
		return -1;
	for (i = 0; i < n; i++)
		total += v[i].size + META_SIZE;
	for (i = 0; i < n && total > cap; i++) {
		if (keep && !strcmp(v[i].stem, keep))
			continue;
		remove_entry(s, v[i].stem);
		total -= v[i].size + META_SIZE;
		count++;
	}
	free(v);
	sync_dir(s);
	if (removed)
		*removed = count;
	return 0;
}

int tmatch_profile_store_gc(const tmatch_profile_store_t *s, uint64_t cap, int *removed,
                            tmatch_error_t *err)
{
	int lk, rc;

	if (!s)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "tmatch_profile_store_gc: NULL");
	if ((lk = lock_store(s, LOCK_EX, err)) < 0)
		return -1;
	rc = gc_locked(s, cap, NULL, removed, err);
	unlock_store(lk);
	return rc;
}
