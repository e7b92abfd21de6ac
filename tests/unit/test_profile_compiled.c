/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_profile_compiled.c - the compiled profile (profile/compiled.c): it
 * gives back exactly the profile it was made from, a node's rows read alone
 * give the same matrix as the whole profile cut down, the whole matrix read
 * straight from the file (tmatch_profile_load_comm) is exactly the
 * profile's, and a damaged file is refused with a message naming it (every
 * byte flipped, with and without a checksum that matches, every length cut),
 * by the straight read as by the loader.
 */
#include "profile/profile_private.h"
#include "treematch/treematch_private.h"
#include "old_formats.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

/* A random finished profile: ranks, metrics, directedness, coll edges, info. */
static tmatch_profile_t *random_profile(uint64_t seed, int ranks, unsigned metrics, int directed)
{
	tmatch__rng_t rng;
	tmatch_error_t err;
	tmatch_profile_t *p = tmatch_profile_create(ranks, metrics, directed, &err);

	cr_assert_not_null(p, "%s", err.msg);
	tmatch__rng_seed(&rng, seed);
	for (int set = 0; set < 2; set++) {
		int n = (int)tmatch__rng_below(&rng, (uint64_t)ranks * 3);

		for (int k = 0; k < n; k++) {
			int a = (int)tmatch__rng_below(&rng, (uint64_t)ranks);
			int b = (int)tmatch__rng_below(&rng, (uint64_t)ranks);

			/* undirected profiles refuse a pair given twice: one direction only */
			if (!directed && a > b)
				continue;
			cr_assert_eq(tmatch_profile_add_edge(
			                 p, set ? TMATCH_PROFILE_COLL : TMATCH_PROFILE_P2P, a, b,
			                 1 + tmatch__rng_below(&rng, 1u << 30),
			                 1 + tmatch__rng_below(&rng, 1000), NULL, NULL, &err),
			             0, "%s", err.msg);
		}
	}
	if (!directed) {
		/* a second edge of the same pair would be refused by finish: keep one */
		for (int s = 0; s < 2; s++) {
			struct tmatch__edges *e = &p->set[s];
			size_t w = 0;

			for (size_t i = 0; i < e->n; i++) {
				int dup = 0;

				for (size_t j = 0; j < w; j++)
					dup |= e->src[j] == e->src[i] && e->dst[j] == e->dst[i];
				if (dup)
					continue;
				e->src[w] = e->src[i];
				e->dst[w] = e->dst[i];
				if (e->bytes)
					e->bytes[w] = e->bytes[i];
				if (e->msgs)
					e->msgs[w] = e->msgs[i];
				w++;
			}
			e->n = w;
		}
	}
	cr_assert_eq(tmatch_profile_finish(p, NULL, NULL, &err), 0, "%s", err.msg);
	if (seed % 2)
		cr_assert_eq(tmatch_profile_set_info(p, "application", "lammps \xc3\xa9", &err), 0);
	cr_assert_eq(tmatch_profile_set_layout(p, 2, ranks / 2, &err), 0);
	/* version 1 (unstated), and version 2's two models */
	cr_assert_eq(tmatch_profile_set_collectives(p, (tmatch_profile_coll_t)(seed % 3), &err), 0);
	return p;
}

/* The compiled bytes of p, in a malloc'd buffer. */
static unsigned char *compile(const tmatch_profile_t *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	tmatch_error_t err;

	cr_assert_not_null(f);
	cr_assert_eq(tmatch_profile_compile(p, f, &err), 0, "%s", err.msg);
	cr_assert_eq(fclose(f), 0);
	return (unsigned char *)buf;
}

static char *as_yaml(const tmatch_profile_t *p)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	tmatch_error_t err;

	cr_assert_eq(tmatch_profile_write(p, f, 0, &err), 0, "%s", err.msg);
	fclose(f);
	return buf;
}

