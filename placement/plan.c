/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plan.c - the compiled step plan (placement/plan.h says what it is for).
 *
 * Layout (little endian, treematch/internal.h; sections start at multiples of 8):
 *   0    "TMPLAN1\n"
 *   8    u32 version (2; 1 is still read), u32 nnodes (slices)
 *   16   u64 job_id
 *   24   u32 step_id, u32 ntasks
 *   32   u64 nodes_hash, u64 profile_size, u64 profile_mtime_ns,
 *        u64 profile_hash (tmatch_place_profile_stamp), u64 node_sig
 *   72   char mapper[32] (NUL-padded)
 *   104  u64 index offset (128), u64 file size
 *   120  u64 checksum of bytes 0..120
 *   128  index: nnodes entries of 96 bytes, sorted by name (strcmp):
 *          char name[64] (NUL-padded), u64 slice offset, u64 slice length,
 *          u32 nranks, u32 0, u64 checksum of the entry's first 88 bytes
 *   then the slices, each:
 *          char name[64], u32 nranks, u32 nedges, u32 nprefix, u32 0,
 *          nprefix x {char name[16], i32 index, i32 count, i32 global, i32 0},
 *          i32 rank[nranks] (ascending), i32 leaf[nranks], padding,
 *          u32 a[nedges], u32 b[nedges] (a < b < nranks), padding,
 *          u64 weight[nedges] (IEEE doubles, finite, > 0),
 *          u64 checksum of the slice before it
 * A node reads the header, the ~log2(nnodes) index entries of its binary
 * search and its slice: the rest of the file is never touched, so each of
 * these carries its own checksum. Version 2's checksums and profile_hash
 * are XXH3 (64 bits); version 1's, the word-wise FNV-1a of
 * treematch/internal.h (the profile's tail zero-padded to a word), still
 * checked when a plan of version 1 is read. The magic stays "TMPLAN1\n":
 * an older treematch then names the version it cannot read.
 */
#include "placement/placement_private.h"
#include "placement/plan.h"
#include "treematch/internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define VERSION      TMATCH_PLACE_PLAN_VERSION
#define HEADER_BYTES 128u
#define ENTRY_BYTES  96u
#define NAME_BYTES   64u
#define LEVEL_BYTES  32u
#define MAX_NODES    (1u << 22)
#define MAX_RANKS    65536u /* one node's tasks, as slurmstepd accepts them */

static const unsigned char magic[8] = {'T', 'M', 'P', 'L', 'A', 'N', '1', '\n'};

/* ---- hashes ------------------------------------------------------------- */

/* FNV-1a of bytes: the nodes' and the node model's identities below, which a
   node computes again to compare with a plan's (of either version), not
   checksums of the file. */
static uint64_t fnv_bytes(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * TMATCH__FNV_PRIME;
	return h;
}

/* splitmix64's finaliser: spreads a hash before the names are summed. */
static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t tmatch_place_nodes_hash(char *const *names, int n)
{
	uint64_t h = mix((uint64_t)n);

	for (int i = 0; names && i < n; i++)
		h += mix(fnv_bytes(TMATCH__FNV_BASIS, names[i], strlen(names[i])));
	return h;
}

uint64_t tmatch_place_node_sig(const tmatch_affinity_tree_t *node)
{
	const tmatch_topo_t *topo = tmatch_affinity_tree_topo(node);
	uint64_t h = TMATCH__FNV_BASIS;
	char text[2048];
	int n;

	if (!topo || tmatch_topo_format(topo, text, sizeof(text)) < 0)
		return 0;
	h = fnv_bytes(h, text, strlen(text));
	n = tmatch_topo_nb_leaves(topo);
	for (int l = 0; l < n; l++) {
		unsigned char real = (unsigned char)tmatch_affinity_leaf_is_real(node, l);

		h = fnv_bytes(h, &real, 1);
	}
	return h ? h : 1;
}

/* The checksum algorithm of a plan of version v. */
static tmatch__sum_t plan_sum(uint32_t v)
{
	return v >= 2 ? TMATCH__SUM_XXH3 : TMATCH__SUM_FNV1A;
}

int tmatch_place_profile_stamp(int fd, const char *path, uint32_t plan_version, uint64_t *size,
                               uint64_t *mtime_ns, uint64_t *hash, tmatch_error_t *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return tmatch_error_set(err, errno, path, 0, 0, "cannot stat: %s", strerror(errno));
	*size = (uint64_t)st.st_size;
	*mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec;
	if (hash && tmatch__checksum_fd(fd, *size, plan_sum(plan_version), hash) < 0)
		return tmatch_error_set(err, errno == ENOMEM ? ENOMEM : EIO, path, 0, 0, "%s",
		                        errno == ENOMEM ? "out of memory" : "read error");
	return 0;
}

int tmatch_place_plan_matches(const tmatch_place_plan_bind_t *plan,
                              const tmatch_place_plan_bind_t *step, char *why, size_t len)
{
	if (plan->job_id == 0 || plan->job_id != step->job_id) {
		snprintf(why, len, "it was made for job %llu, this is job %llu",
		         (unsigned long long)plan->job_id, (unsigned long long)step->job_id);
		return TMATCH_PLACE_PLAN_OTHER_JOB;
	}
	if (plan->step_id != TMATCH_PLAN_ANY_STEP && plan->step_id != step->step_id) {
		snprintf(why, len, "it was made for step %u, this is step %u", plan->step_id,
		         step->step_id);
		return TMATCH_PLACE_PLAN_OTHER_STEP;
	}
	if (plan->ntasks != step->ntasks) {
		snprintf(why, len, "it places %u tasks, the step has %u", plan->ntasks,
		         step->ntasks);
		return TMATCH_PLACE_PLAN_OTHER_TASKS;
	}
	if (plan->nodes_hash != step->nodes_hash) {
		snprintf(why, len, "it was made for other nodes than the step's");
		return TMATCH_PLACE_PLAN_OTHER_NODES;
	}
	if (plan->profile_size != step->profile_size ||
	    plan->profile_mtime_ns != step->profile_mtime_ns) {
		snprintf(why, len,
		         "the profile changed since (%llu bytes, modified %.3f s after the plan's "
		         "copy)",
		         (unsigned long long)step->profile_size,
		         ((double)step->profile_mtime_ns - (double)plan->profile_mtime_ns) * 1e-9);
		return TMATCH_PLACE_PLAN_OTHER_PROFILE;
	}
	return 0;
}

/* ---- writer ------------------------------------------------------------- */

struct slice_sizes {
	uint32_t nranks, nedges, nprefix;
	uint64_t offset, length;
};

static uint64_t slice_length(uint64_t nranks, uint64_t nedges, uint64_t nprefix)
{
	return NAME_BYTES + 16 + LEVEL_BYTES * nprefix + tmatch__pad8(8 * nranks) +
	       tmatch__pad8(8 * nedges) + 8 * nedges + 8;
}

struct named {
	const char *name;
	int node;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

static void put_name(unsigned char *p, const char *name, size_t cap)
{
	memset(p, 0, cap);
	memcpy(p, name, strnlen(name, cap - 1));
}

static int write_slice(FILE *out, const tmatch_place_plan_in_t *in, int node,
                       const struct slice_sizes *sz, const int *ranks, const uint32_t *ea,
                       const uint32_t *eb, const double *ew)
{
	unsigned char *buf = calloc(1, (size_t)sz->length), *p;
	const tmatch_affinity_pos_t *pre = &in->prefix[node];
	int rc;

	if (!buf)
		return -1;
	put_name(buf, in->node_name[node], NAME_BYTES);
	tmatch__put32(buf + 64, sz->nranks);
	tmatch__put32(buf + 68, sz->nedges);
	tmatch__put32(buf + 72, sz->nprefix);
	p = buf + NAME_BYTES + 16;
	for (uint32_t k = 0; k < sz->nprefix; k++, p += LEVEL_BYTES) {
		put_name(p, pre->level[k].name, 16);
		tmatch__put32(p + 16, (uint32_t)pre->level[k].index);
		tmatch__put32(p + 20, (uint32_t)pre->level[k].count);
		tmatch__put32(p + 24, (uint32_t)pre->level[k].global);
	}
	for (uint32_t i = 0; i < sz->nranks; i++) {
		tmatch__put32(p + 4 * i, (uint32_t)ranks[i]);
		tmatch__put32(p + 4 * (sz->nranks + i), (uint32_t)in->leaf_of_rank[ranks[i]]);
	}
	p += tmatch__pad8(8 * (uint64_t)sz->nranks);
	for (uint32_t e = 0; e < sz->nedges; e++) {
		uint64_t bits;

		tmatch__put32(p + 4 * e, ea[e]);
		tmatch__put32(p + 4 * (sz->nedges + e), eb[e]);
		memcpy(&bits, &ew[e], 8);
		tmatch__put64(p + tmatch__pad8(8 * (uint64_t)sz->nedges) + 8 * e, bits);
	}
	tmatch__put64(buf + sz->length - 8,
	              tmatch__checksum(TMATCH__SUM_XXH3, buf, (size_t)sz->length - 8));
	rc = fwrite(buf, 1, (size_t)sz->length, out) == sz->length ? 0 : -1;
	free(buf);
	return rc;
}

int tmatch_place_plan_write(const tmatch_place_plan_in_t *in, FILE *out, tmatch_error_t *err)
{
	const int ntasks = in ? (int)in->bind.ntasks : 0;
	int order, nused = 0, rc = -1;
	int *first = NULL, *ranks = NULL, *local = NULL, *used = NULL;
	struct named *sorted = NULL;
	size_t *efirst = NULL, *efill = NULL, nedges = 0;
	uint32_t *ea = NULL, *eb = NULL;
	double *ew = NULL;
	struct slice_sizes *sz = NULL;
	unsigned char head[HEADER_BYTES], entry[ENTRY_BYTES];
	uint64_t at;

	if (!in || !out || !in->comm || in->nnodes < 1 || (unsigned)in->nnodes > MAX_NODES ||
	    !in->node_name || !in->node_of_rank || !in->leaf_of_rank || !in->prefix || ntasks < 1 ||
	    (order = tmatch_comm_order(in->comm)) > ntasks)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_place_plan_write: invalid argument");
	first = calloc((size_t)in->nnodes + 1, sizeof(*first));
	ranks = malloc(sizeof(*ranks) * (size_t)ntasks);
	local = malloc(sizeof(*local) * (size_t)ntasks);
	used = malloc(sizeof(*used) * (size_t)in->nnodes);
	efirst = calloc((size_t)in->nnodes + 1, sizeof(*efirst));
	if (!first || !ranks || !local || !used || !efirst)
		goto nomem;
	/* The ranks of each node, ascending (a counting sort by node). */
	for (int r = 0; r < ntasks; r++) {
		int node = in->node_of_rank[r];

		if (node < 0 || node >= in->nnodes) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0, "rank %d has no node", r);
			goto out;
		}
		first[node + 1]++;
	}
	for (int i = 0; i < in->nnodes; i++) {
		if (first[i + 1] > (int)MAX_RANKS) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0,
			                 "node %s is given %d ranks, more than a node may run (%u)",
			                 in->node_name[i], first[i + 1], MAX_RANKS);
			goto out;
		}
		first[i + 1] += first[i];
	}
	memcpy(used, first, sizeof(*used) * (size_t)in->nnodes);
	for (int r = 0; r < ntasks; r++) {
		int node = in->node_of_rank[r];

		local[r] = used[node] - first[node];
		ranks[used[node]++] = r;
	}
	/* The traffic inside each node: counted, then filled, in one pass each. */
	for (int pass = 0; pass < 2; pass++) {
		for (int r = 0; r < order; r++) {
			const int *cols;
			const double *w;
			int len = tmatch_comm_row(in->comm, r, &cols, &w);

			for (int k = 0; k < len; k++) {
				int c = cols[k], node = in->node_of_rank[r];

				if (c <= r || in->node_of_rank[c] != node)
					continue;
				if (pass == 0) {
					efirst[node + 1]++;
				} else {
					size_t e = efill[node]++;

					ea[e] = (uint32_t)local[r];
					eb[e] = (uint32_t)local[c];
					ew[e] = w[k];
				}
			}
		}
		if (pass == 0) {
			for (int i = 0; i < in->nnodes; i++)
				efirst[i + 1] += efirst[i];
			nedges = efirst[in->nnodes];
			ea = malloc(sizeof(*ea) * (nedges ? nedges : 1));
			eb = malloc(sizeof(*eb) * (nedges ? nedges : 1));
			ew = malloc(sizeof(*ew) * (nedges ? nedges : 1));
			efill = malloc(sizeof(*efill) * (size_t)in->nnodes);
			if (!ea || !eb || !ew || !efill)
				goto nomem;
			memcpy(efill, efirst, sizeof(*efill) * (size_t)in->nnodes);
		}
	}
	/* Slices of the nodes given ranks, in node order; the index by name. */
	sz = calloc((size_t)in->nnodes, sizeof(*sz));
	sorted = malloc(sizeof(*sorted) * (size_t)in->nnodes);
	if (!sz || !sorted)
		goto nomem;
	for (int i = 0; i < in->nnodes; i++)
		if (first[i + 1] > first[i]) {
			if (strlen(in->node_name[i]) >= NAME_BYTES) {
				tmatch_error_set(err, EINVAL, NULL, 0, 0,
				                 "node name '%.80s' is longer than %u bytes",
				                 in->node_name[i], NAME_BYTES - 1);
				goto out;
			}
			sorted[nused].name = in->node_name[i];
			sorted[nused++].node = i;
		}
	at = HEADER_BYTES + (uint64_t)ENTRY_BYTES * (uint64_t)nused;
	for (int i = 0; i < in->nnodes; i++) {
		int np = in->prefix[i].nlevels;

		if (first[i + 1] == first[i])
			continue;
		sz[i].nranks = (uint32_t)(first[i + 1] - first[i]);
		sz[i].nedges = (uint32_t)(efirst[i + 1] - efirst[i]);
		sz[i].nprefix =
		    (uint32_t)(np < 0                            ? 0
		               : np > TMATCH_AFFINITY_MAX_LEVELS ? TMATCH_AFFINITY_MAX_LEVELS
		                                                 : np);
		sz[i].offset = at;
		sz[i].length = slice_length(sz[i].nranks, sz[i].nedges, sz[i].nprefix);
		at += sz[i].length;
	}
	qsort(sorted, (size_t)nused, sizeof(*sorted), by_name);
	for (int k = 1; k < nused; k++)
		if (!strcmp(sorted[k].name, sorted[k - 1].name)) {
			tmatch_error_set(err, EINVAL, NULL, 0, 0, "node %s is listed twice",
			                 sorted[k].name);
			goto out;
		}

	memset(head, 0, sizeof(head));
	memcpy(head, magic, 8);
	tmatch__put32(head + 8, VERSION);
	tmatch__put32(head + 12, (uint32_t)nused);
	tmatch__put64(head + 16, in->bind.job_id);
	tmatch__put32(head + 24, in->bind.step_id);
	tmatch__put32(head + 28, in->bind.ntasks);
	tmatch__put64(head + 32, in->bind.nodes_hash);
	tmatch__put64(head + 40, in->bind.profile_size);
	tmatch__put64(head + 48, in->bind.profile_mtime_ns);
	tmatch__put64(head + 56, in->bind.profile_hash);
	tmatch__put64(head + 64, in->bind.node_sig);
	put_name(head + 72, in->bind.mapper, 32);
	tmatch__put64(head + 104, HEADER_BYTES);
	tmatch__put64(head + 112, at);
	tmatch__put64(head + 120, tmatch__checksum(TMATCH__SUM_XXH3, head, 120));
	if (fwrite(head, 1, sizeof(head), out) != sizeof(head))
		goto ioerr;
	for (int k = 0; k < nused; k++) {
		int i = sorted[k].node;

		memset(entry, 0, sizeof(entry));
		put_name(entry, in->node_name[i], NAME_BYTES);
		tmatch__put64(entry + 64, sz[i].offset);
		tmatch__put64(entry + 72, sz[i].length);
		tmatch__put32(entry + 80, sz[i].nranks);
		tmatch__put64(entry + 88, tmatch__checksum(TMATCH__SUM_XXH3, entry, 88));
		if (fwrite(entry, 1, sizeof(entry), out) != sizeof(entry))
			goto ioerr;
	}
	for (int i = 0; i < in->nnodes; i++)
		if (sz[i].nranks && write_slice(out, in, i, &sz[i], ranks + first[i],
		                                ea + efirst[i], eb + efirst[i], ew + efirst[i]) < 0)
			goto ioerr;
	if (fflush(out) != 0)
		goto ioerr;
	rc = 0;
	goto out;
