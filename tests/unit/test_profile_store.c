/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_profile_store.c - the store of learned profiles (profile/store.c):
 * keys from build ids and from content, a stored profile read back as the
 * same matrix, damaged entries discarded with one line, least recently used
 * eviction, the directory's permissions and every directory on its way,
 * the attacks of issue 33 (a store swapped for a link after it was
 * checked, a site directory squatted by another user), clean-up that
 * removes only the store's own names, a full file system in the middle of
 * a put, and writers in parallel.
 */
#include "profile/profile.h"
#include "old_formats.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define EXAMPLES TMATCH_SRCDIR "/profile/examples/"

static char root[256], dir[1024];
static tmatch_profile_store_t *store;

static void setup(void)
{
	tmatch_error_t err;

	tm_mkdtemp(root, sizeof(root), "tm-store");
	setenv("XDG_CACHE_HOME", root, 1);
	memset(&err, 0, sizeof(err));
	store = tmatch_profile_store_open(NULL, NULL, NULL, TMATCH_STORE_CREATE, &err);
	cr_assert_not_null(store, "%s", err.msg);
	snprintf(dir, sizeof(dir), "%s", tmatch_profile_store_path(store));
}

static void teardown(void)
{
	tmatch_profile_store_close(store);
	tm_rmtree(root);
}

TestSuite(store, .init = setup, .fini = teardown);

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* A script (no build id) whose content is `text`, its path in buf. */
static const char *script(char *buf, size_t len, const char *name, const char *text)
{
	snprintf(buf, len, "%s/%s", root, name);
	write_text(buf, text);
	return buf;
}

static void key_of(const char *exe, int ranks, const char *name, tmatch_profile_store_key_t *k)
{
	tmatch_error_t err;

	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_key(exe, ranks, name, k, &err), 0, "%s", err.msg);
}

static void stem_of(const tmatch_profile_store_key_t *k, char *buf)
{
	tmatch_profile_store_stem(k, buf, 17);
	cr_assert_eq(strlen(buf), 16);
}

Test(store, keys_from_build_id_and_content)
{
	tmatch_profile_store_key_t a, b;
	char p1[PATH_MAX], p2[PATH_MAX], p3[PATH_MAX], s1[17], s2[17], text[256];

	/* this test program: linked with a GNU build id (Debian's default) */
	key_of("/proc/self/exe", 8, NULL, &a);
	cr_assert_eq(a.kind, TMATCH_STORE_KEY_BUILD_ID);
	cr_assert_geq(a.id_len, 8);
	tmatch_profile_store_key_format(&a, text, sizeof(text));
	cr_assert(strstr(text, "build-id ") == text && strstr(text, "8 ranks"), "%s", text);

	/* scripts: by content, not by path */
	key_of(script(p1, sizeof(p1), "a.sh", "#!/bin/sh\necho a\n"), 8, NULL, &a);
	key_of(script(p2, sizeof(p2), "b.sh", "#!/bin/sh\necho a\n"), 8, NULL, &b);
	cr_assert_eq(a.kind, TMATCH_STORE_KEY_CONTENT);
	stem_of(&a, s1);
	stem_of(&b, s2);
	cr_assert_str_eq(s1, s2, "same content, two paths");
	key_of(script(p3, sizeof(p3), "c.sh", "#!/bin/sh\necho b\n"), 8, NULL, &b);
	stem_of(&b, s2);
	cr_assert_str_neq(s1, s2, "other content");
	key_of(p1, 16, NULL, &b);
	stem_of(&b, s2);
	cr_assert_str_neq(s1, s2, "other rank count");
	key_of(p1, 8, "lmp", &b);
	stem_of(&b, s2);
	cr_assert_str_neq(s1, s2, "a name");
}

/* ---- ELF files written byte by byte ------------------------------------- */