Test(compiled, round_trip)
{
	static const unsigned metrics[] = {TMATCH_PROFILE_HAS_BYTES, TMATCH_PROFILE_HAS_MSGS,
	                                   TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS};

	for (uint64_t seed = 1; seed <= 24; seed++) {
		tmatch_profile_t *p = random_profile(seed, 2 + (int)(seed * 7 % 40),
		                                     metrics[seed % 3], (int)(seed / 3 % 2));
		tmatch_error_t err;
		size_t len;
		unsigned char *bin = compile(p, &len);
		tmatch_profile_t *q =
		    tmatch_profile_load_buffer(bin, len, "p.tmpc", NULL, NULL, NULL, &err);
		char *a, *b;

		cr_assert_not_null(q, "seed %llu: %s", (unsigned long long)seed, err.msg);
		cr_assert_eq(len % 8, 0);
		a = as_yaml(p);
		b = as_yaml(q);
		cr_assert_str_eq(a, b, "seed %llu", (unsigned long long)seed);
		free(a);
		free(b);
		free(bin);
		tmatch_profile_destroy(p);
		tmatch_profile_destroy(q);
	}
}

/* The file as a descriptor: tmatch_profile_load_fd recognises it too. */
static int as_file(const unsigned char *bin, size_t len)
{
	FILE *f = tmpfile();
	int fd;

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(bin, 1, len, f), len);
	fflush(f);
	fd = dup(fileno(f));
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0); /* load_fd reads from the offset */
	fclose(f);
	return fd;
}

Test(compiled, one_node_rows_equal_the_whole_cut_down)
{
	for (uint64_t seed = 1; seed <= 12; seed++) {
		int ranks = 8 + (int)(seed * 5 % 30), n = 1 + (int)(seed % 7), sel[8];
		tmatch_profile_t *p =
		    random_profile(seed, ranks, TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS,
		                   (int)(seed % 2));
		size_t len;
		unsigned char *bin = compile(p, &len);
		int fd = as_file(bin, len);
		tmatch__rng_t rng;

		tmatch__rng_seed(&rng, seed);
		for (int i = 0; i < n; i++) { /* distinct ranks, in a random order */
			int r, dup;
			do {
				r = (int)tmatch__rng_below(&rng, (uint64_t)ranks);
				dup = 0;
				for (int j = 0; j < i; j++)
					dup |= sel[j] == r;
			} while (dup);
			sel[i] = r;
		}
		for (int metric = 0; metric < 3; metric++)
			for (unsigned sets = 1; sets <= 7; sets++) {
				tmatch_error_t err;
				tmatch_comm_t *whole =
				    tmatch_profile_to_comm(p, metric, sets, &err);
				tmatch_comm_t *want =
				    whole ? tmatch_comm_submatrix(whole, sel, n, &err) : NULL;
				tmatch_comm_t *got = tmatch_profile_compiled_comm(
				    fd, "p.tmpc", sel, n, metric, sets, NULL, &err);

				/* COLL_WIRE alone: nothing when the collectives are not wire */
				if (!tmatch_profile_sets(p, sets)) {
					cr_assert_null(whole);
					cr_assert_null(got);
					continue;
				}
				cr_assert_not_null(got, "%s", err.msg);
				cr_assert_eq(tmatch_comm_order(got), n);
				for (int i = 0; i < n; i++)
					for (int j = 0; j < n; j++)
						cr_assert_eq(tmatch_comm_get(got, i, j),
						             tmatch_comm_get(want, i, j),
						             "seed %llu metric %d sets %u (%d,%d)",
						             (unsigned long long)seed, metric, sets,
						             i, j);
				tmatch_comm_destroy(whole);
				tmatch_comm_destroy(want);
				tmatch_comm_destroy(got);
			}
		close(fd);
		free(bin);
		tmatch_profile_destroy(p);
	}
}

/* The format's checksum (profile/compiled.c's header comment) for the
   version its header says, recomputed so that a damaged body reaches the
   structural checks: XXH3 (libxxhash) from version 3, FNV-1a before. */
static void reseal(unsigned char *b, size_t len)
{
	tm_put_le(b + len - 8, 8,
	          tm_get_le(b + 8, 4) >= 3 ? (uint64_t)XXH3_64bits(b, len - 8)
	                                   : tm_fnv_words(b, len - 8));
}