ioerr:
	// every goto ioerr follows a failed write
	// NOLINTNEXTLINE(clang-analyzer-unix.Errno)
	tmatch_error_set(err, errno ? errno : EIO, NULL, 0, 0, "cannot write the plan: %s",
	                 strerror(errno ? errno : EIO));
	goto out;
nomem:
	tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
out:
	free(first);
	free(ranks);
	free(local);
	free(used);
	free(efirst);
	free(efill);
	free(ea);
	free(eb);
	free(ew);
	free(sz);
	free(sorted);
	return rc;
}

/* ---- reader ------------------------------------------------------------- */

void tmatch_place_slice_destroy(tmatch_place_slice_t *slice)
{
	if (!slice)
		return;
	free(slice->rank);
	free(slice->leaf);
	tmatch_comm_destroy(slice->comm);
	free(slice);
}

/* A NUL-padded name field: its text, or -1 when it is not terminated or has
   a character a node or level name cannot have. */
static int get_name(char *dst, const unsigned char *src, size_t cap)
{
	size_t n = strnlen((const char *)src, cap);

	if (n == 0 || n == cap)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (src[i] <= 0x20 || src[i] >= 0x7f)
			return -1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

#define DAMAGED(...)                                                                               \
	do {                                                                                       \
		tmatch_error_set(err, EINVAL, path, 0, 0, __VA_ARGS__);                            \
		goto out;                                                                          \
	} while (0)

static int read_header(int fd, const char *path, tmatch_place_slice_t *s, uint64_t *file_size,
                       tmatch_error_t *err)
{
	unsigned char h[HEADER_BYTES];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return tmatch_error_set(err, errno, path, 0, 0, "cannot stat: %s", strerror(errno));
	if (tmatch__pread_all(fd, h, sizeof(h), 0) < 0 || memcmp(h, magic, 8) != 0)
		return tmatch_error_set(err, EINVAL, path, 0, 0,
		                        "not a step plan (make one with treematch layout --plan)");
	s->bind.version = tmatch__get32(h + 8);
	if (s->bind.version < 1 || s->bind.version > VERSION)
		return tmatch_error_set(err, EINVAL, path, 0, 0,
		                        "plan version %u, this treematch reads versions 1 to %u: "
		                        "make it again with this treematch",
		                        s->bind.version, VERSION);
	if (tmatch__get64(h + 120) != tmatch__checksum(plan_sum(s->bind.version), h, 120))
		return tmatch_error_set(err, EINVAL, path, 0, 0,
		                        "damaged plan: the header's checksum does not match");
	s->nnodes = tmatch__get32(h + 12);
	s->bind.job_id = tmatch__get64(h + 16);
	s->bind.step_id = tmatch__get32(h + 24);
	s->bind.ntasks = tmatch__get32(h + 28);
	s->bind.nodes_hash = tmatch__get64(h + 32);
	s->bind.profile_size = tmatch__get64(h + 40);
	s->bind.profile_mtime_ns = tmatch__get64(h + 48);
	s->bind.profile_hash = tmatch__get64(h + 56);
	s->bind.node_sig = tmatch__get64(h + 64);
	memcpy(s->bind.mapper, h + 72, 31);
	s->bind.mapper[31] = '\0';
	for (char *c = s->bind.mapper; *c; c++)
		if (*c < 0x20 || *c >= 0x7f)
			*c = '?';
	*file_size = tmatch__get64(h + 112);
	if (*file_size != (uint64_t)st.st_size)
		return tmatch_error_set(err, EINVAL, path, 0, 0,
		                        "damaged plan: %llu bytes, its header says %llu (truncated "
		                        "or appended to)",
		                        (unsigned long long)st.st_size,
		                        (unsigned long long)*file_size);
	if (tmatch__get64(h + 104) != HEADER_BYTES || s->nnodes < 1 || s->nnodes > MAX_NODES ||
	    HEADER_BYTES + (uint64_t)ENTRY_BYTES * s->nnodes > *file_size || s->bind.ntasks < 1)
		return tmatch_error_set(err, EINVAL, path, 0, 0,
		                        "damaged plan: impossible node or task counts");
	return 0;
}

int tmatch_place_plan_read_head(int fd, const char *path, tmatch_place_plan_bind_t *bind,
                                uint32_t *nnodes, tmatch_error_t *err)
{
	tmatch_place_slice_t s;
	uint64_t size;

	memset(&s, 0, sizeof(s));
	if (read_header(fd, path, &s, &size, err) < 0)
		return -1;
	*bind = s.bind;
	*nnodes = s.nnodes;
	return 0;
}

/* Index entry k: name, slice offset and length, checked. */
static int read_entry(int fd, const char *path, uint32_t version, uint32_t k, uint64_t file_size,
                      char *name, uint64_t *off, uint64_t *len, uint32_t *nranks,
                      tmatch_error_t *err)
{
	unsigned char e[ENTRY_BYTES];

	if (tmatch__pread_all(fd, e, sizeof(e), HEADER_BYTES + (uint64_t)ENTRY_BYTES * k) < 0)
		return tmatch_error_set(err, EIO, path, 0, 0, "read error");
	if (tmatch__get64(e + 88) != tmatch__checksum(plan_sum(version), e, 88) ||
	    get_name(name, e, NAME_BYTES) < 0)
		return tmatch_error_set(err, EINVAL, path, 0, 0,
		                        "damaged plan: index entry %u does not check", k);
	*off = tmatch__get64(e + 64);
	*len = tmatch__get64(e + 72);
	*nranks = tmatch__get32(e + 80);
	if (*off % 8 || *off > file_size || *len > file_size - *off || *nranks < 1 ||
	    *nranks > MAX_RANKS)
		return tmatch_error_set(err, EINVAL, path, 0, 0,
		                        "damaged plan: index entry %u points outside the file", k);
	return 0;
}

tmatch_place_slice_t *tmatch_place_plan_read_slice(int fd, const char *path, const char *node,
                                                   tmatch_error_t *err)
{
	tmatch_place_slice_t *s = calloc(1, sizeof(*s));
	unsigned char *buf = NULL, *p;
	uint32_t lo = 0, hi, nranks = 0, nedges, nprefix;
	uint64_t file_size = 0, off = 0, len = 0, index_end;
	int *src = NULL, *dst = NULL, found = 0;
	double *w = NULL;
	char name[NAME_BYTES];

	if (!s) {
		tmatch_error_set(err, ENOMEM, path, 0, 0, "out of memory");
		return NULL;
	}
	if (!node || !*node) {
		tmatch_error_set(err, EINVAL, path, 0, 0, "no node name to look up");
		goto out;
	}
	if (read_header(fd, path, s, &file_size, err) < 0)
		goto out;
	index_end = HEADER_BYTES + (uint64_t)ENTRY_BYTES * s->nnodes;
	hi = s->nnodes;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c;

		if (read_entry(fd, path, s->bind.version, mid, file_size, name, &off, &len, &nranks,
		               err) < 0)
			goto out;
		c = strcmp(node, name);
		if (c == 0) {
			found = 1;
			break;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!found) {
		tmatch_error_set(err, ENOENT, path, 0, 0, "the plan has no slice for node %.63s",
		                 node);
		goto out;
	}
	if (off < index_end || len < NAME_BYTES + 16 + 8 || len > ((uint64_t)1 << 28))
		DAMAGED("damaged plan: the slice of %s is out of place", name);
	buf = malloc((size_t)len);
	if (!buf) {
		tmatch_error_set(err, ENOMEM, path, 0, 0, "out of memory");
		goto out;
	}
	if (tmatch__pread_all(fd, buf, (size_t)len, off) < 0) {
		tmatch_error_set(err, EIO, path, 0, 0, "read error");
		goto out;
	}
	if (tmatch__get64(buf + len - 8) !=
	    tmatch__checksum(plan_sum(s->bind.version), buf, (size_t)len - 8))
		DAMAGED("damaged plan: the slice of %s does not check", name);
	if (get_name(s->node, buf, NAME_BYTES) < 0 || strcmp(s->node, name) != 0)
		DAMAGED("damaged plan: the index sends %s to another node's slice", name);
	nedges = tmatch__get32(buf + 68);
	nprefix = tmatch__get32(buf + 72);
	if (tmatch__get32(buf + 64) != nranks || nprefix > TMATCH_AFFINITY_MAX_LEVELS ||
	    (uint64_t)nedges > (uint64_t)nranks * (nranks - 1) / 2 ||
	    slice_length(nranks, nedges, nprefix) != len)
		DAMAGED("damaged plan: the slice of %s has impossible sizes", name);
	p = buf + NAME_BYTES + 16;
	s->prefix.nlevels = (int)nprefix;
	for (uint32_t k = 0; k < nprefix; k++, p += LEVEL_BYTES) {
		int32_t idx = (int32_t)tmatch__get32(p + 16), cnt = (int32_t)tmatch__get32(p + 20),
		        glob = (int32_t)tmatch__get32(p + 24);

		if (get_name(s->prefix.level[k].name, p, 16) < 0 || idx < 0 || cnt < 1 ||
		    idx >= cnt || glob < 0)
			DAMAGED("damaged plan: the position of %s is not valid", name);
		s->prefix.level[k].index = idx;
		s->prefix.level[k].count = cnt;
		s->prefix.level[k].global = glob;
	}
	s->nranks = (int)nranks;
	s->rank = malloc(sizeof(*s->rank) * nranks);
	s->leaf = malloc(sizeof(*s->leaf) * nranks);
	src = malloc(sizeof(*src) * (nedges ? nedges : 1));
	dst = malloc(sizeof(*dst) * (nedges ? nedges : 1));
	w = malloc(sizeof(*w) * (nedges ? nedges : 1));
	if (!s->rank || !s->leaf || !src || !dst || !w) {
		tmatch_error_set(err, ENOMEM, path, 0, 0, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < nranks; i++) {
		uint32_t r = tmatch__get32(p + 4 * i), l = tmatch__get32(p + 4 * (nranks + i));

		if (r >= s->bind.ntasks || (i > 0 && (int)r <= s->rank[i - 1]) ||
		    l >= (uint32_t)TMATCH_TOPO_MAX_LEAVES)
			DAMAGED("damaged plan: the ranks or leaves of %s are not valid", name);
		s->rank[i] = (int)r;
		s->leaf[i] = (int)l;
	}
	p += tmatch__pad8(8 * (uint64_t)nranks);
	for (uint32_t e = 0; e < nedges; e++) {
		uint32_t a = tmatch__get32(p + 4 * e), b = tmatch__get32(p + 4 * (nedges + e));
		uint64_t bits = tmatch__get64(p + tmatch__pad8(8 * (uint64_t)nedges) + 8 * e);

		memcpy(&w[e], &bits, 8);
		if (a >= b || b >= nranks || !isfinite(w[e]) || !(w[e] > 0))
			DAMAGED("damaged plan: the traffic of %s is not valid", name);
		src[e] = (int)a;
		dst[e] = (int)b;
	}
	s->comm = tmatch_comm_from_edges((int)nranks, nedges, src, dst, w, err);
	if (!s->comm)
		goto out;
	free(buf);
	free(src);
	free(dst);
	free(w);
	return s;
out:
	free(buf);
	free(src);
	free(dst);
	free(w);
	tmatch_place_slice_destroy(s);
	return NULL;
}

int tmatch_place_plan_srun_path(const char *dir, uint64_t job_id, long srun_pid, char *path,
                                size_t len)
{
	int n;

	if (!dir || !*dir || !path || job_id == 0 || srun_pid <= 0)
		return tmatch_error_set(NULL, EINVAL, NULL, 0, 0, "no directory, job or srun");
	n = snprintf(path, len, "%s/.treematch-plan.%llu.%ld", dir, (unsigned long long)job_id,
	             srun_pid);
	return n < 0 || (size_t)n >= len ? tmatch_error_set(NULL, ENAMETOOLONG, NULL, 0, 0, "long")
	                                 : 0;
}