/* v into p, n bytes, big-endian when be, else little-endian. */
static void put_n(unsigned char *p, int n, uint64_t v, int be)
{
	for (int i = 0; i < n; i++)
		p[be ? n - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

/* One note at p: namesz 4 ("GNU"), type 3 (NT_GNU_BUILD_ID), `idlen` bytes
   of id 0x10, 0x11, ...; namesz, when not 0, replaces the name's size. Its
   size in bytes. */
static size_t put_note(unsigned char *p, int be, int idlen, uint32_t namesz)
{
	put_n(p, 4, namesz ? namesz : 4, be);
	put_n(p + 4, 4, (uint64_t)idlen, be);
	put_n(p + 8, 4, 3, be);
	memcpy(p + 12, "GNU", 4);
	for (int i = 0; i < idlen; i++)
		p[16 + i] = (unsigned char)(0x10 + i);
	return 16 + (((size_t)idlen + 3) & ~(size_t)3);
}

static void write_bytes(const char *path, const unsigned char *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fwrite(b, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
}

/*
 * A big-endian ELF64 executable (s390x) whose one PT_NOTE segment holds a
 * build id of idlen bytes; the segment is `cut` bytes shorter than the note
 * and namesz replaces the note's name size when not 0. Its path in buf.
 */
static const char *elf64_be(char *buf, size_t len, const char *name, int idlen, size_t cut,
                            uint32_t namesz)
{
	unsigned char b[256] = {0x7f, 'E', 'L', 'F', 2 /* ELFCLASS64 */, 2 /* MSB */, 1};
	size_t note;

	put_n(b + 16, 2, 2, 1);  /* e_type: ET_EXEC */
	put_n(b + 18, 2, 22, 1); /* e_machine: EM_S390 */
	put_n(b + 20, 4, 1, 1);  /* e_version */
	put_n(b + 32, 8, 64, 1); /* e_phoff */
	put_n(b + 52, 2, 64, 1); /* e_ehsize */
	put_n(b + 54, 2, 56, 1); /* e_phentsize */
	put_n(b + 56, 2, 1, 1);  /* e_phnum */
	put_n(b + 58, 2, 64, 1); /* e_shentsize (no sections) */
	note = put_note(b + 120, 1, idlen, namesz);
	put_n(b + 64, 4, 4, 1);           /* p_type: PT_NOTE */
	put_n(b + 72, 8, 120, 1);         /* p_offset */
	put_n(b + 96, 8, note - cut, 1);  /* p_filesz */
	put_n(b + 104, 8, note - cut, 1); /* p_memsz */
	put_n(b + 112, 8, 4, 1);          /* p_align */
	snprintf(buf, len, "%s/%s", root, name);
	write_bytes(buf, b, 120 + note);
	return buf;
}

/* A little-endian ELF32 relocatable object (i386) with no program headers
   and one SHT_NOTE section holding a build id of idlen bytes. */
static const char *elf32_le(char *buf, size_t len, const char *name, int idlen)
{
	unsigned char b[256] = {0x7f, 'E', 'L', 'F', 1 /* ELFCLASS32 */, 1 /* LSB */, 1};
	size_t note = put_note(b + 52, 0, idlen, 0), sh = 52 + note;

	put_n(b + 16, 2, 1, 0);  /* e_type: ET_REL */
	put_n(b + 18, 2, 3, 0);  /* e_machine: EM_386 */
	put_n(b + 20, 4, 1, 0);  /* e_version */
	put_n(b + 32, 4, sh, 0); /* e_shoff */
	put_n(b + 40, 2, 52, 0); /* e_ehsize */
	put_n(b + 42, 2, 32, 0); /* e_phentsize */
	put_n(b + 46, 2, 40, 0); /* e_shentsize */
	put_n(b + 48, 2, 2, 0);  /* e_shnum: the null section and the note */
	/* section 1 (section 0 stays zero) */
	put_n(b + sh + 40 + 4, 4, 7, 0);     /* sh_type: SHT_NOTE */
	put_n(b + sh + 40 + 16, 4, 52, 0);   /* sh_offset */
	put_n(b + sh + 40 + 20, 4, note, 0); /* sh_size */
	put_n(b + sh + 40 + 32, 4, 4, 0);    /* sh_addralign */
	snprintf(buf, len, "%s/%s", root, name);
	write_bytes(buf, b, sh + 80);
	return buf;
}

static void assert_id(const tmatch_profile_store_key_t *k, int idlen)
{
	cr_assert_eq(k->kind, TMATCH_STORE_KEY_BUILD_ID, "kind %d: the build id was not read",
	             k->kind);
	cr_assert_eq(k->id_len, idlen);
	for (int i = 0; i < idlen; i++)
		cr_assert_eq(k->id[i], 0x10 + i, "byte %d of the id", i);
}

Test(store, build_ids_of_either_byte_order_and_class)
{
	tmatch_profile_store_key_t k;
	char p[PATH_MAX];

	/* 6461fa2's reader took a big-endian file for one without a build id */
	key_of(elf64_be(p, sizeof(p), "be64", 20, 0, 0), 4, NULL, &k);
	assert_id(&k, 20);
	key_of(elf32_le(p, sizeof(p), "le32.o", 16), 4, NULL, &k);
	assert_id(&k, 16);
	/* a build id longer than a key holds: the content, as before */
	key_of(elf64_be(p, sizeof(p), "long", TMATCH_STORE_ID_MAX + 4, 0, 0), 4, NULL, &k);
	cr_assert_eq(k.kind, TMATCH_STORE_KEY_CONTENT);
}

/* The build id readelf(1) prints for path, in hex, in buf ("" when none). */
static void readelf_id(const char *path, char *buf, size_t len)
{
	char cmd[PATH_MAX + 64], line[512], real[PATH_MAX];
	FILE *f;

	buf[0] = '\0';
	cr_assert_not_null(realpath(path, real), "%s",
	                   path); /* the shell's /proc/self is not ours */
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", real);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, "Build ID: ");

		if (at)
			snprintf(buf, len, "%.*s", (int)strcspn(at + 10, " \n"), at + 10);
	}
	pclose(f);
}

Test(store, build_ids_of_the_builds_own_binaries)
{
	const char *bins[] = {"/proc/self/exe", TMATCH_BUILDDIR "/bin/treematch",
	                      TMATCH_BUILDDIR "/libtreematch.so." TMATCH_VERSION};
	tmatch_profile_store_key_t k;
	char want[2 * TMATCH_STORE_ID_MAX + 1], got[2 * TMATCH_STORE_ID_MAX + 1];

	for (size_t b = 0; b < sizeof(bins) / sizeof(bins[0]); b++) {
		int i;

		readelf_id(bins[b], want, sizeof(want));
		cr_assert(want[0], "%s: readelf finds no build id", bins[b]);
		key_of(bins[b], 2, NULL, &k);
		cr_assert_eq(k.kind, TMATCH_STORE_KEY_BUILD_ID, "%s", bins[b]);
		for (i = 0; i < k.id_len; i++)
			snprintf(got + 2 * i, 3, "%02x", k.id[i]);
		got[2 * i] = '\0';
		cr_assert_str_eq(got, want, "%s", bins[b]);
	}
}

Test(store, malformed_elf_notes_are_refused_with_a_message)
{
	tmatch_profile_store_key_t k;
	tmatch_error_t err;
	char p[PATH_MAX];

	memset(&err, 0, sizeof(err));
	/* the description runs 8 bytes past its segment */
	elf64_be(p, sizeof(p), "truncated", 20, 8, 0);
	cr_assert_eq(tmatch_profile_store_key(p, 4, NULL, &k, &err), -1, "a truncated note read");
	cr_assert_str_eq(err.file, p);
	cr_assert(strstr(err.msg, "malformed ELF") && strstr(err.msg, "note segment"), "%s",
	          err.msg);
	/* a name of 4 GiB */
	elf64_be(p, sizeof(p), "huge-namesz", 20, 0, 0xffffff00u);
	cr_assert_eq(tmatch_profile_store_key(p, 4, NULL, &k, &err), -1, "a huge namesz read");
	cr_assert(strstr(err.msg, "malformed ELF"), "%s", err.msg);
	/* an ELF header cut short */
	snprintf(p, sizeof(p), "%s/short", root);
	write_bytes(p, (const unsigned char *)"\177ELF\002\002\001", 7);
	cr_assert_eq(tmatch_profile_store_key(p, 4, NULL, &k, &err), -1, "a cut header read");
	cr_assert(strstr(err.msg, "malformed ELF"), "%s", err.msg);
}

Test(store, key_errors_name_the_file)
{
	tmatch_profile_store_key_t k;
	tmatch_error_t err;
	char name[100];

	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_key(root, 4, NULL, &k, &err), -1);
	cr_assert_str_eq(err.file, root);
	cr_assert(strstr(err.msg, "not a regular file"), "%s", err.msg);
	cr_assert_eq(tmatch_profile_store_key("/nonexistent/x", 4, NULL, &k, &err), -1);
	cr_assert_eq(errno, ENOENT);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	cr_assert_eq(tmatch_profile_store_key("/proc/self/exe", 4, name, &k, &err), -1);
	cr_assert(strstr(err.msg, "name is longer"), "%s", err.msg);
}

/* The matrix of a profile file, as the mappers see it. */
static tmatch_comm_t *matrix_of(const char *path)
{
	tmatch_error_t err;
	tmatch_profile_t *p = tmatch_profile_load(path, NULL, NULL, NULL, &err);
	tmatch_comm_t *c;

	cr_assert_not_null(p, "%s: %s", path, err.msg);
	c = tmatch_profile_to_comm(p, tmatch_profile_placement_metric(p), TMATCH_PROFILE_P2P, &err);
	cr_assert_not_null(c, "%s", err.msg);
	tmatch_profile_destroy(p);
	return c;
}

/* The profiles at a and b have the same matrix. */
static void assert_same_matrix(const char *a_path, const char *b_path)
{
	tmatch_comm_t *a = matrix_of(a_path), *b = matrix_of(b_path);

	cr_assert_eq(tmatch_comm_order(a), tmatch_comm_order(b));
	for (int i = 0; i < tmatch_comm_order(a); i++)
		for (int j = 0; j < tmatch_comm_order(a); j++)
			cr_assert_eq(tmatch_comm_get(a, i, j), tmatch_comm_get(b, i, j));
	tmatch_comm_destroy(a);
	tmatch_comm_destroy(b);
}

/* put from a file, as the CLI does; -1 with err */
static int put_file(const tmatch_profile_store_t *s, const tmatch_profile_store_key_t *k,
                    const char *profile, const char *exe, uint64_t cap, tmatch_error_t *err)
{
	int fd = open(profile, O_RDONLY), rc;

	cr_assert_geq(fd, 0, "%s", profile);
	rc = tmatch_profile_store_put(s, k, fd, profile, exe, cap, err);
	close(fd);
	return rc;
}

static void put(const tmatch_profile_store_key_t *k, const char *profile, uint64_t cap)
{
	tmatch_error_t err;

	memset(&err, 0, sizeof(err));
	cr_assert_eq(put_file(store, k, profile, "/bin/app", cap, &err), 0, "%s", err.msg);
}

static int get(const tmatch_profile_store_key_t *k, char *path, tmatch_error_t *err)
{
	memset(err, 0, sizeof(*err));
	return tmatch_profile_store_get(store, k, 0, path, PATH_MAX, NULL, err);
}

Test(store, put_then_get_gives_the_same_matrix)
{
	tmatch_profile_store_key_t k;
	tmatch_error_t err;
	char path[PATH_MAX], exe[PATH_MAX];
	struct stat st;

	key_of(script(exe, sizeof(exe), "app", "x"), 8, NULL, &k);
	cr_assert_eq(get(&k, path, &err), 0, "empty store");
	put(&k, EXAMPLES "lammps-8.yml", 0);
	cr_assert_eq(get(&k, path, &err), 1, "%s", err.msg);
	assert_same_matrix(EXAMPLES "lammps-8.yml", path);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "entries are the user's only");
	cr_assert_eq(stat(dir, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0700);

	/* a profile of another rank count is not stored under this key */
	memset(&err, 0, sizeof(err));
	cr_assert_eq(put_file(store, &k, EXAMPLES "ring-4.yml", NULL, 0, &err), -1);
	cr_assert(strstr(err.msg, "4 ranks, the run 8"), "%s", err.msg);
}

/* ---- entries the store's formats 1 and 2 wrote (FNV-1a), built here ----- */

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/*
 * Writes, as the store's format `version` (1 or 2) did, the entry of kind,
 * ranks, id and name (no name: "") holding `profile` compiled as the
 * treematch of then compiled it (version 1 or 2 of the compiled profile,
 * FNV-1a sealed); its stem in stem: FNV-1a of the key (format 1), or the
 * one given (format 2: tmatch_profile_store_stem's).
 */
static void write_old_entry(int version, int kind, int ranks, const unsigned char *id, int idlen,
                            const char *name, const char *profile, const char *given_stem,
                            char stem[17])
{
	unsigned char w[4], m[512] = "TMSTORE1", *buf;
	uint64_t h = 0xcbf29ce484222325ULL;
	char path[PATH_MAX];
	tmatch_profile_t *p;
	tmatch_error_t err;
	size_t size, padded;
	FILE *f;

	if (given_stem) {
		snprintf(stem, 17, "%s", given_stem);
	} else {
		put_n(w, 4, (uint64_t)kind, 0);
		h = fnv1a(h, w, 4);
		put_n(w, 4, (uint64_t)ranks, 0);
		h = fnv1a(h, w, 4);
		h = fnv1a(h, id, (size_t)idlen);
		h = fnv1a(h, (const unsigned char *)name, strlen(name));
		snprintf(stem, 17, "%016llx", (unsigned long long)h);
	}

	memset(&err, 0, sizeof(err));
	p = tmatch_profile_load(profile, NULL, NULL, NULL, &err);
	cr_assert_not_null(p, "%s", err.msg);
	snprintf(path, sizeof(path), "%s/%s.compiled", dir, stem);
	f = fopen(path, "w+b");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(tmatch_profile_compile(p, f, &err), 0, "%s", err.msg);
	tmatch_profile_destroy(p);
	size = (size_t)ftell(f);
	padded = (size + 7) & ~(size_t)7;
	buf = calloc(1, padded);
	cr_assert_not_null(buf);
	rewind(f);
	cr_assert_eq(fread(buf, 1, size, f), size);
	/* the compiled profile as then: version 1 without collectives, else 2 */
	put_n(buf + 8, 4, tm_get_le(buf + 36, 4) ? 2 : 1, 0);
	put_n(buf + size - 8, 8, tm_fnv_words(buf, size - 8), 0);
	rewind(f);
	cr_assert_eq(fwrite(buf, 1, size, f), size);
	cr_assert_eq(fclose(f), 0);

	put_n(m + 8, 4, (uint64_t)version, 0);
	put_n(m + 12, 4, (uint64_t)kind, 0);
	put_n(m + 16, 4, (uint64_t)ranks, 0);
	put_n(m + 20, 4, (uint64_t)idlen, 0);
	memcpy(m + 24, id, (size_t)idlen);
	snprintf((char *)m + 56, 64, "%s", name);
	snprintf((char *)m + 120, 256, "/bin/old");
	put_n(m + 376, 8, size, 0);
	put_n(m + 384, 8, tm_fnv_words(buf, padded), 0);
	put_n(m + 392, 8, 1700000000000000000ULL, 0);
	put_n(m + 504, 8, tm_fnv_words(m, 504), 0);
	free(buf);
	snprintf(path, sizeof(path), "%s/%s.meta", dir, stem);
	write_bytes(path, m, sizeof(m));
}

static void write_v1_entry(int kind, int ranks, const unsigned char *id, int idlen,
                           const char *name, const char *profile, char stem[17])
{
	write_old_entry(1, kind, ranks, id, idlen, name, profile, NULL, stem);
}

/* The SHA-256 sha256sum(1) prints for path, in hex. */
static void sha256sum_of(const char *path, char *hex, size_t len)
{
	char cmd[PATH_MAX + 32];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(hex, (int)len, f));
	hex[strcspn(hex, " \n")] = '\0';
	pclose(f);
}