static void expect_refused(const unsigned char *b, size_t len, const char *what)
{
	tmatch_error_t err;
	tmatch_profile_t *q;

	memset(&err, 0, sizeof(err));
	q = tmatch_profile_load_buffer(b, len, "bad.tmpc", NULL, NULL, NULL, &err);
	if (q) {
		/* A flip may give another valid profile (a weight, a name): then it
		   must be one the YAML loader would have made, unchanged by a trip
		   through YAML (no self edge, rows sorted, undirected pairs as
		   (min, max)). */
		char *y1 = as_yaml(q), *y2;
		tmatch_profile_t *r =
		    tmatch_profile_load_buffer(y1, strlen(y1), "y.yml", NULL, NULL, NULL, &err);

		cr_assert_not_null(r, "%s: accepted, but its YAML is refused: %s", what, err.msg);
		y2 = as_yaml(r);
		cr_assert_str_eq(y1, y2, "%s: accepted a profile YAML would not give", what);
		free(y1);
		free(y2);
		tmatch_profile_destroy(r);
		tmatch_profile_destroy(q);
		return;
	}
	cr_assert_str_eq(err.file, "bad.tmpc", "%s: %s", what, err.msg);
	cr_assert_neq(err.msg[0], '\0', "%s", what);
}

/* Two matrices alike to the last bit: rows, their order, weights, total. */
static void same_matrix(const tmatch_comm_t *a, const tmatch_comm_t *b, const char *what)
{
	cr_assert_eq(a->n, b->n, "%s", what);
	cr_assert_eq(a->nnz, b->nnz, "%s", what);
	cr_assert_eq(memcmp(a->row_ptr, b->row_ptr, sizeof(*a->row_ptr) * ((size_t)a->n + 1)), 0,
	             "%s: rows", what);
	cr_assert_eq(memcmp(a->col, b->col, sizeof(*a->col) * a->nnz), 0, "%s: columns", what);
	cr_assert_eq(memcmp(a->w, b->w, sizeof(*a->w) * a->nnz), 0, "%s: weights", what);
	cr_assert_eq(memcmp(&a->total, &b->total, sizeof(a->total)), 0, "%s: total", what);
}

/* The straight read of buffer b, or NULL when it leaves the profile to the
   whole load (direct 0). */
static tmatch_comm_t *straight(const unsigned char *b, size_t len, int metric, unsigned sets,
                               int *direct, tmatch_error_t *err)
{
	memset(err, 0, sizeof(*err));
	return tmatch__profile_compiled_matrix(b, len, 0, "bad.tmpc", NULL, metric, sets, direct,
	                                       err);
}

Test(compiled, whole_matrix_read_straight_is_the_profiles)
{
	static const unsigned metrics[] = {TMATCH_PROFILE_HAS_BYTES, TMATCH_PROFILE_HAS_MSGS,
	                                   TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS};
	int read_straight = 0;

	for (uint64_t seed = 1; seed <= 24; seed++) {
		tmatch_profile_t *p = random_profile(seed, 2 + (int)(seed * 7 % 40),
		                                     metrics[seed % 3], (int)(seed / 3 % 2));
		size_t len;
		unsigned char *bin = compile(p, &len);
		char path[] = "/tmp/test_compiled_XXXXXX";
		int fd = mkstemp(path);

		cr_assert_geq(fd, 0);
		cr_assert_eq(write(fd, bin, len), (ssize_t)len);
		close(fd);
		for (int metric = -1; metric < 3; metric++)
			for (unsigned sets = 1; sets <= 3; sets++) {
				tmatch_error_t err, err2, err3;
				int m =
				    metric < 0 ? (int)tmatch_profile_placement_metric(p) : metric;
				tmatch_comm_t *want = tmatch_profile_to_comm(p, m, sets, &err2);
				tmatch_comm_t *got = tmatch_profile_load_comm(
				    path, NULL, metric, sets, NULL, NULL, &err);
				int direct;
				tmatch_comm_t *mem =
				    straight(bin, len, metric, sets, &direct, &err3);
				char what[96];

				snprintf(what, sizeof(what), "seed %llu metric %d sets %u",
				         (unsigned long long)seed, metric, sets);
				if (!want) { /* a metric the profile lacks: the same message */
					cr_assert_null(got, "%s", what);
					cr_assert_str_eq(err.msg, err2.msg, "%s", what);
					cr_assert_null(mem, "%s", what);
					continue;
				}
				cr_assert_not_null(got, "%s: %s", what, err.msg);
				same_matrix(got, want, what);
				if (direct) {
					cr_assert_not_null(mem, "%s: %s", what, err3.msg);
					same_matrix(mem, want, what);
					read_straight++;
				}
				tmatch_comm_destroy(want);
				tmatch_comm_destroy(got);
				tmatch_comm_destroy(mem);
			}
		unlink(path);
		free(bin);
		tmatch_profile_destroy(p);
	}
	/* directed and undirected, every metric: most are read straight */
	cr_assert_gt(read_straight, 24 * 4, "only %d read straight", read_straight);
}

