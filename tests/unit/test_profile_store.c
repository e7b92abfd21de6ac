/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_profile_store.c - the store of learned profiles (profile/store.c):
 * keys from build ids and from content, a stored profile read back as the
 * same matrix, damaged entries discarded with one line, least recently used
 * eviction, the directory's permissions, and writers in parallel.
 */
#include "profile/profile.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXAMPLES TMATCH_SRCDIR "/profile/examples/"

static char root[256], dir[512];

static void setup(void)
{
	tmatch_error_t err;

	snprintf(root, sizeof(root), "/tmp/tm-store-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	setenv("XDG_CACHE_HOME", root, 1);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_dir(NULL, NULL, NULL, 1, dir, sizeof(dir), &err), 0, "%s",
	             err.msg);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
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

static void put(const tmatch_profile_store_key_t *k, const char *profile, uint64_t cap)
{
	tmatch_error_t err;

	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_put(dir, k, profile, "/bin/app", cap, &err), 0, "%s",
	             err.msg);
}

static int get(const tmatch_profile_store_key_t *k, char *path, tmatch_error_t *err)
{
	memset(err, 0, sizeof(*err));
	return tmatch_profile_store_get(dir, k, 0, path, PATH_MAX, err);
}

Test(store, put_then_get_gives_the_same_matrix)
{
	tmatch_profile_store_key_t k;
	tmatch_comm_t *a, *b;
	tmatch_error_t err;
	char path[PATH_MAX], exe[PATH_MAX];
	struct stat st;

	key_of(script(exe, sizeof(exe), "app", "x"), 8, NULL, &k);
	cr_assert_eq(get(&k, path, &err), 0, "empty store");
	put(&k, EXAMPLES "lammps-8.yml", 0);
	cr_assert_eq(get(&k, path, &err), 1, "%s", err.msg);
	a = matrix_of(EXAMPLES "lammps-8.yml");
	b = matrix_of(path);
	cr_assert_eq(tmatch_comm_order(a), tmatch_comm_order(b));
	for (int i = 0; i < tmatch_comm_order(a); i++)
		for (int j = 0; j < tmatch_comm_order(a); j++)
			cr_assert_eq(tmatch_comm_get(a, i, j), tmatch_comm_get(b, i, j));
	tmatch_comm_destroy(a);
	tmatch_comm_destroy(b);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "entries are the user's only");
	cr_assert_eq(stat(dir, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0700);

	/* a profile of another rank count is not stored under this key */
	memset(&err, 0, sizeof(err));
	cr_assert_eq(tmatch_profile_store_put(dir, &k, EXAMPLES "ring-4.yml", NULL, 0, &err), -1);
	cr_assert(strstr(err.msg, "4 ranks, the run 8"), "%s", err.msg);
}

/* Overwrite one byte of a file. */
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
		cr_assert_eq(tmatch_profile_store_get(dir, &k, TMATCH_STORE_READONLY, path,
		                                      sizeof(path), &err),
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
	cr_assert_eq(tmatch_profile_store_gc(dir, one, NULL, &err), 0, "%s", err.msg);
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
	cr_assert_eq(tmatch_profile_store_list(dir, &v, &n, &damaged, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 2);
	cr_assert_eq(damaged, 0);
	for (int i = 0; i < n; i++) {
		cr_assert_str_eq(v[i].exe, "/bin/app");
		cr_assert(v[i].key.ranks == 4 ? !strcmp(v[i].key.name, "ring") : !v[i].key.name[0]);
	}
	free(v);

	/* leftovers of interrupted writes: an old temporary, a .prof alone */
	snprintf(file, sizeof(file), "%s/.0123456789abcdef.prof.AbCdEf", dir);
	write_text(file, "partial");
	cr_assert_eq(utimensat(AT_FDCWD, file, old, 0), 0);
	snprintf(path, sizeof(path), "%s/fedcba9876543210.compiled", dir);
	write_text(path, "orphan");
	cr_assert_eq(tmatch_profile_store_gc(dir, 1 << 30, &removed, &err), 0, "%s", err.msg);
	cr_assert_eq(removed, 0);
	cr_assert_eq(access(file, F_OK), -1, "old temporary removed");
	cr_assert_eq(access(path, F_OK), -1, "orphan profile removed");

	cr_assert_eq(tmatch_profile_store_forget(dir, "ring", &removed, &err), 0);
	cr_assert_eq(removed, 1);
	cr_assert_eq(get(&a, path, &err), 0);
	cr_assert_eq(get(&b, path, &err), 1);
	cr_assert_eq(tmatch_profile_store_forget(dir, sa, &removed, &err), 0);
	cr_assert_eq(removed, 0);
}

Test(store, directories_closed_to_others)
{
	tmatch_error_t err;
	char site[PATH_MAX], d[PATH_MAX], mine[PATH_MAX + 32];
	struct stat st;

	memset(&err, 0, sizeof(err));
	cr_assert_eq(chmod(dir, 0755), 0);
	cr_assert_eq(tmatch_profile_store_dir(NULL, NULL, NULL, 1, d, sizeof(d), &err), -1);
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
	cr_assert_eq(tmatch_profile_store_dir(NULL, NULL, NULL, 1, d, sizeof(d), &err), -1);
	cr_assert(strstr(err.msg, "not a directory"), "%s", err.msg);

	/* a site store: world-writable only with the sticky bit */
	snprintf(site, sizeof(site), "%s/site", root);
	cr_assert_eq(mkdir(site, 0777), 0);
	cr_assert_eq(chmod(site, 0777), 0);
	cr_assert_eq(tmatch_profile_store_dir(site, NULL, NULL, 1, d, sizeof(d), &err), -1);
	cr_assert(strstr(err.msg, "chmod 1777"), "%s", err.msg);
	cr_assert_eq(chmod(site, 01777), 0);
	cr_assert_eq(tmatch_profile_store_dir(site, NULL, NULL, 1, d, sizeof(d), &err), 0, "%s",
	             err.msg);
	snprintf(mine, sizeof(mine), "%s/%ld", site, (long)geteuid());
	cr_assert_str_eq(d, mine);
	cr_assert_eq(stat(d, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0700);
	cr_assert_eq(tmatch_profile_store_dir("relative/site", NULL, NULL, 1, d, sizeof(d), &err),
	             -1);
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
				if (tmatch_profile_store_put(dir, &k[(c + r) % 3],
				                             EXAMPLES "lammps-8.yml", NULL, 0,
				                             &err) < 0)
					_exit(1);
				if (tmatch_profile_store_get(dir, &k[(c + r + 1) % 3], 0, path,
				                             sizeof(path), &err) < 0)
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
	cr_assert_eq(tmatch_profile_store_list(dir, &v, &n, &damaged, &err), 0);
	cr_assert_eq(n, 3);
	cr_assert_eq(damaged, 0);
	free(v);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(get(&k[i], path, &err), 1, "%s", err.msg);
}