static int exists_in_store(const char *stem, const char *ext)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s%s", dir, stem, ext);
	return access(path, F_OK) == 0;
}

Test(store, content_keys_are_sha256_and_stems_a_sha256_of_the_key)
{
	tmatch_profile_store_key_t k;
	char exe[PATH_MAX], want[80], got[2 * TMATCH_STORE_ID_MAX + 1];
	int i;

	key_of(script(exe, sizeof(exe), "app", "#!/bin/sh\necho sha\n"), 8, NULL, &k);
	cr_assert_eq(k.kind, TMATCH_STORE_KEY_CONTENT);
	cr_assert_eq(k.id_len, 32, "a SHA-256, not two FNV-1a hashes and the size");
	for (i = 0; i < k.id_len; i++)
		snprintf(got + 2 * i, 3, "%02x", k.id[i]);
	sha256sum_of(exe, want, sizeof(want));
	cr_assert_str_eq(got, want);
}

Test(store, entries_of_format_1_are_found_and_moved)
{
	tmatch_profile_store_key_t k, self;
	tmatch_profile_store_entry_t e, *v = NULL;
	tmatch_error_t err;
	char exe[PATH_MAX], path[PATH_MAX], old[17], stem[17], old_self[17];
	unsigned char v1id[24];
	const char *text = "#!/bin/sh\nexec mpi-app\n";
	uint64_t h1 = 0xcbf29ce484222325ULL, h2 = h1 ^ 0x5bd1e995u;
	int n = 0, damaged = 0;

	/* a script's entry, keyed as format 1 keyed it */
	key_of(script(exe, sizeof(exe), "app", text), 8, "lmp", &k);
	h1 = fnv1a(h1, (const unsigned char *)text, strlen(text));
	h2 = fnv1a(h2, (const unsigned char *)text, strlen(text));
	put_n(v1id, 8, h1, 0);
	put_n(v1id + 8, 8, h2, 0);
	put_n(v1id + 16, 8, strlen(text), 0);
	write_v1_entry(TMATCH_STORE_KEY_CONTENT, 8, v1id, 24, "lmp", EXAMPLES "lammps-8.yml", old);
	stem_of(&k, stem);
	cr_assert_str_neq(stem, old, "the stem is no longer FNV-1a");

	/* read only (the nodes, `layout`): found where it is, nothing moved */
	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_get(store, &k, TMATCH_STORE_READONLY, path, sizeof(path),
	                                      &e, &err),
	             1, "%s", err.msg);
	cr_assert_str_eq(e.stem, old);
	cr_assert_eq(e.version, 1);
	cr_assert(exists_in_store(old, ".meta") && !exists_in_store(stem, ".meta"));

	/* srun's get: found, and moved to its new stem */
	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_get(store, &k, 0, path, sizeof(path), &e, &err), 1, "%s",
	             err.msg);
	cr_assert_str_eq(e.stem, stem);
	cr_assert_eq(e.version, 3);
	cr_assert_eq(e.created_ns, 1700000000000000000LL, "its creation kept");
	cr_assert(strstr(path, stem), "%s", path);
	cr_assert(!exists_in_store(old, ".meta") && !exists_in_store(old, ".compiled"));
	assert_same_matrix(EXAMPLES "lammps-8.yml", path);
	cr_assert_eq(get(&k, path, &err), 1, "%s", err.msg);
	cr_assert(strstr(path, stem), "%s", path);

	/* a build id's entry of format 1: found under its old stem; a put
	   replaces it and removes the old one */
	key_of("/proc/self/exe", 4, NULL, &self);
	write_v1_entry(TMATCH_STORE_KEY_BUILD_ID, 4, self.id, self.id_len, "",
	               EXAMPLES "ring-4.yml", old_self);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_get(store, &self, TMATCH_STORE_READONLY, path,
	                                      sizeof(path), &e, &err),
	             1, "%s", err.msg);
	cr_assert_str_eq(e.stem, old_self);
	put(&self, EXAMPLES "ring-4.yml", 0);
	cr_assert(!exists_in_store(old_self, ".meta") && !exists_in_store(old_self, ".compiled"));
	cr_assert_eq(tmatch_profile_store_list(store, &v, &n, &damaged, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 2);
	cr_assert_eq(damaged, 0);
	for (int i = 0; i < n; i++)
		cr_assert_eq(v[i].version, 3, "%s", v[i].stem);
	free(v);
}