/* What a placement asks for by default (point-to-point, and the collectives
   when they are the wire's: tmatch_place_comm_sets(-1)) is resolved against
   the file's collectives and read straight whenever that leaves one set. */
Test(compiled, placements_default_sets_are_read_straight)
{
	const unsigned sets = TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL_WIRE;
	int read_straight = 0;

	for (uint64_t seed = 1; seed <= 24; seed++) {
		tmatch_profile_t *p = random_profile(seed, 2 + (int)(seed * 5 % 30),
		                                     TMATCH_PROFILE_HAS_BYTES, (int)(seed / 3 % 2));
		size_t len;
		unsigned char *bin = compile(p, &len);
		unsigned want_sets = tmatch_profile_sets(p, sets);
		tmatch_error_t err, err2;
		tmatch_comm_t *want = tmatch_profile_to_comm(p, TMATCH_METRIC_BYTES, sets, &err2);
		int direct = 0;
		tmatch_comm_t *mem = straight(bin, len, -1, sets, &direct, &err);
		char what[64];

		snprintf(what, sizeof(what), "seed %llu", (unsigned long long)seed);
		cr_assert_not_null(want, "%s: %s", what, err2.msg);
		if (!(want_sets & TMATCH_PROFILE_COLL)) { /* one set: point-to-point */
			cr_assert_eq(direct, 1, "%s: not read straight (sets %u->%u, %s)", what,
			             sets, want_sets, err.msg);
			cr_assert_not_null(mem, "%s: %s", what, err.msg);
			same_matrix(mem, want, what);
			read_straight++;
		}
		tmatch_comm_destroy(want);
		tmatch_comm_destroy(mem);
		free(bin);
		tmatch_profile_destroy(p);
	}
	cr_assert_geq(read_straight, 12, "only %d read straight", read_straight);
}

Test(compiled, damage_is_refused)
{
	tmatch_profile_t *p = random_profile(5, 12, TMATCH_PROFILE_HAS_BYTES, 0);
	size_t len;
	unsigned char *bin = compile(p, &len), *b = malloc(len);
	tmatch_error_t err;
	int refused_sealed = 0;
	cr_assert_not_null(b);
	static const unsigned char masks[] = {0x01, 0x03, 0x5a, 0x80};

	for (size_t x = 0; x < len * 4; x++) {
		size_t i = x / 4;

		for (int sealed = 0; sealed < 2; sealed++) {
			tmatch_profile_t *q;

			memcpy(b, bin, len);
			b[i] ^= masks[x % 4];
			if (sealed)
				reseal(b, len);
			if (!sealed) { /* the checksum sees every flip */
				memset(&err, 0, sizeof(err));
				q = tmatch_profile_load_buffer(b, len, "bad.tmpc", NULL, NULL, NULL,
				                               &err);
				cr_assert_null(q, "flip at %zu accepted", i);
				cr_assert_str_eq(err.file, "bad.tmpc");
				if (tmatch_profile_is_compiled(b, len)) {
					tmatch_error_t e2;
					int direct;

					cr_assert_null(
					    straight(b, len, -1, TMATCH_PROFILE_P2P, &direct, &e2),
					    "flip at %zu read straight", i);
					cr_assert_str_eq(e2.msg, err.msg);
				}
				tmatch_profile_destroy(q);
				continue;
			}
			memset(&err, 0, sizeof(err));
			q = tmatch_profile_load_buffer(b, len, "bad.tmpc", NULL, NULL, NULL, &err);
			refused_sealed += !q;
			expect_refused(b, len, "sealed flip");
			{ /* the straight read refuses it too, with the same message */
				tmatch_error_t e2;
				int direct;
				tmatch_comm_t *m =
				    straight(b, len, -1, TMATCH_PROFILE_P2P, &direct, &e2);

				if (!q && tmatch_profile_is_compiled(b, len)) {
					cr_assert_null(m, "flip at %zu read straight", i);
					cr_assert_str_eq(e2.msg, err.msg, "flip at %zu", i);
					cr_assert_str_eq(e2.file, "bad.tmpc");
				}
				tmatch_comm_destroy(m);
			}
			tmatch_profile_destroy(q);
		}
	}
	/* the structure checks catch most resealed flips (weights may change freely) */
	cr_assert_gt(refused_sealed, (int)len, "only %d of %zu", refused_sealed, 4 * len);
	for (size_t cut = 0; cut < len; cut++) {
		memset(&err, 0, sizeof(err));
		cr_assert_null(
		    tmatch_profile_load_buffer(bin, cut, "bad.tmpc", NULL, NULL, NULL, &err),
		    "cut at %zu accepted", cut);
		if (cut >= 8) { /* shorter: not even recognised as compiled */
			tmatch_error_t e2;
			int direct;

			cr_assert_null(straight(bin, cut, -1, TMATCH_PROFILE_P2P, &direct, &e2),
			               "cut at %zu read straight", cut);
			cr_assert_str_eq(e2.msg, err.msg, "cut at %zu", cut);
		}
	}
	free(b);
	free(bin);
	tmatch_profile_destroy(p);
}

