/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_placement_stepplan.c - the compiled step plan (placement/plan.c):
 * a layout written as a plan and read back node by node gives each node its
 * own ranks, leaves, switch position and traffic; every binding that differs
 * is named; a damaged file (header, index entry, slice, length, magic,
 * version) is refused with what is wrong; a node maps from its slice,
 * taking the plan's leaves only when its tree has the planner's shape.
 */
#include "placement/layout.h"
#include "placement/node.h"
#include "placement/plan.h"
#include "old_formats.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#define SIDE   8
#define NRANKS (SIDE * SIDE)
#define NODE   "synthetic:pack:2 core:8 pu:1"

/* An 8 x 8 grid, ranks scrambled so that block is a poor layout. */
static tmatch_comm_t *grid(void)
{
	int src[4 * NRANKS], dst[4 * NRANKS], n = 0, perm[NRANKS];
	double w[4 * NRANKS];
	tmatch_error_t err;
	tmatch_comm_t *c;

	for (int i = 0; i < NRANKS; i++)
		perm[i] = (i * 37 + 11) % NRANKS; /* 37 is prime to 64 */
	for (int y = 0; y < SIDE; y++)
		for (int x = 0; x < SIDE; x++) {
			int r = y * SIDE + x;

			if (x + 1 < SIDE)
				src[n] = perm[r], dst[n] = perm[r + 1], w[n++] = 100 + r;
			if (y + 1 < SIDE)
				src[n] = perm[r], dst[n] = perm[r + SIDE], w[n++] = 50 + r;
		}
	c = tmatch_comm_from_edges(NRANKS, (size_t)n, src, dst, w, &err);
	cr_assert_not_null(c, "%s", err.msg);
	return c;
}

struct fixture {
	char dir[TM_TMP_MAX], conf[TM_TMP_MAX + 64], plan[TM_TMP_MAX + 64];
	tmatch_comm_t *comm;
	tmatch_place_layout_t *lay;
	tmatch_place_plan_in_t pin;
	char *used[4];
};

static void make_plan(struct fixture *f)
{
	tmatch_place_layout_in_t in;
	tmatch_error_t err;
	int cap[4] = {16, 16, 16, 16};
	FILE *out;

	tm_tmpname(f->dir, sizeof(f->dir), "tm-stepplan-XXXXXX");
	cr_assert_not_null(mkdtemp(f->dir));
	snprintf(f->conf, sizeof(f->conf), "%s/topology.conf", f->dir);
	snprintf(f->plan, sizeof(f->plan), "%s/step.plan", f->dir);
	out = fopen(f->conf, "w");
	cr_assert_not_null(out);
	fputs("SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n[3-4]\n"
	      "SwitchName=top Switches=s[0-1]\n",
	      out);
	fclose(out);
	f->comm = grid();
	memset(&in, 0, sizeof(in));
	in.comm = f->comm;
	in.ntasks = NRANKS;
	in.nodelist = "n[1-4]";
	in.cap = cap;
	in.topology_conf = f->conf;
	in.node_topology = NODE;
	in.seed = 1;
	in.plan = 1;
	cr_assert_eq(tmatch_place_layout(&in, &f->lay, &err), 0, "%s", err.msg);
	cr_assert_not_null(f->lay->leaf_in_node);
	cr_assert_not_null(f->lay->prefix);
	memset(&f->pin, 0, sizeof(f->pin));
	f->pin.bind.job_id = 77;
	f->pin.bind.step_id = TMATCH_PLAN_ANY_STEP;
	f->pin.bind.ntasks = NRANKS;
	for (int i = 0; i < 4; i++)
		f->used[i] = f->lay->node_name[i];
	f->pin.bind.nodes_hash = tmatch_place_nodes_hash(f->used, 4);
	f->pin.bind.profile_size = 1234;
	f->pin.bind.profile_mtime_ns = 5678;
	f->pin.bind.node_sig = f->lay->node_sig;
	snprintf(f->pin.bind.mapper, sizeof(f->pin.bind.mapper), "default");
	f->pin.comm = f->comm;
	f->pin.nnodes = f->lay->nnodes;
	f->pin.node_name = f->lay->node_name;
	f->pin.node_of_rank = f->lay->node_of_rank;
	f->pin.leaf_of_rank = f->lay->leaf_in_node;
	f->pin.prefix = f->lay->prefix;
	out = fopen(f->plan, "w");
	cr_assert_not_null(out);
	cr_assert_eq(tmatch_place_plan_write(&f->pin, out, &err), 0, "%s", err.msg);
	cr_assert_eq(fclose(out), 0);
}