static void flip(const char *path, off_t at);

/* One byte of k's STEM.EXT changed at `at`: a reader refuses the entry,
   saying why. */
static void expect_damaged(const tmatch_profile_store_key_t *k, const char *ext, off_t at,
                           const char *why)
{
	char stem[17], file[PATH_MAX + 32], path[PATH_MAX];
	tmatch_error_t err;

	stem_of(k, stem);
	snprintf(file, sizeof(file), "%s/%s%s", dir, stem, ext);
	flip(file, at);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_get(store, k, TMATCH_STORE_READONLY, path, sizeof(path),
	                                      NULL, &err),
	             -1, "%s at %ld", ext, (long)at);
	cr_assert(strstr(err.msg, why), "%s", err.msg);
}

/* What a put writes now: a .meta of version 3, its own checksum and its
   profile's XXH3 (computed here over the bytes with libxxhash), and the
   profile compiled as version 3, XXH3 sealed; one byte changed in either
   file is refused with what does not check. */
Test(store, entries_are_written_as_version_3_with_xxh3)
{
	tmatch_profile_store_key_t k;
	tmatch_profile_store_entry_t e;
	tmatch_error_t err;
	char exe[PATH_MAX], stem[17], file[PATH_MAX + 32], path[PATH_MAX];
	unsigned char *m, *prof;
	size_t mlen, plen;

	key_of(script(exe, sizeof(exe), "app", "#!/bin/sh\necho xxh3\n"), 8, NULL, &k);
	stem_of(&k, stem);
	put(&k, EXAMPLES "lammps-8.yml", 0);
	snprintf(file, sizeof(file), "%s/%s.meta", dir, stem);
	m = tm_slurp(file, &mlen);
	snprintf(file, sizeof(file), "%s/%s.compiled", dir, stem);
	prof = tm_slurp(file, &plen);
	cr_assert_eq(mlen, 512);
	cr_assert_eq(tm_get_le(m + 8, 4), 3, "the .meta's version");
	cr_assert_eq(tm_get_le(m + 504, 8), (uint64_t)XXH3_64bits(m, 504), "the .meta's own XXH3");
	cr_assert_eq(tm_get_le(m + 376, 8), plen);
	cr_assert_eq(tm_get_le(m + 384, 8), (uint64_t)XXH3_64bits(prof, plen),
	             "the profile's XXH3");
	cr_assert_eq(tm_get_le(prof + 8, 4), 3, "the compiled profile's version");
	cr_assert_eq(tm_get_le(prof + plen - 8, 8), (uint64_t)XXH3_64bits(prof, plen - 8));
	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_get(store, &k, TMATCH_STORE_READONLY, path, sizeof(path),
	                                      &e, &err),
	             1, "%s", err.msg);
	cr_assert_eq(e.version, 3);
	free(m);
	free(prof);

	/* one byte of the name field, then one of the profile's edges */
	expect_damaged(&k, ".meta", 60, "damaged (its checksum does not match)");
	put(&k, EXAMPLES "lammps-8.yml", 0);
	expect_damaged(&k, ".compiled", 100, "its profile's checksum does not match");
}

/* An entry the store's format 2 wrote (SHA-256 name, FNV-1a checksums, its
   profile compiled as version 1, FNV-1a sealed) is used where it is, by a
   reader and by a get that may write, and stays version 2; one byte changed
   in it is still seen. */
Test(store, entries_of_format_2_are_still_read)
{
	tmatch_profile_store_key_t k;
	tmatch_profile_store_entry_t e;
	tmatch_error_t err;
	char exe[PATH_MAX], stem[17], made[17], path[PATH_MAX];

	key_of(script(exe, sizeof(exe), "app", "#!/bin/sh\necho format 2\n"), 8, "lmp", &k);
	stem_of(&k, stem);
	write_old_entry(2, k.kind, k.ranks, k.id, k.id_len, "lmp", EXAMPLES "lammps-8.yml", stem,
	                made);
	for (int flags = TMATCH_STORE_READONLY, pass = 0; pass < 2; pass++, flags = 0) {
		memset(&err, 0, sizeof(err));
		cr_assert_eq(tmatch_profile_store_get(store, &k, (unsigned)flags, path,
		                                      sizeof(path), &e, &err),
		             1, "pass %d: %s", pass, err.msg);
		cr_assert_str_eq(e.stem, stem);
		cr_assert_eq(e.version, 2);
		cr_assert_eq(e.created_ns, 1700000000000000000LL);
		assert_same_matrix(EXAMPLES "lammps-8.yml", path);
	}
	expect_damaged(&k, ".compiled", 100, "its profile's checksum does not match");
}