/* Declared sizes are checked against the file's before anything is made. */
Test(compiled, declared_sizes_bounded_by_the_file)
{
	tmatch_profile_t *p = random_profile(3, 10, TMATCH_PROFILE_HAS_BYTES, 1);
	size_t len;
	unsigned char *bin = compile(p, &len);
	tmatch_profile_limits_t lim;
	tmatch_error_t err;

	/* 2^40 edges in a file of a few hundred bytes */
	bin[40 + 4] = 0x01;
	reseal(bin, len);
	memset(&err, 0, sizeof(err));
	cr_assert_null(tmatch_profile_load_buffer(bin, len, "big.tmpc", NULL, NULL, NULL, &err));
	cr_assert_not_null(strstr(err.msg, "edges") ? err.msg : strstr(err.msg, "size"), "%s",
	                   err.msg);
	free(bin);
	/* ranks above max_ranks */
	bin = compile(p, &len);
	tmatch_profile_limits_init(&lim);
	lim.max_ranks = 9;
	cr_assert_null(tmatch_profile_load_buffer(bin, len, "r.tmpc", &lim, NULL, NULL, &err));
	cr_assert_not_null(strstr(err.msg, "above the limit of 9 ranks"), "%s", err.msg);
	cr_expect_eq(errno, E2BIG);
	free(bin);
	tmatch_profile_destroy(p);
}

Test(compiled, node_rows_refuse_bad_ranks_and_files)
{
	tmatch_profile_t *p = random_profile(2, 10, TMATCH_PROFILE_HAS_BYTES, 0);
	size_t len;
	unsigned char *bin = compile(p, &len);
	int fd = as_file(bin, len), bad_ranks[] = {1, 1}, out_of_range[] = {10}, pipefd[2];
	tmatch_error_t err;

	cr_assert_null(tmatch_profile_compiled_comm(fd, "p", bad_ranks, 2, -1, 1, NULL, &err));
	cr_assert_not_null(strstr(err.msg, "repeated"), "%s", err.msg);
	cr_assert_null(tmatch_profile_compiled_comm(fd, "p", out_of_range, 1, -1, 1, NULL, &err));
	cr_assert_not_null(strstr(err.msg, "outside"), "%s", err.msg);
	cr_assert_eq(pipe(pipefd), 0);
	cr_assert_null(
	    tmatch_profile_compiled_comm(pipefd[0], "fifo", out_of_range, 1, -1, 1, NULL, &err));
	cr_assert_not_null(strstr(err.msg, "regular"), "%s", err.msg);
	close(pipefd[0]);
	close(pipefd[1]);
	/* and the whole-file loader reads it from a descriptor too */
	{
		tmatch_profile_t *q = tmatch_profile_load_fd(fd, "p.tmpc", NULL, NULL, NULL, &err);
		char *a = as_yaml(p), *b;

		cr_assert_not_null(q, "%s", err.msg);
		b = as_yaml(q);
		cr_assert_str_eq(a, b);
		free(a);
		free(b);
		tmatch_profile_destroy(q);
	}
	close(fd);
	free(bin);
	tmatch_profile_destroy(p);
}