static void drop(struct fixture *f)
{

	tmatch_place_layout_destroy(f->lay);
	tmatch_comm_destroy(f->comm);
	tm_rmtree(f->dir);
}

static tmatch_place_slice_t *slice_of(const char *path, const char *node, tmatch_error_t *err)
{
	int fd = open(path, O_RDONLY);
	tmatch_place_slice_t *s;

	cr_assert_geq(fd, 0);
	s = tmatch_place_plan_read_slice(fd, path, node, err);
	close(fd);
	return s;
}

Test(stepplan, each_node_reads_back_its_own_slice)
{
	struct fixture f;
	tmatch_error_t err;
	int seen[NRANKS] = {0};

	make_plan(&f);
	for (int i = 0; i < 4; i++) {
		tmatch_place_slice_t *s = slice_of(f.plan, f.lay->node_name[i], &err);
		int k = 0;

		cr_assert_not_null(s, "%s", err.msg);
		cr_expect_str_eq(s->node, f.lay->node_name[i]);
		cr_expect_eq(s->bind.job_id, 77);
		cr_expect_eq(s->bind.step_id, TMATCH_PLAN_ANY_STEP);
		cr_expect_eq(s->bind.ntasks, NRANKS);
		cr_expect_eq(s->bind.nodes_hash, f.pin.bind.nodes_hash);
		cr_expect_eq(s->bind.node_sig, f.lay->node_sig);
		cr_expect_str_eq(s->bind.mapper, "default");
		/* the ranks the layout put on this node, ascending, with their leaves */
		for (int r = 0; r < NRANKS; r++) {
			if (f.lay->node_of_rank[r] != i)
				continue;
			cr_assert_lt(k, s->nranks);
			cr_expect_eq(s->rank[k], r);
			cr_expect_eq(s->leaf[k], f.lay->leaf_in_node[r]);
			seen[r]++;
			k++;
		}
		cr_expect_eq(k, s->nranks);
		/* its traffic is the profile's among those ranks */
		for (int a = 0; a < s->nranks; a++)
			for (int b = 0; b < s->nranks; b++)
				cr_expect_float_eq(tmatch_comm_get(s->comm, a, b),
				                   tmatch_comm_get(f.comm, s->rank[a], s->rank[b]),
				                   1e-9);
		/* switch levels, then the node itself */
		cr_assert_geq(s->prefix.nlevels, 2);
		cr_expect_str_eq(s->prefix.level[s->prefix.nlevels - 1].name, "node");
		cr_expect_eq(s->prefix.level[s->prefix.nlevels - 1].global, i);
		cr_expect_eq(s->prefix.level[s->prefix.nlevels - 2].global, i / 2,
		             "n1, n2 under s0; n3, n4 under s1");
		tmatch_place_slice_destroy(s);
	}
	for (int r = 0; r < NRANKS; r++)
		cr_expect_eq(seen[r], 1, "rank %d in exactly one slice", r);
	errno = 0;
	cr_expect_null(slice_of(f.plan, "n9", &err));
	cr_expect_eq(errno, ENOENT);
	cr_expect_not_null(strstr(err.msg, "no slice for node n9"), "%s", err.msg);
	drop(&f);
}

