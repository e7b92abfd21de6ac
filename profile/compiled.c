/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * compiled.c - the compiled (binary) form of a comm-profile: what
 * `treematch profile compile` writes, for profiles mapped again and again.
 * It loads in time proportional to its size, and a node can read the rows
 * of its own ranks only (tmatch_profile_compiled_comm), so the work per node
 * follows its tasks, not the job.
 *
 * Layout (little endian; every section starts at a multiple of 8):
 *   0   "TMPROFC\n"                 magic
 *   8   u32 version (3; 1 and 2 are still read), u32 metrics
 *       (TMATCH_PROFILE_HAS_*), u32 directed, u32 placement_metric,
 *       u32 ranks, u32 nodes, u32 ranks_per_node, u32 collectives
 *       (TMATCH_COLL_UNSTATED, TMATCH_COLL_WIRE or TMATCH_COLL_LOGICAL;
 *       version 1 only the first, version 2 only the other two)
 *   40  u64 nedges[2] (edges, coll_edges), u64 info_bytes
 *   64  info: per key of tmatch__info_keys, u32 length (0xffffffff = unset)
 *       and the bytes; zero padding to a multiple of 8
 *       per set: u64 row[ranks + 1] (edges of rank r: row[r] .. row[r+1]),
 *                u32 dst[nedges], padding, u64 bytes[nedges] (if recorded),
 *                u64 msgs[nedges] (if recorded)
 *   end u64 checksum of every byte before it: XXH3, 64 bits (version 3);
 *       versions 1 and 2, written before, have the word-wise FNV-1a of
 *       treematch/internal.h there, checked as such
 * The header alone fixes every size: a file whose length differs is refused
 * before anything is allocated. Rows are the profile's finished edges
 * (sorted by (src, dst), merged; src < dst when undirected), and the loader
 * checks all of it again, so the result is a profile the YAML loader could
 * have made.
 */
#include "profile/profile_private.h"
#include "treematch/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The version written. Version 2 (the collectives word) and 1 (none) are
   read too: the same layout, FNV-1a checksummed. */
#define VERSION 3u

/* The first 8 bytes ("TMPROFC\n"; not a C string: no terminating NUL). */
static const unsigned char magic[8] = {'T', 'M', 'P', 'R', 'O', 'F', 'C', '\n'};
#define HEADER_BYTES 64u
#define UNSET        0xffffffffu

/* What the header says, and where each section starts. */
struct layout {
	uint32_t version, metrics, directed, pmetric, ranks, nodes, rpn, coll;
	uint64_t nedges[2], info_bytes;
	uint64_t row[2], dst[2], bytes[2], msgs[2]; /* offsets, 0 = absent */
	uint64_t total;                             /* file size, checksum included */
};

/* Offsets of every section from the header's counts; -1 when they overflow. */
static int place_sections(struct layout *l)
{
	uint64_t at = HEADER_BYTES + l->info_bytes, r = (uint64_t)l->ranks + 1;

	if (l->info_bytes > (1u << 20) || l->info_bytes % 8)
		return -1;
	for (int s = 0; s < 2; s++) {
		uint64_t n = l->nedges[s];

		if (n > ((uint64_t)1 << 40))
			return -1;
		l->row[s] = at;
		at += 8 * r;
		l->dst[s] = at;
		at += tmatch__pad8(4 * n);
		l->bytes[s] = (l->metrics & TMATCH_PROFILE_HAS_BYTES) ? at : 0;
		at += l->bytes[s] ? 8 * n : 0;
		l->msgs[s] = (l->metrics & TMATCH_PROFILE_HAS_MSGS) ? at : 0;
		at += l->msgs[s] ? 8 * n : 0;
	}
	l->total = at + 8;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */

static int write_all(FILE *out, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, out) == len ? 0 : -1;
}

/* Writes through the checksum: bytes are hashed as they go out; fill
   counts them modulo 8, for the padding. */
struct sink {
	FILE *out;
	tmatch__sum_stream_t *sum;
	size_t fill;
	int failed;
};