/* A profile compiled now is version 3, whatever its collectives, sealed
   with the XXH3 of every byte before the seal (computed here with
   libxxhash); one byte changed is refused with the checksum's message. */
Test(compiled, written_as_version_3_sealed_with_xxh3)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		tmatch_profile_t *p =
		    random_profile(seed, 3 + (int)seed, TMATCH_PROFILE_HAS_BYTES, 0);
		size_t len;
		unsigned char *bin = compile(p, &len);
		tmatch_error_t err;
		tmatch_profile_t *q;

		cr_assert_gt(len, 72);
		cr_assert_eq(tm_get_le(bin + 8, 4), 3, "seed %llu: version",
		             (unsigned long long)seed);
		cr_assert_eq(tm_get_le(bin + 36, 4), (uint64_t)tmatch_profile_collectives(p));
		cr_assert_eq(tm_get_le(bin + len - 8, 8), (uint64_t)XXH3_64bits(bin, len - 8),
		             "seed %llu: not the XXH3 of the file", (unsigned long long)seed);
		bin[len / 2] ^= 0x10;
		memset(&err, 0, sizeof(err));
		q = tmatch_profile_load_buffer(bin, len, "bad.tmpc", NULL, NULL, NULL, &err);
		cr_assert_null(q);
		cr_assert_str_eq(err.msg,
		                 "compiled profile checksum mismatch (the file was changed or "
		                 "damaged): compile it again");
		free(bin);
		tmatch_profile_destroy(p);
	}
}

/* Files of versions 1 (no collectives) and 2 (collectives), as the
   treematch of then wrote them (the version word, FNV-1a words sealed),
   are still read, and give the same profile; sealed with the other
   version's algorithm they are refused. */
Test(compiled, versions_1_and_2_sealed_with_fnv_are_still_read)
{
	int seen[3] = {0};

	for (uint64_t seed = 1; seed <= 9; seed++) {
		tmatch_profile_t *p =
		    random_profile(seed, 3 + (int)seed, TMATCH_PROFILE_HAS_BYTES, (int)(seed % 2));
		size_t len;
		unsigned char *bin = compile(p, &len);
		unsigned version = tmatch_profile_collectives(p) == TMATCH_COLL_UNSTATED ? 1 : 2;
		tmatch_error_t err;
		tmatch_profile_t *q;
		char *a, *b;

		tm_put_le(bin + 8, 4, version);
		tm_put_le(bin + len - 8, 8, tm_fnv_words(bin, len - 8));
		memset(&err, 0, sizeof(err));
		q = tmatch_profile_load_buffer(bin, len, "old.tmpc", NULL, NULL, NULL, &err);
		cr_assert_not_null(q, "seed %llu, version %u: %s", (unsigned long long)seed,
		                   version, err.msg);
		a = as_yaml(p);
		b = as_yaml(q);
		cr_assert_str_eq(a, b, "seed %llu", (unsigned long long)seed);
		seen[version]++;
		tmatch_profile_destroy(q);
		/* an old version's file with the new seal, and the reverse */
		tm_put_le(bin + len - 8, 8, (uint64_t)XXH3_64bits(bin, len - 8));
		cr_assert_null(
		    tmatch_profile_load_buffer(bin, len, "old.tmpc", NULL, NULL, NULL, &err));
		tm_put_le(bin + 8, 4, 3);
		tm_put_le(bin + len - 8, 8, tm_fnv_words(bin, len - 8));
		cr_assert_null(
		    tmatch_profile_load_buffer(bin, len, "old.tmpc", NULL, NULL, NULL, &err));
		cr_assert(strstr(err.msg, "checksum mismatch"), "%s", err.msg);
		free(a);
		free(b);
		free(bin);
		tmatch_profile_destroy(p);
	}
	cr_assert(seen[1] && seen[2], "versions 1 and 2 both built");
}