/* Overwrite one byte of a file. */
/* Learn mode stores what the recorder wrote: its wire collectives stay
   wire (counted by the placement), a version 1 profile stays version 1. */
Test(store, stored_profiles_keep_what_their_collectives_are)
{
	static const struct {
		const char *file;
		tmatch_profile_coll_t coll;
		size_t coll_edges;
	} cases[] = {
	    {TMATCH_SRCDIR "/tests/fixtures/profile/valid/coll-wire-4.yml", TMATCH_COLL_WIRE, 6},
	    {TMATCH_SRCDIR "/tests/fixtures/profile/valid/coll-logical-4.yml", TMATCH_COLL_LOGICAL,
	     2},
	    {EXAMPLES "lammps-8.yml", TMATCH_COLL_UNSTATED, 3},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tmatch_profile_store_key_t k;
		tmatch_profile_t *p, *q;
		tmatch_error_t err;
		char path[PATH_MAX], exe[PATH_MAX], name[16];

		p = tmatch_profile_load(cases[i].file, NULL, NULL, NULL, &err);
		cr_assert_not_null(p, "%s", err.msg);
		snprintf(name, sizeof(name), "app%zu", i);
		key_of(script(exe, sizeof(exe), name, name), tmatch_profile_ranks(p), NULL, &k);
		put(&k, cases[i].file, 0);
		cr_assert_eq(get(&k, path, &err), 1, "%s", err.msg);
		q = tmatch_profile_load(path, NULL, NULL, NULL, &err);
		cr_assert_not_null(q, "%s", err.msg);
		cr_expect_eq(tmatch_profile_collectives(q), cases[i].coll, "%s", cases[i].file);
		cr_expect_eq(tmatch_profile_nedges(q, TMATCH_PROFILE_COLL), cases[i].coll_edges,
		             "%s", cases[i].file);
		tmatch_profile_destroy(p);
		tmatch_profile_destroy(q);
	}
}

static void flip(const char *path, off_t at)
{
	int fd = open(path, O_RDWR);
	unsigned char c;

	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_eq(pread(fd, &c, 1, at), 1);
	c ^= 0x40;
	cr_assert_eq(pwrite(fd, &c, 1, at), 1);
	close(fd);
}

Test(store, damaged_entries_are_discarded_in_one_line)
{
	static const struct {
		const char *ext;
		off_t at;
		int truncate;
	} damage[] = {
	    {".compiled", 100, 0}, {".compiled", 8, 0}, {".compiled", 0, 1}, {".meta", 30, 0},
	    {".meta", 200, 0},     {".meta", 505, 0},   {".meta", 0, 1},
	};
	tmatch_profile_store_key_t k;
	tmatch_error_t err;
	char path[PATH_MAX], exe[PATH_MAX], stem[17], file[PATH_MAX + 32];

	key_of(script(exe, sizeof(exe), "app", "y"), 8, NULL, &k);
	stem_of(&k, stem);
	for (size_t d = 0; d < sizeof(damage) / sizeof(damage[0]); d++) {
		put(&k, EXAMPLES "lammps-8.yml", 0);
		snprintf(file, sizeof(file), "%s/%s%s", dir, stem, damage[d].ext);
		if (damage[d].truncate)
			cr_assert_eq(truncate(file, 100), 0);
		else
			flip(file, damage[d].at);
		/* a reader that may not write only reports it */
		memset(&err, 0, sizeof(err));
		cr_assert_eq(tmatch_profile_store_get(store, &k, TMATCH_STORE_READONLY, path,
		                                      sizeof(path), NULL, &err),
		             -1, "damage %zu", d);
		cr_assert(strstr(err.msg, "is damaged"), "%s", err.msg);
		cr_assert_eq(access(file, F_OK), 0);
		errno = 0;
		cr_assert_eq(get(&k, path, &err), -1, "damage %zu", d);
		cr_assert_eq(errno, EPROTO);
		cr_assert(strstr(err.msg, "discarded the stored profile") &&
		              strstr(err.msg, "recorded again") && !strchr(err.msg, '\n'),
		          "%s", err.msg);
		cr_assert_eq(get(&k, path, &err), 0, "damage %zu: the entry is gone", d);
	}
}

static void age(const char *stem, time_t secs_ago)
{
	char file[PATH_MAX + 32];
	struct timespec t[2];

	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= secs_ago;
	t[1] = t[0];
	snprintf(file, sizeof(file), "%s/%s.meta", dir, stem);
	cr_assert_eq(utimensat(AT_FDCWD, file, t, 0), 0);
}