static void sink_put(struct sink *s, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (s->failed)
		return;
	if (write_all(s->out, buf, len)) {
		s->failed = 1;
		return;
	}
	tmatch__sum_update(s->sum, p, len);
	s->fill = (s->fill + len) % 8;
}

static void sink_pad(struct sink *s)
{
	static const unsigned char zero[8];

	if (s->fill)
		sink_put(s, zero, 8 - s->fill);
}

static void sink_u32(struct sink *s, uint32_t v)
{
	unsigned char b[4];

	tmatch__put32(b, v);
	sink_put(s, b, 4);
}

static void sink_u64(struct sink *s, uint64_t v)
{
	unsigned char b[8];

	tmatch__put64(b, v);
	sink_put(s, b, 8);
}

int tmatch_profile_compile(const tmatch_profile_t *p, FILE *out, tmatch_error_t *err)
{
	struct sink s = {.out = out};
	uint64_t info_bytes = 0;
	unsigned char h[HEADER_BYTES] = {0};

	if (!p || !out || !p->finished)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_profile_compile: no profile, or not finished");
	if (!(s.sum = tmatch__sum_begin()))
		return tmatch_error_set(err, ENOMEM, NULL, 0, 0, "out of memory");
	for (int k = 0; k < TMATCH__INFO_COUNT; k++)
		info_bytes += 4 + (p->info[k] ? strlen(p->info[k]) : 0);
	info_bytes = tmatch__pad8(info_bytes);
	memcpy(h, magic, sizeof(magic));
	tmatch__put32(h + 8, VERSION);
	tmatch__put32(h + 12, p->metrics);
	tmatch__put32(h + 16, (uint32_t)p->directed);
	tmatch__put32(h + 20, (uint32_t)p->placement_metric);
	tmatch__put32(h + 24, (uint32_t)p->ranks);
	tmatch__put32(h + 28, (uint32_t)p->nodes);
	tmatch__put32(h + 32, (uint32_t)p->ranks_per_node);
	tmatch__put32(h + 36, (uint32_t)p->coll);
	tmatch__put64(h + 40, p->set[0].n);
	tmatch__put64(h + 48, p->set[1].n);
	tmatch__put64(h + 56, info_bytes);
	sink_put(&s, h, sizeof(h));
	for (int k = 0; k < TMATCH__INFO_COUNT; k++) {
		size_t len = p->info[k] ? strlen(p->info[k]) : 0;

		sink_u32(&s, p->info[k] ? (uint32_t)len : UNSET);
		sink_put(&s, p->info[k] ? p->info[k] : "", len);
	}
	sink_pad(&s);
	for (int set = 0; set < 2; set++) {
		const struct tmatch__edges *e = &p->set[set];
		size_t i = 0;

		/* rows: edges are sorted by src */
		for (int r = 0; r <= p->ranks; r++) {
			while (i < e->n && e->src[i] < r)
				i++;
			sink_u64(&s, i);
		}
		for (i = 0; i < e->n; i++)
			sink_u32(&s, (uint32_t)e->dst[i]);
		sink_pad(&s);
		for (i = 0; e->bytes && i < e->n; i++)
			sink_u64(&s, e->bytes[i]);
		for (i = 0; e->msgs && i < e->n; i++)
			sink_u64(&s, e->msgs[i]);
	}
	{
		unsigned char b[8];

		tmatch__put64(b, tmatch__sum_end(s.sum));
		if (!s.failed && write_all(out, b, 8))
			s.failed = 1;
	}
	if (s.failed || fflush(out))
		return tmatch_error_set(err, errno ? errno : EIO, NULL, 0, 0,
		                        "cannot write the compiled profile: %s",
		                        strerror(errno ? errno : EIO));
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Reader                                                                    */

int tmatch_profile_is_compiled(const void *buf, size_t len)
{
	return buf && len >= 8 && memcmp(buf, magic, sizeof(magic)) == 0;
}

static int bad(tmatch_error_t *err, const char *name, const char *what)
{
	return tmatch_error_set(err, EINVAL, name, 0, 0, "%s", what);
}

/* Header fields into l, checked against each other and the limits. */
static int read_header(const unsigned char *h, size_t file_len, const char *name,
                       const tmatch_profile_limits_t *lim, struct layout *l, tmatch_error_t *err)
{
	memset(l, 0, sizeof(*l));
	if (memcmp(h, magic, sizeof(magic)) != 0)
		return bad(err, name, "not a compiled profile (no TMPROFC header)");
	l->version = tmatch__get32(h + 8);
	if (l->version < 1 || l->version > VERSION)
		return tmatch_error_set(
		    err, EINVAL, name, 0, 0,
		    "compiled profile version %u: this treematch reads versions "
		    "1 to %u; compile the profile again with this version",
		    l->version, VERSION);
	l->metrics = tmatch__get32(h + 12);
	l->directed = tmatch__get32(h + 16);
	l->pmetric = tmatch__get32(h + 20);
	l->ranks = tmatch__get32(h + 24);
	l->nodes = tmatch__get32(h + 28);
	l->rpn = tmatch__get32(h + 32);
	l->coll = tmatch__get32(h + 36);
	l->nedges[0] = tmatch__get64(h + 40);
	l->nedges[1] = tmatch__get64(h + 48);
	l->info_bytes = tmatch__get64(h + 56);
	if (l->metrics == 0 || l->metrics > 3 || l->directed > 1 || l->pmetric > 2 ||
	    l->coll > TMATCH_COLL_LOGICAL || (l->version == 1 && l->coll != TMATCH_COLL_UNSTATED) ||
	    (l->version == 2 && l->coll == TMATCH_COLL_UNSTATED) || l->nodes > INT32_MAX ||
	    l->rpn > INT32_MAX ||
	    (l->pmetric != TMATCH_METRIC_MSGS && !(l->metrics & TMATCH_PROFILE_HAS_BYTES)) ||
	    (l->pmetric != TMATCH_METRIC_BYTES && !(l->metrics & TMATCH_PROFILE_HAS_MSGS)))
		return bad(err, name, "corrupt compiled profile header: compile it again");
	if (l->ranks < 1)
		return bad(err, name, "corrupt compiled profile header: compile it again");
	if (l->ranks > (uint32_t)lim->max_ranks)
		return tmatch_error_set(err, E2BIG, name, 0, 0,
		                        "'ranks' is %u, above the limit of %d ranks", l->ranks,
		                        lim->max_ranks);
	if (l->nedges[0] + l->nedges[1] > lim->max_edges ||
	    l->nedges[0] + l->nedges[1] < l->nedges[0])
		return tmatch_error_set(err, EINVAL, name, 0, 0, "more than %zu edges (max_edges)",
		                        lim->max_edges);
	if (place_sections(l) || (file_len && l->total != file_len))
		return bad(err, name,
		           "truncated or corrupt compiled profile (its size is not what its "
		           "header says): compile it again");
	return 0;
}

/* Rows of set s, checked: monotone from 0 to nedges. */
static int check_rows(const unsigned char *buf, const struct layout *l, int s, const char *name,
                      tmatch_error_t *err)
{
	uint64_t prev = 0;

	for (uint64_t r = 0; r <= l->ranks; r++) {
		uint64_t v = tmatch__get64(buf + l->row[s] + 8 * r);

		if (v < prev || v > l->nedges[s] || (r == 0 && v != 0) ||
		    (r == l->ranks && v != l->nedges[s]))
			return bad(err, name,
			           "corrupt compiled profile (row index): compile it again");
		prev = v;
	}
	return 0;
}

/* The edge at index i of row src: dst in range, rows sorted, canonical. */
static int check_edge(const unsigned char *buf, const struct layout *l, int s, uint64_t i,
                      uint32_t src, uint64_t row_start, const char *name, tmatch_error_t *err)
{
	uint32_t dst = tmatch__get32(buf + l->dst[s] + 4 * i);

	if (dst >= l->ranks || dst == src || (!l->directed && dst < src) ||
	    (i > row_start && dst <= tmatch__get32(buf + l->dst[s] + 4 * (i - 1))))
		return bad(err, name, "corrupt compiled profile (edges): compile it again");
	for (int m = 0; m < 2; m++) {
		uint64_t off = m ? l->msgs[s] : l->bytes[s];

		if (off && tmatch__get64(buf + off + 8 * i) > TMATCH__WEIGHT_MAX)
			return bad(err, name,
			           "corrupt compiled profile (weight): compile it again");
	}
	return 0;
}

static int zeros(const unsigned char *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/*
 * Everything of the file but its edges, checked as the loader checks it:
 * header, checksum, provenance (into p when given), padding, the rows of
 * both sets. 0, or -1 with err set.
 */
static int check_file(const unsigned char *buf, size_t len, const char *name,
                      const tmatch_profile_limits_t *lim, struct layout *l, tmatch_profile_t *p,
                      tmatch_error_t *err)
{
	uint64_t at = HEADER_BYTES;

	if (len < HEADER_BYTES + 8)
		return bad(err, name, "truncated compiled profile: compile it again");
	if (read_header(buf, len, name, lim, l, err))
		return -1;
	if (tmatch__get64(buf + len - 8) !=
	    tmatch__checksum(l->version >= 3 ? TMATCH__SUM_XXH3 : TMATCH__SUM_FNV1A, buf, len - 8))
		return bad(err, name,
		           "compiled profile checksum mismatch (the file was changed or "
		           "damaged): compile it again");
	for (int k = 0; k < TMATCH__INFO_COUNT; k++) {
		uint32_t n;

		if (at + 4 > HEADER_BYTES + l->info_bytes)
			goto corrupt;
		n = tmatch__get32(buf + at);
		at += 4;
		if (n == UNSET)
			continue;
		if (n > TMATCH__INFO_MAX_LEN || at + n > HEADER_BYTES + l->info_bytes ||
		    !tmatch__info_valid((const char *)buf + at, n))
			goto corrupt;
		if (p && !(p->info[k] = strndup((const char *)buf + at, n)))
			return tmatch_error_set(err, ENOMEM, name, 0, 0, "out of memory");
		at += n;
	}
	/* one canonical file per profile: the padding is zero and no longer
	   than it must be */
	if (tmatch__pad8(at) != HEADER_BYTES + l->info_bytes ||
	    !zeros(buf + at, HEADER_BYTES + l->info_bytes - at))
		goto corrupt;
	for (int s = 0; s < 2; s++) {
		if (!zeros(buf + l->dst[s] + 4 * l->nedges[s],
		           tmatch__pad8(4 * l->nedges[s]) - 4 * l->nedges[s]))
			return bad(err, name,
			           "corrupt compiled profile (padding): compile it again");
		if (check_rows(buf, l, s, name, err))
			return -1;
	}
	return 0;
corrupt:
	return bad(err, name, "corrupt compiled profile (provenance): compile it again");
}

tmatch_profile_t *tmatch__profile_load_compiled(const void *data, size_t len, const char *name,
                                                const tmatch_profile_limits_t *lim,
                                                tmatch_error_t *err)
{
	const unsigned char *buf = data;
	tmatch_profile_limits_t dflt;
	tmatch_profile_t *p = NULL;
	struct layout l;

	if (!lim) {
		tmatch_profile_limits_init(&dflt);
		lim = &dflt;
	}
	if (!name)
		name = "<buffer>";
	if (len < HEADER_BYTES + 8) {
		bad(err, name, "truncated compiled profile: compile it again");
		return NULL;
	}
	if (read_header(buf, len, name, lim, &l, err))
		return NULL;
	p = tmatch_profile_create((int)l.ranks, l.metrics, (int)l.directed, err);
	if (!p)
		return NULL;
	/* pmetric <= 2 was checked with the header (read_header) */
	// NOLINTNEXTLINE(clang-analyzer-optin.core.EnumCastOutOfRange)
	p->placement_metric = (tmatch_profile_metric_t)l.pmetric;
	// NOLINTNEXTLINE(clang-analyzer-optin.core.EnumCastOutOfRange): checked with the header
	p->coll = (tmatch_profile_coll_t)l.coll;
	p->nodes = (int)l.nodes;
	p->ranks_per_node = (int)l.rpn;
	if (check_file(buf, len, name, lim, &l, p, err))
		goto fail;
	for (int s = 0; s < 2; s++) {
		struct tmatch__edges *e = &p->set[s];

		if (tmatch__edges_reserve(e, l.metrics, l.nedges[s] ? l.nedges[s] : 1))
			goto nomem;
		for (uint32_t r = 0; r < l.ranks; r++) {
			uint64_t start = tmatch__get64(buf + l.row[s] + 8 * r),
			         end = tmatch__get64(buf + l.row[s] + 8 * (r + 1));

			for (uint64_t i = start; i < end; i++) {
				if (check_edge(buf, &l, s, i, r, start, name, err))
					goto fail;
				e->src[i] = (int)r;
				e->dst[i] = (int)tmatch__get32(buf + l.dst[s] + 4 * i);
				if (e->bytes)
					e->bytes[i] = tmatch__get64(buf + l.bytes[s] + 8 * i);
				if (e->msgs)
					e->msgs[i] = tmatch__get64(buf + l.msgs[s] + 8 * i);
			}
		}
		e->n = l.nedges[s];
	}
	p->finished = 1;
	return p;
nomem:
	tmatch_error_set(err, ENOMEM, name, 0, 0, "out of memory");
fail:
	tmatch_profile_destroy(p);
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* The whole matrix, straight from the file                                  */

/* Edges read between two returns of their pages to the file (mapped). */
#define RELEASE_EDGES ((uint64_t)1 << 18)

struct matrix_source {
	const unsigned char *buf;
	size_t len;
	const struct layout *l;
	int s;      /* the set read */
	int metric; /* tmatch_profile_metric_t */
	int mapped; /* buf is a read-only file mapping: pages read may be dropped */
	const char *name;
	tmatch_error_t *err;
	/* directed: the edges (j, i) with j > i, by i then j (a transpose of
	   the rows' backward part): their sources and their indices */
	uint64_t *tptr;
	uint32_t *tsrc;
	uint64_t *tedge;
};

/* Mapped: the whole pages of buf[off, off + size) go back to the file
   (read again if touched), so the file never sits in memory beside the
   matrix. */
static void release(const struct matrix_source *ms, uint64_t off, uint64_t size)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)ms->buf + (uintptr_t)off, hi = lo + (uintptr_t)size;

	if (!ms->mapped || off >= ms->len)
		return;
	lo += (page - lo % page) % page;
	hi -= hi % page;
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Mapped: the edges [0, upto) of the set have been read. */
static void release_edges(const struct matrix_source *ms, uint64_t upto)
{
	const struct layout *l = ms->l;
	int s = ms->s;

	release(ms, l->dst[s], 4 * upto);
	if (l->bytes[s])
		release(ms, l->bytes[s], 8 * upto);
	if (l->msgs[s])
		release(ms, l->msgs[s], 8 * upto);
}

/* The traffic of edge i, added to *bytes and *msgs; -1 past 2^63 - 1. */
static int add_edge(const struct matrix_source *ms, uint64_t i, uint64_t *bytes, uint64_t *msgs)
{
	const struct layout *l = ms->l;
	uint64_t b = l->bytes[ms->s] ? tmatch__get64(ms->buf + l->bytes[ms->s] + 8 * i) : 0;
	uint64_t m = l->msgs[ms->s] ? tmatch__get64(ms->buf + l->msgs[ms->s] + 8 * i) : 0;

	if (b > TMATCH__WEIGHT_MAX - *bytes || m > TMATCH__WEIGHT_MAX - *msgs)
		return -1;
	*bytes += b;
	*msgs += m;
	return 0;
}

/*
 * The pairs (r, j), r < j, by r then j, each with the traffic of (r, j)
 * plus that of (j, r) when directed (summed as integers, then the metric:
 * what the profile's merge of the two gives).
 */
static int matrix_pass(void *sarg, tmatch_edge_visit_fn visit, void *varg)
{
	const struct matrix_source *ms = sarg;
	const struct layout *l = ms->l;
	const unsigned char *buf = ms->buf;
	int s = ms->s;
	uint64_t done = 0;

	for (uint32_t r = 0; r < l->ranks; r++) {
		uint64_t i = tmatch__get64(buf + l->row[s] + 8 * r),
		         end = tmatch__get64(buf + l->row[s] + 8 * (r + 1));
		uint64_t t = ms->tptr ? ms->tptr[r] : 0, tend = ms->tptr ? ms->tptr[r + 1] : 0;

		while (i < end && tmatch__get32(buf + l->dst[s] + 4 * i) < r)
			i++; /* (r, j) with j < r: read with row j */
		while (i < end || t < tend) {
			uint32_t fj = i < end ? tmatch__get32(buf + l->dst[s] + 4 * i) : UINT32_MAX;
			uint32_t bj = t < tend ? ms->tsrc[t] : UINT32_MAX, j = fj < bj ? fj : bj;
			uint64_t bytes = 0, msgs = 0;
			double w;

			if ((fj == j && add_edge(ms, i++, &bytes, &msgs)) ||
			    (bj == j && add_edge(ms, ms->tedge[t++], &bytes, &msgs))) {
				tmatch_error_set(ms->err, 0, "", 0, 0,
				                 "traffic between ranks %u and %u exceeds 2^63-1",
				                 r, j);
				errno = EINVAL;
				return -1;
			}
			w = ms->metric == TMATCH_METRIC_BYTES  ? (double)bytes
			    : ms->metric == TMATCH_METRIC_MSGS ? (double)msgs
			    : msgs                             ? (double)bytes / (double)msgs
			                                       : 0.0;
			visit(varg, (int)r, (int)j, w);
		}
		if (end / RELEASE_EDGES != done / RELEASE_EDGES)
			release_edges(ms, end);
		done = end;
	}
	release(ms, 0, ms->len);
	return 0;
}

/* Directed: the transpose of the backward edges (see struct
   matrix_source). -1 on ENOMEM. */
static int backward_edges(struct matrix_source *ms)
{
	const struct layout *l = ms->l;
	uint64_t nback = 0, *pos;

	ms->tptr = calloc((size_t)l->ranks + 1, sizeof(*ms->tptr));
	if (!ms->tptr)
		return -1;
	for (uint32_t r = 0; r < l->ranks; r++)
		for (uint64_t i = tmatch__get64(ms->buf + l->row[ms->s] + 8 * r);
		     i < tmatch__get64(ms->buf + l->row[ms->s] + 8 * (r + 1)); i++) {
			uint32_t d = tmatch__get32(ms->buf + l->dst[ms->s] + 4 * i);

			if (d < r) {
				ms->tptr[d + 1]++;
				nback++;
			}
		}
	for (uint32_t r = 0; r < l->ranks; r++)
		ms->tptr[r + 1] += ms->tptr[r];
	ms->tsrc = malloc(sizeof(*ms->tsrc) * (nback ? nback : 1));
	ms->tedge = malloc(sizeof(*ms->tedge) * (nback ? nback : 1));
	pos = malloc(sizeof(*pos) * ((size_t)l->ranks + 1));
	if (!ms->tsrc || !ms->tedge || !pos) {
		free(pos);
		return -1;
	}
	memcpy(pos, ms->tptr, sizeof(*pos) * ((size_t)l->ranks + 1));
	for (uint32_t r = 0; r < l->ranks; r++) /* by source: each row sorted */
		for (uint64_t i = tmatch__get64(ms->buf + l->row[ms->s] + 8 * r);
		     i < tmatch__get64(ms->buf + l->row[ms->s] + 8 * (r + 1)); i++) {
			uint32_t d = tmatch__get32(ms->buf + l->dst[ms->s] + 4 * i);

			if (d < r) {
				ms->tsrc[pos[d]] = r;
				ms->tedge[pos[d]++] = i;
			}
		}
	free(pos);
	return 0;
}

tmatch_comm_t *tmatch__profile_compiled_matrix(const void *data, size_t len, int mapped,
                                               const char *name, const tmatch_profile_limits_t *lim,
                                               int metric, unsigned sets, int *direct,
                                               tmatch_error_t *err)
{
	struct matrix_source ms = {data, len, NULL, 0, metric, mapped, name, err, NULL, NULL, NULL};
	tmatch_profile_limits_t dflt;
	tmatch_comm_t *c = NULL;
	struct layout l = {0};
	unsigned need;
	uint64_t n[2];

	*direct = 0;
	if (!lim) {
		tmatch_profile_limits_init(&dflt);
		lim = &dflt;
	}
	if (!name)
		ms.name = "<buffer>";
	if (check_file(data, len, ms.name, lim, &l, NULL, err))
		goto refused;
	ms.l = &l;
	if (metric < 0)
		ms.metric = metric = (int)l.pmetric;
	// NOLINTNEXTLINE(clang-analyzer-optin.core.EnumCastOutOfRange): checked with the header
	sets = tmatch__profile_sets(sets, (tmatch_profile_coll_t)l.coll);
	need = metric == TMATCH_METRIC_BYTES  ? TMATCH_PROFILE_HAS_BYTES
	       : metric == TMATCH_METRIC_MSGS ? TMATCH_PROFILE_HAS_MSGS
	                                      : TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS;
	n[0] = (sets & TMATCH_PROFILE_P2P) ? l.nedges[0] : 0;
	n[1] = (sets & TMATCH_PROFILE_COLL) ? l.nedges[1] : 0;
	/* one set of edges, the metric recorded: anything else (two sets to
	   merge, or a message to give) the profile's way */
	if (metric > TMATCH_METRIC_AVG || (l.metrics & need) != need || (n[0] && n[1]) ||
	    !(sets & (TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL)) ||
	    (sets & ~(TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL)))
		return NULL;
	*direct = 1;
	ms.s = n[1] ? 1 : 0;
	/* every edge checked as the loader would, before any is used */
	for (int s = 0; s < 2; s++)
		for (uint32_t r = 0; r < l.ranks; r++) {
			uint64_t start = tmatch__get64(ms.buf + l.row[s] + 8 * r),
			         end = tmatch__get64(ms.buf + l.row[s] + 8 * (r + 1));

			for (uint64_t i = start; i < end; i++)
				if (check_edge(ms.buf, &l, s, i, r, start, ms.name, err))
					goto refused;
		}
	if (l.directed && backward_edges(&ms) != 0) {
		tmatch_error_set(err, ENOMEM, ms.name, 0, 0, "out of memory");
		goto out;
	}
	release(&ms, 0, len); /* read for the checksum and checks: not kept */
	c = tmatch_comm_from_sorted_edges((int)l.ranks, matrix_pass, &ms, err);
	if (!c && err && !err->file[0])
		snprintf(err->file, sizeof(err->file), "%s", ms.name);
	goto out;
refused:
	*direct = 1;
out:
	free(ms.tptr);
	free(ms.tsrc);
	free(ms.tedge);
	return c;
}

/* ------------------------------------------------------------------------ */
/* One node's ranks, read from the file                                      */

static int by_rank(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Index of `rank` in the sorted array, or -1. */
static int find(const int *sorted, int n, int rank)
{
	int lo = 0, hi = n - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (sorted[mid] == rank)
			return mid;
		if (sorted[mid] < rank)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

tmatch_comm_t *tmatch_profile_compiled_comm(int fd, const char *name, const int *ranks, int n,
                                            int metric, unsigned sets,
                                            const tmatch_profile_limits_t *lim, tmatch_error_t *err)
{
	unsigned char h[HEADER_BYTES], b8[16];
	tmatch_profile_limits_t dflt;
	tmatch_profile_t *sub = NULL;
	tmatch_comm_t *comm = NULL;
	struct layout l;
	struct stat st;
	int *sorted = NULL, *pos = NULL;

	if (!lim) {
		tmatch_profile_limits_init(&dflt);
		lim = &dflt;
	}
	if (!name)
		name = "<fd>";
	if (!ranks || n < 1) {
		tmatch_error_set(err, EINVAL, name, 0, 0, "no ranks to read");
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		tmatch_error_set(err, EINVAL, name, 0, 0, "not a regular file");
		return NULL;
	}
	if (tmatch__pread_all(fd, h, sizeof(h), 0) ||
	    read_header(h, (size_t)st.st_size, name, lim, &l, err)) {
		if (!err || !err->msg[0])
			bad(err, name, "not a compiled profile (too short)");
		return NULL;
	}
	sorted = malloc(sizeof(int) * (size_t)n);
	pos = calloc((size_t)n, sizeof(int));
	if (!sorted || !pos) {
		tmatch_error_set(err, ENOMEM, name, 0, 0, "out of memory");
		goto out;
	}
	memcpy(sorted, ranks, sizeof(int) * (size_t)n);
	qsort(sorted, (size_t)n, sizeof(int), by_rank);
	for (int i = 0; i < n; i++)
		if (sorted[i] < 0 || (uint32_t)sorted[i] >= l.ranks ||
		    (i && sorted[i] == sorted[i - 1])) {
			tmatch_error_set(err, EINVAL, name, 0, 0,
			                 "rank %d is repeated or outside the profile's 0..%u",
			                 sorted[i], l.ranks - 1);
			goto out;
		}
	for (int i = 0; i < n; i++) {
		int at = find(sorted, n, ranks[i]); /* a copy's: always found */

		if (at < 0) {
			tmatch_error_set(err, EINVAL, name, 0, 0, "rank %d lost", ranks[i]);
			goto out;
		}
		pos[at] = i; /* sorted index -> place in `ranks` */
	}
	sub = tmatch_profile_create(n, l.metrics, (int)l.directed, err);
	if (!sub)
		goto out;
	// NOLINTNEXTLINE(clang-analyzer-optin.core.EnumCastOutOfRange): checked with the header
	sets = tmatch__profile_sets(sets, (tmatch_profile_coll_t)l.coll);
	for (int s = 0; s < 2; s++) {
		if (!(sets & (s ? TMATCH_PROFILE_COLL : TMATCH_PROFILE_P2P)))
			continue;
		for (int i = 0; i < n; i++) {
			uint32_t src = (uint32_t)ranks[i];
			uint64_t start, end;

			if (tmatch__pread_all(fd, b8, 16, l.row[s] + 8 * (uint64_t)src))
				goto io;
			start = tmatch__get64(b8);
			end = tmatch__get64(b8 + 8);
			if (end < start || end > l.nedges[s])
				goto corrupt;
			for (uint64_t e = start; e < end; e++) {
				unsigned char d[4], w[8];
				uint64_t bytes = 0, msgs = 0;
				uint32_t dst;
				int j;

				if (tmatch__pread_all(fd, d, 4, l.dst[s] + 4 * e))
					goto io;
				dst = tmatch__get32(d);
				if (dst >= l.ranks || dst == src)
					goto corrupt;
				j = find(sorted, n, (int)dst);
				if (j < 0)
					continue; /* a rank of another node */
				if (l.bytes[s]) {
					if (tmatch__pread_all(fd, w, 8, l.bytes[s] + 8 * e))
						goto io;
					bytes = tmatch__get64(w);
				}
				if (l.msgs[s]) {
					if (tmatch__pread_all(fd, w, 8, l.msgs[s] + 8 * e))
						goto io;
					msgs = tmatch__get64(w);
				}
				if (bytes > TMATCH__WEIGHT_MAX || msgs > TMATCH__WEIGHT_MAX)
					goto corrupt;
				if (tmatch_profile_add_edge(
				        sub, s ? TMATCH_PROFILE_COLL : TMATCH_PROFILE_P2P, i,
				        pos[j], bytes, msgs, NULL, NULL, err))
					goto out;
			}
		}
	}
	if (tmatch_profile_finish(sub, NULL, NULL, err))
		goto out;
	comm = tmatch_profile_to_comm(
	    sub, (tmatch_profile_metric_t)(metric < 0 ? (int)l.pmetric : metric), sets, err);
	goto out;
io:
	bad(err, name, "cannot read the compiled profile (truncated?): compile it again");
	goto out;
corrupt:
	bad(err, name, "corrupt compiled profile (edges): compile it again");
out:
	tmatch_profile_destroy(sub);
	free(sorted);
	free(pos);
	return comm;
}