Test(stepplan, every_binding_that_differs_is_named)
{
	tmatch_place_plan_bind_t plan, step;
	char why[256];

	memset(&plan, 0, sizeof(plan));
	plan.job_id = 10;
	plan.step_id = TMATCH_PLAN_ANY_STEP;
	plan.ntasks = 64;
	plan.nodes_hash = 99;
	plan.profile_size = 1000;
	plan.profile_mtime_ns = 2000000000;
	step = plan;
	step.step_id = 3;
	cr_expect_eq(tmatch_place_plan_matches(&plan, &step, why, sizeof(why)), 0, "any step");
	step.job_id = 11;
	cr_expect_eq(tmatch_place_plan_matches(&plan, &step, why, sizeof(why)),
	             TMATCH_PLACE_PLAN_OTHER_JOB);
	cr_expect_not_null(strstr(why, "job 10, this is job 11"), "%s", why);
	step = plan;
	plan.step_id = 2;
	step.step_id = 3;
	cr_expect_eq(tmatch_place_plan_matches(&plan, &step, why, sizeof(why)),
	             TMATCH_PLACE_PLAN_OTHER_STEP);
	cr_expect_not_null(strstr(why, "step 2, this is step 3"), "%s", why);
	step = plan;
	step.ntasks = 32;
	cr_expect_eq(tmatch_place_plan_matches(&plan, &step, why, sizeof(why)),
	             TMATCH_PLACE_PLAN_OTHER_TASKS);
	cr_expect_not_null(strstr(why, "places 64 tasks, the step has 32"), "%s", why);
	step = plan;
	step.nodes_hash = 98;
	cr_expect_eq(tmatch_place_plan_matches(&plan, &step, why, sizeof(why)),
	             TMATCH_PLACE_PLAN_OTHER_NODES);
	cr_expect_not_null(strstr(why, "other nodes"), "%s", why);
	step = plan;
	step.profile_mtime_ns += 1500000000;
	cr_expect_eq(tmatch_place_plan_matches(&plan, &step, why, sizeof(why)),
	             TMATCH_PLACE_PLAN_OTHER_PROFILE);
	cr_expect_not_null(strstr(why, "profile changed since"), "%s", why);
	cr_expect_not_null(strstr(why, "1.500 s after"), "%s", why);
	step = plan;
	plan.job_id = 0; /* made outside a job: never used */
	step.job_id = 0;
	cr_expect_eq(tmatch_place_plan_matches(&plan, &step, why, sizeof(why)),
	             TMATCH_PLACE_PLAN_OTHER_JOB);
}

Test(stepplan, node_sets_hash_alike_in_any_order)
{
	char *a[] = {"n1", "n2", "n3"}, *b[] = {"n3", "n1", "n2"}, *c[] = {"n1", "n2", "n4"};

	cr_expect_eq(tmatch_place_nodes_hash(a, 3), tmatch_place_nodes_hash(b, 3));
	cr_expect_neq(tmatch_place_nodes_hash(a, 3), tmatch_place_nodes_hash(c, 3));
	cr_expect_neq(tmatch_place_nodes_hash(a, 2), tmatch_place_nodes_hash(a, 3));
}