Test(store, least_recently_used_goes_first)
{
	tmatch_profile_store_key_t a, b, c;
	tmatch_error_t err;
	char path[PATH_MAX], exe[PATH_MAX], sa[17], sb[17];
	struct stat st;
	uint64_t one;

	key_of(script(exe, sizeof(exe), "app", "z"), 8, "a", &a);
	key_of(exe, 8, "b", &b);
	key_of(exe, 8, "c", &c);
	put(&a, EXAMPLES "lammps-8.yml", 0);
	stem_of(&a, sa);
	stem_of(&b, sb);
	snprintf(path, sizeof(path), "%s/%s.compiled", dir, sa);
	cr_assert_eq(stat(path, &st), 0);
	one = (uint64_t)st.st_size + 512;
	put(&b, EXAMPLES "lammps-8.yml", 0);
	age(sa, 300);
	age(sb, 200);
	cr_assert_eq(get(&a, path, &err), 1, "%s", err.msg); /* a is used again */
	put(&c, EXAMPLES "lammps-8.yml", 2 * one);           /* room for two */
	cr_assert_eq(get(&a, path, &err), 1);
	cr_assert_eq(get(&c, path, &err), 1);
	cr_assert_eq(get(&b, path, &err), 0, "b was the least recently used");

	/* gc down to one entry keeps the last used */
	age(sa, 100);
	cr_assert_eq(tmatch_profile_store_gc(store, one, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(get(&c, path, &err), 1);
	cr_assert_eq(get(&a, path, &err), 0);
}

Test(store, list_forget_and_leftovers)
{
	tmatch_profile_store_key_t a, b;
	tmatch_profile_store_entry_t *v;
	tmatch_error_t err;
	char exe[PATH_MAX], sa[17], file[PATH_MAX + 32], path[PATH_MAX];
	struct timespec old[2] = {{1000, 0}, {1000, 0}};
	int n, damaged, removed;

	key_of(script(exe, sizeof(exe), "app", "w"), 4, "ring", &a);
	key_of(exe, 8, NULL, &b);
	put(&a, EXAMPLES "ring-4.yml", 0);
	put(&b, EXAMPLES "lammps-8.yml", 0);
	stem_of(&a, sa);
	cr_assert_eq(tmatch_profile_store_list(store, &v, &n, &damaged, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 2);
	cr_assert_eq(damaged, 0);
	for (int i = 0; i < n; i++) {
		cr_assert_str_eq(v[i].exe, "/bin/app");
		cr_assert(v[i].key.ranks == 4 ? !strcmp(v[i].key.name, "ring") : !v[i].key.name[0]);
	}
	free(v);

	/* leftovers of interrupted writes: an old temporary, a profile alone */
	snprintf(file, sizeof(file), "%s/.0123456789abcdef.compiled.AbCdEf", dir);
	write_text(file, "partial");
	cr_assert_eq(utimensat(AT_FDCWD, file, old, 0), 0);
	snprintf(path, sizeof(path), "%s/fedcba9876543210.compiled", dir);
	write_text(path, "orphan");
	cr_assert_eq(tmatch_profile_store_gc(store, 1 << 30, &removed, &err), 0, "%s", err.msg);
	cr_assert_eq(removed, 0);
	cr_assert_eq(access(file, F_OK), -1, "old temporary removed");
	cr_assert_eq(access(path, F_OK), -1, "orphan profile removed");

	cr_assert_eq(tmatch_profile_store_forget(store, "ring", &removed, &err), 0);
	cr_assert_eq(removed, 1);
	cr_assert_eq(get(&a, path, &err), 0);
	cr_assert_eq(get(&b, path, &err), 1);
	cr_assert_eq(tmatch_profile_store_forget(store, sa, &removed, &err), 0);
	cr_assert_eq(removed, 0);
}

static tmatch_profile_store_t *open_own(tmatch_error_t *err)
{
	memset(err, 0, sizeof(*err));
	return tmatch_profile_store_open(NULL, NULL, NULL, TMATCH_STORE_CREATE, err);
}

static tmatch_profile_store_t *open_site(const char *site, tmatch_error_t *err)
{
	memset(err, 0, sizeof(*err));
	return tmatch_profile_store_open(site, NULL, NULL, TMATCH_STORE_CREATE, err);
}

Test(store, directories_closed_to_others)
{
	tmatch_profile_store_t *s;
	tmatch_error_t err;
	char site[PATH_MAX], d[PATH_MAX], mine[PATH_MAX + 32];
	struct stat st;

	cr_assert_eq(chmod(dir, 0755), 0);
	cr_assert_null(s = open_own(&err));
	cr_assert_eq(errno, EPERM);
	cr_assert(strstr(err.msg, "chmod 700"), "%s", err.msg);
	cr_assert_str_eq(err.file, dir);
	cr_assert_eq(chmod(dir, 0700), 0);

	/* a store that is a link is refused */
	snprintf(d, sizeof(d), "%s/linked", root);
	cr_assert_eq(mkdir(d, 0700), 0);
	snprintf(site, sizeof(site), "%s/xdg", root);
	cr_assert_eq(mkdir(site, 0700), 0);
	snprintf(mine, sizeof(mine), "%s/treematch", site);
	cr_assert_eq(mkdir(mine, 0700), 0);
	snprintf(mine, sizeof(mine), "%s/treematch/store", site);
	cr_assert_eq(symlink(d, mine), 0);
	setenv("XDG_CACHE_HOME", site, 1);
	cr_assert_null(s = open_own(&err));
	cr_assert(strstr(err.msg, "not a directory"), "%s", err.msg);

	/* a site store: world-writable only with the sticky bit */
	snprintf(site, sizeof(site), "%s/site", root);
	cr_assert_eq(mkdir(site, 0777), 0);
	cr_assert_eq(chmod(site, 0777), 0);
	cr_assert_null(s = open_site(site, &err));
	cr_assert(strstr(err.msg, "chmod 1777"), "%s", err.msg);
	cr_assert_eq(chmod(site, 01777), 0);
	cr_assert_not_null(s = open_site(site, &err), "%s", err.msg);
	snprintf(mine, sizeof(mine), "%s/%ld", site, (long)geteuid());
	cr_assert_str_eq(tmatch_profile_store_path(s), mine);
	tmatch_profile_store_close(s);
	cr_assert_eq(stat(mine, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0700);
	cr_assert_null(open_site("relative/site", &err));
}

/* Every directory on the way to the store: nobody else may change it. */
Test(store, every_directory_on_the_way_is_checked)
{
	tmatch_profile_store_t *s;
	tmatch_error_t err;
	char xdg[PATH_MAX], sub[PATH_MAX + 32];

	/* an ancestor others may write to, without the sticky bit */
	snprintf(xdg, sizeof(xdg), "%s/open", root);
	cr_assert_eq(mkdir(xdg, 0700), 0);
	cr_assert_eq(chmod(xdg, 0777), 0);
	setenv("XDG_CACHE_HOME", xdg, 1);
	cr_assert_null(s = open_own(&err));
	cr_assert_eq(errno, EPERM);
	cr_assert_str_eq(err.file, xdg);
	cr_assert(strstr(err.msg, "writable by other users") && strstr(err.msg, "mode 0777"), "%s",
	          err.msg);
	/* group-writable is the same (a shared project directory) */
	cr_assert_eq(chmod(xdg, 0770), 0);
	cr_assert_null(s = open_own(&err));
	/* sticky, as /tmp: what is under it stays its owner's */
	cr_assert_eq(chmod(xdg, 01777), 0);
	cr_assert_not_null(s = open_own(&err), "%s", err.msg);
	tmatch_profile_store_close(s);

	/* links on the way are followed when they are the user's */
	snprintf(sub, sizeof(sub), "%s/via", root);
	cr_assert_eq(symlink(xdg, sub), 0);
	setenv("XDG_CACHE_HOME", sub, 1);
	cr_assert_not_null(s = open_own(&err), "%s", err.msg);
	snprintf(sub, sizeof(sub), "%s/treematch/store", xdg);
	cr_assert_str_eq(tmatch_profile_store_path(s), sub, "the path walked, links resolved");
	tmatch_profile_store_close(s);

	if (geteuid() != 0)
		return; /* another user's directory needs root to make */
	/* an ancestor another user owns: XDG_CACHE_HOME=/tmp with a treematch/
	   someone else made there first (issue 33) */
	snprintf(xdg, sizeof(xdg), "%s/shared", root);
	cr_assert_eq(mkdir(xdg, 01777), 0);
	cr_assert_eq(chmod(xdg, 01777), 0);
	snprintf(sub, sizeof(sub), "%s/treematch", xdg);
	cr_assert_eq(mkdir(sub, 0777), 0);
	cr_assert_eq(chmod(sub, 0777), 0);
	cr_assert_eq(chown(sub, 65534, 65534), 0);
	setenv("XDG_CACHE_HOME", xdg, 1);
	cr_assert_null(s = open_own(&err));
	cr_assert_eq(errno, EPERM);
	cr_assert_str_eq(err.file, sub);
	cr_assert(strstr(err.msg, "belongs to uid 65534"), "%s", err.msg);
	/* and a link of another user's on the way is not followed */
	cr_assert_eq(rmdir(sub), 0);
	cr_assert_eq(symlink(root, sub), 0);
	cr_assert_eq(lchown(sub, 65534, 65534), 0);
	cr_assert_null(s = open_own(&err));
	cr_assert_eq(errno, EPERM);
	cr_assert(strstr(err.msg, "a link of uid 65534"), "%s", err.msg);
}

/*
 * Issue 33: with XDG_CACHE_HOME under a directory another user can write
 * to, the attacker swaps `store` for a link to the victim's home between
 * the check and the writes; the victim's srun then wrote its .lock and
 * entries there and its clean-up deleted .bash_history. Once opened, a
 * store is its descriptor: a swap afterwards changes nothing, and clean-up
 * never removes a name that is not of the store's own patterns.
 */
Test(store, a_store_swapped_after_it_was_opened_keeps_its_directory)
{
	tmatch_profile_store_key_t k;
	tmatch_error_t err;
	char exe[PATH_MAX], home[PATH_MAX], moved[PATH_MAX], file[PATH_MAX + 32], path[PATH_MAX];
	static const char *const dotfiles[] = {".bash_history", ".gitconfig", ".bash_logout",
	                                       ".rec-notes.yml", ".0123.compiled.AbCdEf"};
	struct timespec old[2] = {{1000, 0}, {1000, 0}};
	int removed;

	key_of(script(exe, sizeof(exe), "app", "swap"), 8, NULL, &k);
	snprintf(home, sizeof(home), "%s/home", root);
	cr_assert_eq(mkdir(home, 0700), 0);
	for (size_t i = 0; i < sizeof(dotfiles) / sizeof(dotfiles[0]); i++) {
		snprintf(file, sizeof(file), "%s/%s", home, dotfiles[i]);
		write_text(file, "mine");
		cr_assert_eq(utimensat(AT_FDCWD, file, old, 0), 0);
	}
	/* the swap */
	snprintf(moved, sizeof(moved), "%s.moved", dir);
	cr_assert_eq(rename(dir, moved), 0);
	cr_assert_eq(symlink(home, dir), 0);

	put(&k, EXAMPLES "lammps-8.yml", 1 << 30);
	cr_assert_eq(get(&k, path, &err), 1, "%s", err.msg);
	cr_assert_eq(tmatch_profile_store_gc(store, 1 << 30, &removed, &err), 0, "%s", err.msg);
	snprintf(file, sizeof(file), "%s/.lock", home);
	cr_assert_eq(access(file, F_OK), -1, "nothing written through the link");
	for (size_t i = 0; i < sizeof(dotfiles) / sizeof(dotfiles[0]); i++) {
		snprintf(file, sizeof(file), "%s/%s", home, dotfiles[i]);
		cr_assert_eq(access(file, F_OK), 0, "%s removed", dotfiles[i]);
	}
	snprintf(file, sizeof(file), "%s/.lock", moved);
	cr_assert_eq(access(file, F_OK), 0, "the store's own directory holds the lock");

	/* clean-up in the store itself: other dotfiles stay, even old ones */
	for (size_t i = 0; i < sizeof(dotfiles) / sizeof(dotfiles[0]); i++) {
		snprintf(file, sizeof(file), "%s/%s", moved, dotfiles[i]);
		write_text(file, "not the store's");
		cr_assert_eq(utimensat(AT_FDCWD, file, old, 0), 0);
	}
	cr_assert_eq(tmatch_profile_store_gc(store, 1 << 30, &removed, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < sizeof(dotfiles) / sizeof(dotfiles[0]); i++) {
		snprintf(file, sizeof(file), "%s/%s", moved, dotfiles[i]);
		cr_assert_eq(access(file, F_OK), 0, "%s removed", dotfiles[i]);
	}
	/* a new opening sees the link and refuses it */
	cr_assert_null(open_own(&err));
	cr_assert(strstr(err.msg, "not a directory"), "%s", err.msg);
}

/*
 * Issue 33: in a 1777 site store another user could mkdir -m700 DIR/UID
 * for every uid. A site directory of root's lets only root make them
 * (make_user_dir, the plugin's root side at the first step); one squatted
 * already is refused, never used.
 */
Test(store, site_directories_cannot_be_squatted)
{
	tmatch_profile_store_t *s;
	tmatch_error_t err;
	char site[PATH_MAX], theirs[PATH_MAX + 32];
	struct stat st;

	snprintf(site, sizeof(site), "%s/site", root);
	cr_assert_eq(mkdir(site, 0755), 0);
	cr_assert_eq(chmod(site, 0755), 0);
	if (geteuid() != 0) {
		/* a site directory of the user's own: their directory is made */
		cr_assert_not_null(s = open_site(site, &err), "%s", err.msg);
		tmatch_profile_store_close(s);
		cr_assert_eq(tmatch_profile_store_make_user_dir(site, getuid(), getgid(), &err),
		             -1);
		return;
	}
	/* root's site directory: uid 65534's directory made by root, theirs */
	cr_assert_eq(tmatch_profile_store_make_user_dir(site, 65534, 65534, &err), 0, "%s",
	             err.msg);
	snprintf(theirs, sizeof(theirs), "%s/65534", site);
	cr_assert_eq(stat(theirs, &st), 0);
	cr_assert_eq(st.st_uid, 65534);
	cr_assert_eq(st.st_gid, 65534);
	cr_assert_eq(st.st_mode & 07777, 0700);
	cr_assert_eq(tmatch_profile_store_make_user_dir(site, 65534, 65534, &err), 0, "%s",
	             err.msg);

	/* squatted in a 1777 site: uid 4242's directory made by 65534 */
	cr_assert_eq(chmod(site, 01777), 0);
	snprintf(theirs, sizeof(theirs), "%s/4242", site);
	cr_assert_eq(mkdir(theirs, 0700), 0);
	cr_assert_eq(chown(theirs, 65534, 65534), 0);
	cr_assert_eq(tmatch_profile_store_make_user_dir(site, 4242, 4242, &err), -1);
	cr_assert_eq(errno, EPERM);
	cr_assert(strstr(err.msg, "squatted"), "%s", err.msg);
	cr_assert_eq(stat(theirs, &st), 0);
	cr_assert_eq(st.st_uid, 65534, "left as found, never given away");
	/* and root's own directory there: a squatted one is refused too */
	snprintf(theirs, sizeof(theirs), "%s/0", site);
	cr_assert_eq(mkdir(theirs, 0700), 0);
	cr_assert_eq(chown(theirs, 65534, 65534), 0);
	cr_assert_null(s = open_site(site, &err));
	cr_assert_eq(errno, EPERM);
	cr_assert(strstr(err.msg, "belongs to uid 65534"), "%s", err.msg);

	/* a site directory of root's where the user's is not made yet: its
	   path is given, nothing is made by the user */
	cr_assert_eq(rmdir(theirs), 0);
	cr_assert_eq(chmod(site, 0755), 0);
	cr_assert_eq(chmod(root, 0755), 0);
	cr_assert_eq(seteuid(65533), 0);
	s = open_site(site, &err);
	cr_assert_eq(seteuid(0), 0);
	cr_assert_null(s);
	snprintf(theirs, sizeof(theirs), "%s/65533", site);
	cr_assert_str_eq(err.file, theirs);
	cr_assert(strstr(err.msg, "not made yet"), "%s", err.msg);
	cr_assert_eq(access(theirs, F_OK), -1);
}

/* Issue 34: a full file system between the two files of an entry left a
   profile without its .meta. Both are written in full before either is
   renamed in: nothing is left. */
Test(store, a_full_file_system_leaves_no_half_entry)
{
	tmatch_profile_store_key_t k;
	tmatch_profile_store_entry_t *v;
	tmatch_error_t err;
	struct rlimit rl, low;
	struct dirent *e;
	char exe[PATH_MAX], path[PATH_MAX];
	DIR *d;
	int n, rc;

	/* ring-4's compiled form (224 bytes) fits, its 512-byte .meta not */
	key_of(script(exe, sizeof(exe), "app", "full"), 4, NULL, &k);
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
	low = rl;
	low.rlim_cur = 400;
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &low), 0);
	memset(&err, 0, sizeof(err));
	rc = put_file(store, &k, EXAMPLES "ring-4.yml", NULL, 0, &err);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	cr_assert_eq(rc, -1);
	cr_assert(strstr(err.msg, "cannot write to the store"), "%s", err.msg);
	cr_assert_eq(get(&k, path, &err), 0, "no entry");
	cr_assert_not_null(d = opendir(dir));
	while ((e = readdir(d)))
		cr_assert(!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		              !strcmp(e->d_name, ".lock"),
		          "left in the store: %s", e->d_name);
	closedir(d);
	cr_assert_eq(tmatch_profile_store_list(store, &v, &n, NULL, &err), 0);
	cr_assert_eq(n, 0);
	free(v);
	/* and with room, the same put stores it */
	put(&k, EXAMPLES "ring-4.yml", 0);
	cr_assert_eq(get(&k, path, &err), 1, "%s", err.msg);
}

/* A learning step's recording: stored under the step's key, then removed
   with the recorder's temporaries; another step's stays. */
Test(store, recordings_are_taken_and_removed)
{
	tmatch_profile_store_key_t k;
	tmatch_error_t err;
	char exe[PATH_MAX], name[64], file[PATH_MAX + 64], path[PATH_MAX], cmd[3 * PATH_MAX];

	key_of(script(exe, sizeof(exe), "app", "rec"), 8, NULL, &k);
	cr_assert_eq(tmatch_profile_store_recording_name(42, 7, name, sizeof(name)), 0);
	cr_assert_str_eq(name, ".rec-42.7.yml");
	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_take_recording(store, &k, 42, 7, exe, 0, &err), 0,
	             "nothing recorded");
	snprintf(cmd, sizeof(cmd),
	         "cp '%s' '%s/.rec-42.7.yml' && echo x > '%s/.rec-42.7.yml.Ab12Cd' "
	         "&& echo x > '%s/.rec-42.8.yml'",
	         EXAMPLES "lammps-8.yml", dir, dir, dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(tmatch_profile_store_take_recording(store, &k, 42, 7, exe, 0, &err), 1, "%s",
	             err.msg);
	cr_assert_eq(get(&k, path, &err), 1, "%s", err.msg);
	snprintf(file, sizeof(file), "%s/.rec-42.7.yml", dir);
	cr_assert_eq(access(file, F_OK), -1);
	snprintf(file, sizeof(file), "%s/.rec-42.7.yml.Ab12Cd", dir);
	cr_assert_eq(access(file, F_OK), -1);
	snprintf(file, sizeof(file), "%s/.rec-42.8.yml", dir);
	cr_assert_eq(access(file, F_OK), 0, "another step's");

	/* a recording of the wrong size is not stored, and still removed */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/.rec-42.9.yml'", EXAMPLES "ring-4.yml", dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(tmatch_profile_store_take_recording(store, &k, 42, 9, exe, 0, &err), -1);
	cr_assert(strstr(err.msg, "4 ranks, the run 8"), "%s", err.msg);
	snprintf(file, sizeof(file), "%s/.rec-42.9.yml", dir);
	cr_assert_eq(access(file, F_OK), -1);
}

/* An entry another process chose: found by its stem and checksum. */
Test(store, find_by_stem_and_checksum)
{
	tmatch_profile_store_key_t k;
	tmatch_profile_store_entry_t e;
	tmatch_error_t err;
	char exe[PATH_MAX], path[PATH_MAX], stem[17];

	key_of(script(exe, sizeof(exe), "app", "find"), 8, NULL, &k);
	stem_of(&k, stem);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_find(store, stem, 1, path, sizeof(path), &err), -1);
	cr_assert_eq(errno, ENOENT);
	put(&k, EXAMPLES "lammps-8.yml", 0);
	cr_assert_eq(tmatch_profile_store_get(store, &k, 0, path, sizeof(path), &e, &err), 1);
	cr_assert_str_eq(e.stem, stem);
	cr_assert_eq(tmatch_profile_store_find(store, stem, e.meta_sum, path, sizeof(path), &err),
	             1, "%s", err.msg);
	cr_assert_eq(
	    tmatch_profile_store_find(store, stem, e.meta_sum ^ 1, path, sizeof(path), &err), -1);
	cr_assert_eq(errno, ESTALE);
	cr_assert(strstr(err.msg, "replaced since"), "%s", err.msg);
	flip(path, 100);
	cr_assert_eq(tmatch_profile_store_find(store, stem, e.meta_sum, path, sizeof(path), &err),
	             -1);
	cr_assert_eq(errno, EPROTO);
	cr_assert_eq(access(path, F_OK), 0, "find reads only");
	cr_assert_eq(tmatch_profile_store_find(store, "nothex", 1, path, sizeof(path), &err), -1);
	cr_assert_eq(errno, EINVAL);
}

/* Writers in parallel: every entry left whole, none damaged. */
Test(store, parallel_writers_leave_whole_entries)
{
	tmatch_profile_store_key_t k[3];
	tmatch_profile_store_entry_t *v;
	tmatch_error_t err;
	char exe[PATH_MAX], path[PATH_MAX];
	static const char *const names[] = {"x", "y", "z"};
	int n, damaged, status;

	script(exe, sizeof(exe), "app", "v");
	for (int i = 0; i < 3; i++)
		key_of(exe, 8, names[i], &k[i]);
	for (int c = 0; c < 4; c++) {
		pid_t pid = fork();

		cr_assert_geq(pid, 0);
		if (pid == 0) {
			for (int r = 0; r < 10; r++) {
				if (put_file(store, &k[(c + r) % 3], EXAMPLES "lammps-8.yml", NULL,
				             0, &err) < 0)
					_exit(1);
				if (tmatch_profile_store_get(store, &k[(c + r + 1) % 3], 0, path,
				                             sizeof(path), NULL, &err) < 0)
					_exit(2);
			}
			_exit(0);
		}
	}
	for (int c = 0; c < 4; c++) {
		cr_assert_gt(wait(&status), 0);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer failed: %d",
		          status);
	}
	cr_assert_eq(tmatch_profile_store_list(store, &v, &n, &damaged, &err), 0);
	cr_assert_eq(n, 3);
	cr_assert_eq(damaged, 0);
	free(v);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(get(&k[i], path, &err), 1, "%s", err.msg);
}
