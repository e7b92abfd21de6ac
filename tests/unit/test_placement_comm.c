/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_comm.c - the matrix a placement maps (tmatch_place_comm,
 * placement/step.c): which collectives it counts - by default those a
 * version 2 profile says are the messages collectives send (collectives:
 * wire), never a version 1 profile's (recorded before: placed as they were)
 * nor a logical model's unless coll=on - and that every way of loading a
 * profile (the plugin's, treematch map's, a compiled one's rows) gives that
 * same matrix.
 */
#include "placement/inputs.h"
#include "placement/matrix.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VALID TMATCH_SRCDIR "/tests/fixtures/profile/valid/"

static tmatch_profile_t *load(const char *path)
{
	tmatch_error_t err;
	tmatch_profile_t *p = tmatch_profile_load(path, NULL, NULL, NULL, &err);

	cr_assert_not_null(p, "%s: %s", path, err.msg);
	return p;
}

/* a and b hold the same weights */
static void expect_same(const tmatch_comm_t *a, const tmatch_comm_t *b, const char *what)
{
	int n = tmatch_comm_order(a);

	cr_assert_eq(n, tmatch_comm_order(b), "%s: order", what);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			cr_assert_eq(tmatch_comm_get(a, i, j), tmatch_comm_get(b, i, j),
			             "%s: (%d, %d) %g != %g", what, i, j, tmatch_comm_get(a, i, j),
			             tmatch_comm_get(b, i, j));
}

/* place_comm(p, metric -1, coll) against to_comm over `sets` */
static void expect_sets(const tmatch_profile_t *p, int coll, unsigned sets, const char *what)
{
	tmatch_error_t err;
	tmatch_comm_t *got = tmatch_place_comm(p, -1, coll, &err);
	tmatch_comm_t *want =
	    tmatch_profile_to_comm(p, tmatch_profile_placement_metric(p), sets, &err);

	cr_assert_not_null(got, "%s: %s", what, err.msg);
	cr_assert_not_null(want, "%s: %s", what, err.msg);
	expect_same(got, want, what);
	tmatch_comm_destroy(got);
	tmatch_comm_destroy(want);
}

static const unsigned P2P = TMATCH_PROFILE_P2P, BOTH = TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL;

Test(place_comm, recorded_collectives_count_by_default)
{
	tmatch_profile_t *p = load(VALID "coll-wire-4.yml");
	tmatch_error_t err;
	tmatch_comm_t *c;

	cr_expect_eq(tmatch_profile_collectives(p), TMATCH_COLL_WIRE);
	expect_sets(p, -1, BOTH, "wire, default");
	expect_sets(p, 1, BOTH, "wire, coll=on");
	expect_sets(p, 0, P2P, "wire, coll=off");
	/* ranks 1 and 2 exchange nothing but the allreduce's messages */
	c = tmatch_place_comm(p, -1, -1, &err);
	cr_assert_not_null(c);
	cr_expect_eq(tmatch_comm_get(c, 0, 1), 16.0, "8 bytes each way");
	cr_expect_eq(tmatch_comm_get(c, 0, 3), 200.0);
	tmatch_comm_destroy(c);
	tmatch_profile_destroy(p);

	p = load(VALID "coll-default-wire.yml"); /* version 2 without the key */
	expect_sets(p, -1, BOTH, "version 2, no key");
	tmatch_profile_destroy(p);
}

Test(place_comm, a_logical_model_counts_only_when_asked)
{
	tmatch_profile_t *p = load(VALID "coll-logical-4.yml");

	cr_expect_eq(tmatch_profile_collectives(p), TMATCH_COLL_LOGICAL);
	expect_sets(p, -1, P2P, "logical, default");
	expect_sets(p, 1, BOTH, "logical, coll=on");
	expect_sets(p, 0, P2P, "logical, coll=off");
	tmatch_profile_destroy(p);
}

/* Profiles recorded before (version 1, some with a logical coll_edges from
   --collectives): placed exactly as they were. */
Test(place_comm, version_1_profiles_place_as_before)
{
	static const char *const old[] = {TMATCH_SRCDIR "/profile/examples/lammps-8.yml",
	                                  VALID "lammps-8.yml", VALID "coll-key-in-v1.yml",
	                                  VALID "ring-4.yml", VALID "dense-4.yml"};

	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		tmatch_profile_t *p = load(old[i]);

		cr_expect_eq(tmatch_profile_collectives(p), TMATCH_COLL_UNSTATED, "%s", old[i]);
		expect_sets(p, -1, P2P, old[i]);
		expect_sets(p, 0, P2P, old[i]);
		expect_sets(p, 1, BOTH, old[i]);
		tmatch_profile_destroy(p);
	}
}

Test(place_comm, sets_by_policy)
{
	cr_expect_eq(tmatch_place_comm_sets(-1), TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL_WIRE);
	cr_expect_eq(tmatch_place_comm_sets(0), TMATCH_PROFILE_P2P);
	cr_expect_eq(tmatch_place_comm_sets(1), TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL);
}

/* treematch map, layout and draw read a file through tmatch_place_comm_load;
   a node reads its rows of a compiled profile: the plugin's matrix, both. */
Test(place_comm, every_loader_gives_the_plugins_matrix)
{
	static const char *const files[] = {VALID "coll-wire-4.yml", VALID "coll-logical-4.yml",
	                                    TMATCH_SRCDIR "/profile/examples/lammps-8.yml"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		tmatch_profile_t *p = load(files[i]);
		tmatch_error_t err;
		tmatch_comm_t *want = tmatch_place_comm(p, -1, -1, &err), *got, *sub, *cut;
		char path[] = "/tmp/place-comm-XXXXXX";
		int fd = mkstemp(path), n = tmatch_profile_ranks(p), ranks[3];
		FILE *f;

		cr_assert_not_null(want, "%s", err.msg);
		got = tmatch_place_comm_load(files[i], NULL, NULL, &err);
		cr_assert_not_null(got, "%s: %s", files[i], err.msg);
		expect_same(got, want, files[i]);
		tmatch_comm_destroy(got);

		cr_assert_geq(fd, 0);
		cr_assert_not_null(f = fdopen(fd, "w"));
		cr_assert_eq(tmatch_profile_compile(p, f, &err), 0, "%s", err.msg);
		cr_assert_eq(fclose(f), 0);
		got = tmatch_place_comm_load(path, NULL, NULL, &err);
		cr_assert_not_null(got, "%s: %s", files[i], err.msg);
		expect_same(got, want, "compiled, whole");
		tmatch_comm_destroy(got);
		/* three ranks' rows only, in another order */
		ranks[0] = n - 1;
		ranks[1] = 0;
		ranks[2] = n / 2;
		sub = tmatch_place_comm_load_ranks(path, ranks, 3, NULL, NULL, &err);
		cut = tmatch_comm_submatrix(want, ranks, 3, &err);
		cr_assert_not_null(sub, "%s: %s", files[i], err.msg);
		cr_assert_not_null(cut);
		expect_same(sub, cut, "compiled, a node's rows");
		tmatch_comm_destroy(sub);
		tmatch_comm_destroy(cut);
		unlink(path);
		tmatch_comm_destroy(want);
		tmatch_profile_destroy(p);
	}
}

Test(place_comm, errors)
{
	tmatch_error_t err;

	errno = 0;
	cr_expect_null(tmatch_place_comm(NULL, -1, -1, &err));
	cr_expect_eq(errno, EINVAL);
}
