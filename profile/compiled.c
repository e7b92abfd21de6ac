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
 *   8   u32 version (1), u32 metrics (TMATCH_PROFILE_HAS_*),
 *       u32 directed, u32 placement_metric, u32 ranks, u32 nodes,
 *       u32 ranks_per_node, u32 0
 *   40  u64 nedges[2] (edges, coll_edges), u64 info_bytes
 *   64  info: per key of tmatch__info_keys, u32 length (0xffffffff = unset)
 *       and the bytes; zero padding to a multiple of 8
 *       per set: u64 row[ranks + 1] (edges of rank r: row[r] .. row[r+1]),
 *                u32 dst[nedges], padding, u64 bytes[nedges] (if recorded),
 *                u64 msgs[nedges] (if recorded)
 *   end u64 checksum of every 8-byte word before it
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
#include <sys/stat.h>
#include <unistd.h>

#define VERSION 1u

/* The first 8 bytes ("TMPROFC\n"; not a C string: no terminating NUL). */
static const unsigned char magic[8] = {'T', 'M', 'P', 'R', 'O', 'F', 'C', '\n'};
#define HEADER_BYTES 64u
#define UNSET        0xffffffffu

/* What the header says, and where each section starts. */
struct layout {
	uint32_t metrics, directed, pmetric, ranks, nodes, rpn;
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

/* Writes through a checksum: words are hashed as they go out. */
struct sink {
	FILE *out;
	uint64_t h;
	unsigned char word[8];
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
	for (size_t i = 0; i < len; i++) {
		s->word[s->fill++] = p[i];
		if (s->fill == 8) {
			s->h = (s->h ^ tmatch__get64(s->word)) * TMATCH__FNV_PRIME;
			s->fill = 0;
		}
	}
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
	struct sink s = {.out = out, .h = TMATCH__FNV_BASIS};
	uint64_t info_bytes = 0;
	unsigned char h[HEADER_BYTES] = {0};

	if (!p || !out || !p->finished)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "tmatch_profile_compile: no profile, or not finished");
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

		tmatch__put64(b, s.h);
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
	if (tmatch__get32(h + 8) != VERSION)
		return tmatch_error_set(err, EINVAL, name, 0, 0,
		                        "compiled profile version %u: this treematch reads version "
		                        "%u; compile the profile again with this version",
		                        tmatch__get32(h + 8), VERSION);
	l->metrics = tmatch__get32(h + 12);
	l->directed = tmatch__get32(h + 16);
	l->pmetric = tmatch__get32(h + 20);
	l->ranks = tmatch__get32(h + 24);
	l->nodes = tmatch__get32(h + 28);
	l->rpn = tmatch__get32(h + 32);
	l->nedges[0] = tmatch__get64(h + 40);
	l->nedges[1] = tmatch__get64(h + 48);
	l->info_bytes = tmatch__get64(h + 56);
	if (l->metrics == 0 || l->metrics > 3 || l->directed > 1 || l->pmetric > 2 ||
	    tmatch__get32(h + 36) != 0 || l->nodes > INT32_MAX || l->rpn > INT32_MAX ||
	    (l->pmetric != TMATCH_METRIC_MSGS && !(l->metrics & TMATCH_PROFILE_HAS_BYTES)) ||
	    (l->pmetric != TMATCH_METRIC_BYTES && !(l->metrics & TMATCH_PROFILE_HAS_MSGS)))
		return bad(err, name, "corrupt compiled profile header: compile it again");
	if (l->ranks < 1 || l->ranks > (uint32_t)lim->max_ranks)
		return tmatch_error_set(err, EINVAL, name, 0, 0,
		                        "ranks %u is outside 1..%d (max_ranks)", l->ranks,
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

tmatch_profile_t *tmatch__profile_load_compiled(const void *data, size_t len, const char *name,
                                                const tmatch_profile_limits_t *lim,
                                                tmatch_error_t *err)
{
	const unsigned char *buf = data;
	tmatch_profile_limits_t dflt;
	tmatch_profile_t *p = NULL;
	struct layout l;
	uint64_t at = HEADER_BYTES;

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
	if (tmatch__get64(buf + len - 8) != tmatch__checksum(TMATCH__FNV_BASIS, buf, len - 8)) {
		bad(err, name,
		    "compiled profile checksum mismatch (the file was changed or "
		    "damaged): compile it again");
		return NULL;
	}
	p = tmatch_profile_create((int)l.ranks, l.metrics, (int)l.directed, err);
	if (!p)
		return NULL;
	/* pmetric <= 2 was checked with the header (read_header) */
	// NOLINTNEXTLINE(clang-analyzer-optin.core.EnumCastOutOfRange)
	p->placement_metric = (tmatch_profile_metric_t)l.pmetric;
	p->nodes = (int)l.nodes;
	p->ranks_per_node = (int)l.rpn;
	for (int k = 0; k < TMATCH__INFO_COUNT; k++) {
		uint32_t n;

		if (at + 4 > HEADER_BYTES + l.info_bytes)
			goto corrupt;
		n = tmatch__get32(buf + at);
		at += 4;
		if (n == UNSET)
			continue;
		if (n > TMATCH__INFO_MAX_LEN || at + n > HEADER_BYTES + l.info_bytes ||
		    !tmatch__info_valid((const char *)buf + at, n))
			goto corrupt;
		p->info[k] = strndup((const char *)buf + at, n);
		if (!p->info[k])
			goto nomem;
		at += n;
	}
	/* one canonical file per profile: the padding is zero and no longer
	   than it must be */
	if (tmatch__pad8(at) != HEADER_BYTES + l.info_bytes ||
	    !zeros(buf + at, HEADER_BYTES + l.info_bytes - at))
		goto corrupt;
	for (int s = 0; s < 2; s++) {
		struct tmatch__edges *e = &p->set[s];
		uint64_t i = 0;

		if (!zeros(buf + l.dst[s] + 4 * l.nedges[s],
		           tmatch__pad8(4 * l.nedges[s]) - 4 * l.nedges[s])) {
			bad(err, name, "corrupt compiled profile (padding): compile it again");
			goto fail;
		}

		if (check_rows(buf, &l, s, name, err))
			goto fail;
		if (tmatch__edges_reserve(e, l.metrics, l.nedges[s] ? l.nedges[s] : 1))
			goto nomem;
		for (uint32_t r = 0; r < l.ranks; r++) {
			uint64_t start = tmatch__get64(buf + l.row[s] + 8 * r),
			         end = tmatch__get64(buf + l.row[s] + 8 * (r + 1));

			for (i = start; i < end; i++) {
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
corrupt:
	bad(err, name, "corrupt compiled profile (provenance): compile it again");
	goto fail;
nomem:
	tmatch_error_set(err, ENOMEM, name, 0, 0, "out of memory");
fail:
	tmatch_profile_destroy(p);
	return NULL;
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