/* Copy the plan with one byte changed (or cut to len), read n1's slice. */
static void damaged(const struct fixture *f, long at, long cut, const char *node, const char *frag)
{
	char path[TM_TMP_MAX + 64], cmd[2 * TM_TMP_MAX + 200];
	tmatch_place_slice_t *s;
	tmatch_error_t err;
	int fd;

	snprintf(path, sizeof(path), "%s/damaged.plan", f->dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", f->plan, path);
	cr_assert_eq(system(cmd), 0);
	fd = open(path, O_RDWR);
	cr_assert_geq(fd, 0);
	if (at >= 0) {
		unsigned char c;

		cr_assert_eq(pread(fd, &c, 1, at), 1);
		c ^= 0x5a;
		cr_assert_eq(pwrite(fd, &c, 1, at), 1);
	}
	if (cut >= 0)
		cr_assert_eq(ftruncate(fd, cut), 0);
	errno = 0;
	s = tmatch_place_plan_read_slice(fd, path, node, &err);
	close(fd);
	cr_expect_null(s, "byte %ld / cut %ld accepted", at, cut);
	tmatch_place_slice_destroy(s);
	cr_expect_eq(errno, EINVAL);
	cr_expect_str_eq(err.file, path);
	cr_expect_not_null(strstr(err.msg, frag), "byte %ld: %s", at, err.msg);
}

Test(stepplan, damaged_files_are_refused_with_what_is_wrong)
{
	struct fixture f;
	tmatch_error_t err;
	tmatch_place_slice_t *s;
	long size;
	FILE *in;

	make_plan(&f);
	in = fopen(f.plan, "r");
	cr_assert_not_null(in);
	fseek(in, 0, SEEK_END);
	size = ftell(in);
	fclose(in);
	damaged(&f, 0, -1, "n1", "not a step plan");
	damaged(&f, 8, -1, "n1", "plan version");
	damaged(&f, 20, -1, "n1", "header's checksum");
	damaged(&f, -1, size - 8, "n1", "truncated");
	damaged(&f, 128 + 70, -1, "n1", "index entry");              /* n1's entry, its offset */
	damaged(&f, 128 + 4 * 96 + 100, -1, "n1", "does not check"); /* n1's slice, first */
	/* the last slice is n4's: n1 still reads (the rest is never touched) */
	damaged(&f, size - 20, -1, "n4", "slice of n4 does not check");
	{
		char path[TM_TMP_MAX + 64];

		snprintf(path, sizeof(path), "%s/damaged.plan", f.dir);
		s = slice_of(path, "n1", &err);
		cr_expect_not_null(s, "%s", err.msg);
		tmatch_place_slice_destroy(s);
	}
	drop(&f);
}

/* The profile stamp of path as a plan of version v records it. */
static uint64_t stamp_of(const char *path, uint32_t v)
{
	uint64_t size, mtime, hash = 0;
	tmatch_error_t err;
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_eq(tmatch_place_profile_stamp(fd, path, v, &size, &mtime, &hash, &err), 0, "%s",
	             err.msg);
	close(fd);
	return hash;
}

/* A plan written now is version 2: its header, each index entry and each
   slice sealed with XXH3 (computed here over the bytes with libxxhash),
   and a profile's content hash is the XXH3 of its bytes. */
Test(stepplan, written_as_version_2_sealed_with_xxh3)
{
	struct fixture f;
	unsigned char *b;
	size_t len;
	char prof[TM_TMP_MAX + 64];
	static const char text[] = "format: comm-profile\nranks: 2\n# not a whole word count\n";

	make_plan(&f);
	b = tm_slurp(f.plan, &len);
	cr_assert_eq(tm_get_le(b + 8, 4), 2, "the plan's version");
	cr_assert_eq(tm_get_le(b + 120, 8), (uint64_t)XXH3_64bits(b, 120), "the header's XXH3");
	cr_assert_eq(tm_get_le(b + 12, 4), 4);
	for (int k = 0; k < 4; k++) {
		const unsigned char *e = b + 128 + 96 * k;
		uint64_t off = tm_get_le(e + 64, 8), n = tm_get_le(e + 72, 8);

		cr_assert_eq(tm_get_le(e + 88, 8), (uint64_t)XXH3_64bits(e, 88), "entry %d", k);
		cr_assert_leq(off + n, len);
		cr_assert_eq(tm_get_le(b + off + n - 8, 8), (uint64_t)XXH3_64bits(b + off, n - 8),
		             "the slice of entry %d", k);
	}
	free(b);
	snprintf(prof, sizeof(prof), "%s/p.yml", f.dir);
	tm_spill(prof, (const unsigned char *)text, strlen(text));
	cr_assert_eq(stamp_of(prof, TMATCH_PLACE_PLAN_VERSION),
	             (uint64_t)XXH3_64bits(text, strlen(text)));
	cr_assert_eq(stamp_of(prof, 1), tm_fnv_words((const unsigned char *)text, strlen(text)),
	             "a plan of version 1's: FNV-1a, the tail zero-padded");
	drop(&f);
}

/* A plan of version 1 (FNV-1a sealed, built here from a plan written now)
   is still read: the same header and the same slices; a byte changed in
   one of its slices is still refused with what does not check. */
Test(stepplan, plans_of_version_1_are_still_read)
{
	struct fixture f;
	tmatch_place_plan_bind_t b2, b1;
	tmatch_error_t err;
	unsigned char *b;
	size_t len;
	uint32_t n2, n1;
	char old[TM_TMP_MAX + 64];
	int fd;

	make_plan(&f);
	b = tm_slurp(f.plan, &len);
	cr_assert_eq(tm_plan_to_v1(b, len, 0x1234), 0);
	snprintf(old, sizeof(old), "%s/old.plan", f.dir);
	tm_spill(old, b, len);
	fd = open(f.plan, O_RDONLY);
	cr_assert_eq(tmatch_place_plan_read_head(fd, f.plan, &b2, &n2, &err), 0, "%s", err.msg);
	close(fd);
	fd = open(old, O_RDONLY);
	cr_assert_eq(tmatch_place_plan_read_head(fd, old, &b1, &n1, &err), 0, "%s", err.msg);
	close(fd);
	cr_assert_eq(b2.version, 2);
	cr_assert_eq(b1.version, 1);
	cr_assert_eq(b1.profile_hash, 0x1234);
	cr_assert_eq(n1, n2);
	cr_assert_eq(b1.job_id, b2.job_id);
	cr_assert_eq(b1.nodes_hash, b2.nodes_hash);
	for (int i = 0; i < 4; i++) {
		tmatch_place_slice_t *s2 = slice_of(f.plan, f.used[i], &err), *s1;

		cr_assert_not_null(s2, "%s", err.msg);
		s1 = slice_of(old, f.used[i], &err);
		cr_assert_not_null(s1, "%s: %s", f.used[i], err.msg);
		cr_assert_eq(s1->nranks, s2->nranks);
		cr_assert_eq(memcmp(s1->rank, s2->rank, sizeof(int) * (size_t)s1->nranks), 0);
		cr_assert_eq(memcmp(s1->leaf, s2->leaf, sizeof(int) * (size_t)s1->nranks), 0);
		cr_assert_eq(tmatch_comm_nnz(s1->comm), tmatch_comm_nnz(s2->comm));
		tmatch_place_slice_destroy(s1);
		tmatch_place_slice_destroy(s2);
	}
	/* n4's slice is the last: one byte of it changed */
	b[len - 20] ^= 0x5a;
	tm_spill(old, b, len);
	cr_assert_null(slice_of(old, "n4", &err));
	cr_assert(strstr(err.msg, "damaged plan: the slice of n4 does not check"), "%s", err.msg);
	free(b);
	drop(&f);
}

/* The node side: a slice instead of the profile. */
static tmatch_place_node_t *node_from_slice(const tmatch_place_slice_t *s, const char *topology,
                                            const int *ranks, int nlocal, tmatch_error_t *err)
{
	tmatch_place_node_in_t in;
	tmatch_place_node_t *r = NULL;
	static tmatch_config_t cfg;

	tmatch_config_init(&cfg);
	cfg.dry_run = 1;
	memset(&in, 0, sizeof(in));
	in.cfg = &cfg;
	in.slice = s;
	in.user_profile = 1;
	in.node_name = s->node;
	in.node_count = 4;
	in.ranks = ranks;
	in.nlocal = nlocal;
	in.ntasks_total = NRANKS;
	in.topology = topology;
	return tmatch_place_node(&in, &r, NULL, err) == 0 ? r : NULL;
}

Test(stepplan, a_node_maps_from_its_slice)
{
	struct fixture f;
	tmatch_error_t err;
	tmatch_place_slice_t *s;
	tmatch_place_node_t *r;
	int ranks[16];

	make_plan(&f);
	s = slice_of(f.plan, "n3", &err);
	cr_assert_not_null(s, "%s", err.msg);
	cr_assert_eq(s->nranks, 16);
	/* Slurm's local order need not be the plan's: reversed here */
	for (int a = 0; a < 16; a++)
		ranks[a] = s->rank[15 - a];
	/* the planner's node model: its leaves, as they are */
	r = node_from_slice(s, NODE, ranks, 16, &err);
	cr_assert_not_null(r, "%s", err.msg);
	cr_expect_eq(r->status, TMATCH_PLACE_PLACED);
	cr_expect_not_null(strstr(r->mapper, "plan-default"), "%s", r->mapper);
	for (int a = 0; a < 16; a++) {
		char *full = tmatch_affinity_pos_string(&r->task[a].pos, TMATCH_AFFINITY_POS_FULL);

		cr_expect_eq(r->task[a].rank, ranks[a]);
		cr_expect_eq(r->task[a].leaf, s->leaf[15 - a]);
		cr_expect_not_null(strstr(full, "node=0/2"), "n3 is the first node of s1: %s",
		                   full);
		free(full);
	}
	cr_expect_leq(r->cost, r->cost_packed);
	tmatch_place_node_destroy(r);
	/* another node shape: mapped here from the slice's traffic */
	r = node_from_slice(s, "synthetic:pack:1 core:16 pu:1", ranks, 16, &err);
	cr_assert_not_null(r, "%s", err.msg);
	cr_expect_not_null(strstr(r->mapper, "-on-plan-slice"), "%s", r->mapper);
	cr_expect_eq(r->ntasks, 16);
	tmatch_place_node_destroy(r);
	/* ranks the plan put elsewhere */
	for (int q = 0; q < NRANKS; q++) {
		int here = 0;

		for (int a = 0; a < 16; a++)
			here |= s->rank[a] == q;
		if (!here) {
			ranks[0] = q;
			break;
		}
	}
	errno = 0;
	cr_expect_null(node_from_slice(s, NODE, ranks, 16, &err));
	cr_expect_not_null(strstr(err.msg, "not for this step's distribution"), "%s", err.msg);
	cr_expect_null(node_from_slice(s, NODE, ranks, 8, &err));
	cr_expect_not_null(strstr(err.msg, "the plan puts 16 tasks on n3, Slurm started 8"), "%s",
	                   err.msg);
	tmatch_place_slice_destroy(s);
	drop(&f);
}
