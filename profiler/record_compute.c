/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_compute.c - the compute of a rank's time-independent trace, made
 * to repeat: what it records between two MPI calls is the thread's CPU
 * time, and on a loaded machine (a virtual CPU the host takes away, other
 * processes' interrupts) that time grows by stalls of tens of microseconds
 * to milliseconds that the thread did not compute: three recordings of one
 * program gave ranks 1x to 5x the same loop's time, and the predicted
 * ratios between placements moved by a third.
 *
 * So at MPI_Finalize each rank estimates its compute from its own file
 * (tmatch__trace_compute_estimate): a burst of compute between the same two
 * actions (the same call, peer, tag and size before and after it: one phase
 * of an iteration) is repeated work, and the least time any repetition took
 * is what the work costs unloaded - a stall makes a burst longer, never
 * shorter. Every repeated burst becomes that minimum; a burst that occurs
 * once (set-up, a factorization's panels) cannot be told from a stall, and
 * is divided by the inflation the rank's repeated bursts showed (the sum of
 * what they measured over the sum of their minimums): calibrated by the
 * same recording, at the same load. The file is rewritten (a temporary file
 * renamed over it); when that cannot be done it is kept as measured.
 * TREEMATCH_RECORD_TRACE_RAW=1 keeps it as measured (to compare).
 */
#include "profiler/record_private.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Distinct phases kept per rank (16 MiB of table); beyond, a burst counts
   as one that occurs once. */
#define PHASES_MAX (1u << 19)

struct phase {
	uint64_t key; /* 0: free */
	uint64_t count;
	double min, sum;
};

struct phases {
	struct phase *tab;
	uint32_t cap, used;
};

static uint64_t line_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

/* The phase of a burst between the lines hashed a and b (never 0). */
static uint64_t phase_key(uint64_t a, uint64_t b)
{
	uint64_t k = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;

	return k ? k : 1;
}

static struct phase *phase_slot(const struct phases *p, uint64_t key)
{
	uint32_t mask = p->cap - 1, h = (uint32_t)(key >> 32) & mask;

	while (p->tab[h].key && p->tab[h].key != key)
		h = (h + 1) & mask;
	return &p->tab[h];
}

/* Twice the room (the first time 1024 phases); -1 at the cap or without memory. */
static int grow(struct phases *p)
{
	uint32_t cap = p->cap ? 2 * p->cap : 1024;
	struct phase *old = p->tab, *tab;

	if (cap > PHASES_MAX || !(tab = calloc(cap, sizeof(*tab))))
		return -1;
	p->tab = tab;
	p->cap = cap;
	for (uint32_t i = 0; i < cap / 2 && old; i++)
		if (old[i].key)
			*phase_slot(p, old[i].key) = old[i];
	free(old);
	return 0;
}

/* The phase of key (added when absent and add); NULL when the table is full. */
static struct phase *phase_get(struct phases *p, uint64_t key, int add)
{
	struct phase *s;

	if (p->cap == 0 && (!add || grow(p) < 0))
		return NULL;
	s = phase_slot(p, key);
	if (s->key || !add)
		return s->key ? s : NULL;
	if (2 * (p->used + 1) > p->cap) {
		if (grow(p) < 0)
			return NULL;
		s = phase_slot(p, key);
	}
	s->key = key;
	p->used++;
	return s;
}

/* The compute of a "R compute F" line into *flops; 0 when it is none. */
static int compute_line(const char *line, double *flops)
{
	const char *p = strchr(line, ' ');
	char *end;

	if (!p || strncmp(p + 1, "compute ", 8) != 0)
		return 0;
	*flops = strtod(p + 9, &end);
	return end != p + 9;
}

/*
 * One pass over f: each burst's phase (the lines before and after it),
 * with at(): in the first pass the phases' statistics, in the second the
 * line to write. A burst is held until the line after it is read.
 */
struct pass {
	struct phases *ph;
	FILE *out; /* second pass: the rewritten file */
	double scale;
	int failed;
};

static void burst(struct pass *ps, uint64_t key, double flops, const char *held)
{
	struct phase *s = phase_get(ps->ph, key, ps->out == NULL);
	double v;

	if (!ps->out) {
		if (s) {
			s->min = s->count ? (flops < s->min ? flops : s->min) : flops;
			s->sum += flops;
			s->count++;
		}
		return;
	}
	v = s && s->count > 1 ? s->min : flops / ps->scale;
	if (held && v >= 1 &&
	    fprintf(ps->out, "%.*s compute %.0f\n", (int)strcspn(held, " "), held, v) < 0)
		ps->failed = 1;
}

static int read_pass(FILE *f, struct pass *ps)
{
	char *line = NULL, *held = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t prev = 0, before = 0;
	double flops = 0;
	int holding = 0;

	if (fseek(f, 0, SEEK_SET) != 0)
		return -1;
	while ((n = getline(&line, &cap, f)) > 0) {
		size_t len = (size_t)n - (line[n - 1] == '\n');
		uint64_t h = line_hash(line, len);
		double fl;

		if (compute_line(line, &fl)) {
			free(held);
			if (!(held = strdup(line))) {
				ps->failed = 1;
				holding = 0;
				break;
			}
			holding = 1;
			flops = fl;
			before = prev;
			continue;
		}
		if (holding)
			burst(ps, phase_key(before, h), flops, held);
		holding = 0;
		prev = h;
		if (ps->out && fwrite(line, 1, (size_t)n, ps->out) != (size_t)n)
			ps->failed = 1;
	}
	if (holding) /* a burst at the end: no action after it */
		burst(ps, phase_key(before, 0), flops, held);
	free(line);
	free(held);
	return ferror(f) || ps->failed ? -1 : 0;
}

int tmatch__trace_compute_estimate(const char *path)
{
	struct phases ph = {NULL, 0, 0};
	struct pass ps = {&ph, NULL, 1.0, 0};
	char tmp[PATH_MAX + 16];
	double measured = 0, least = 0;
	const char *raw = getenv("TREEMATCH_RECORD_TRACE_RAW");
	FILE *f, *out = NULL;
	int rc = -1;

	if (raw && *raw == '1')
		return 0;
	if (!(f = fopen(path, "r")))
		return -1;
	if (read_pass(f, &ps) < 0)
		goto out;
	/* the inflation the repeated phases show, for the bursts that are not */
	for (uint32_t i = 0; i < ph.cap; i++)
		if (ph.tab[i].key && ph.tab[i].count > 1) {
			measured += ph.tab[i].sum;
			least += (double)ph.tab[i].count * ph.tab[i].min;
		}
	ps.scale = least > 0 && measured > least ? measured / least : 1.0;
	if (snprintf(tmp, sizeof(tmp), "%s.estimate", path) >= (int)sizeof(tmp) ||
	    !(out = fopen(tmp, "w")))
		goto out;
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	ps.out = out;
	{
		/* the estimate is closed whether its pass worked or not */
		int bad = read_pass(f, &ps) < 0;

		bad |= fclose(out) != 0;
		out = NULL;
		if (bad) {
			unlink(tmp);
			goto out;
		}
	}
	if (rename(tmp, path) != 0) {
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	if (out) {
		fclose(out);
		unlink(tmp);
	}
	fclose(f);
	free(ph.tab);
	return rc;
}
