/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * placement/predict.h - what `treematch predict` hands SimGrid's trace replay and
 * the prediction kept for the plugin (predict.c).
 *
 * Conventions as in treematch/treematch.h: 0/-1 (or pointer/NULL) with errno
 * and an optional tmatch_error_t; a failing call leaves its outputs alone;
 * destroy(NULL) is a no-op; no global state. Nothing here includes Slurm or
 * prints.
 */
#ifndef TMATCH_PLACEMENT_PREDICT_H
#define TMATCH_PLACEMENT_PREDICT_H

#include "treematch/treematch.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * predict.c: what `treematch predict` hands SimGrid's trace replay.
 *
 * A machine description: per level of the tree (1 .. depth, 0 is the root)
 * the bandwidth and latency of the link from each node of that level to its
 * parent, and the speed of a core, as SimGrid quantities ("12.5GBps",
 * "1us", "1Gf"). machine_init: defaults by level name (switch 12.5GBps 2us,
 * node 12.5GBps 1us, package 40GBps 100ns, l3 80GBps 50ns, core 100GBps
 * 10ns, ...; speed 1Gf). machine_load: "LEVEL = BANDWIDTH LATENCY" and
 * "speed = FLOPS" lines ('#' comments), LEVEL a level name of the tree;
 * errors name the file and line.
 * platform_write: the SimGrid platform of the tree: host hL per leaf L,
 * routers per inner node, a split-duplex link per tree edge, routes along
 * the tree. hostfile_write: rank r on host h<leaf_of_rank[r]>.
 * trace_load: a time-independent trace (the index file of one file per
 * rank, as smpirun -trace-ti writes it), every rank's file checked (its
 * rank on every line, init first, finalize last, peers and sizes in range),
 * and the bytes each rank sends each other (send, isend, sendRecv) as the
 * matrix a mapper takes. Errors name the file and line.
 */
#define TMATCH_PLACE_MACHINE_LEVELS 16
typedef struct tmatch_place_machine {
	char bw[TMATCH_PLACE_MACHINE_LEVELS][32];
	char lat[TMATCH_PLACE_MACHINE_LEVELS][32];
	char speed[32];
} tmatch_place_machine_t;

typedef struct tmatch_place_trace {
	int nranks;
	char **files;        /* [nranks], each rank's file */
	tmatch_comm_t *comm; /* bytes sent between ranks */
} tmatch_place_trace_t;

void tmatch_place_machine_init(tmatch_place_machine_t *m, const tmatch_topo_t *topo);
int tmatch_place_machine_load(tmatch_place_machine_t *m, const tmatch_topo_t *topo,
                              const char *path, tmatch_error_t *err);
int tmatch_place_platform_write(FILE *out, const tmatch_topo_t *topo,
                                const tmatch_place_machine_t *m, tmatch_error_t *err);
int tmatch_place_hostfile_write(FILE *out, const int *leaf_of_rank, int n);
/* The trace's index again, every file an absolute path (SimGrid reads the
   names relative to its own directory). */
int tmatch_place_trace_index_write(FILE *out, const tmatch_place_trace_t *t);
tmatch_place_trace_t *tmatch_place_trace_load(const char *index, tmatch_error_t *err);
void tmatch_place_trace_destroy(tmatch_place_trace_t *t);

/*
 * A prediction kept for the plugin (`treematch predict --save FILE`; beside
 * a profile as PROFILE.predict, the plugin's verbose mode prints the
 * predicted gain at launch): "treematch-prediction 1", '#' comments (the
 * first says what was predicted: `about`), then "MAPPING SECONDS" per
 * placement (names with blanks or of more than NAME characters are left
 * out). prediction_read, on a regular file of at most MAX bytes: 0 with the
 * predicted seconds of `mapping` and of packed, 1 when the file lacks one
 * of them (that one -1), -1 with err naming the file and line.
 */
#define TMATCH_PLACE_PREDICTION_MAX  (64 * 1024)
#define TMATCH_PLACE_PREDICTION_NAME 255
int tmatch_place_prediction_write(FILE *out, const char *about, const char *const names[],
                                  const double seconds[], int n);
int tmatch_place_prediction_read(const char *path, const char *mapping, double *mapped,
                                 double *packed, tmatch_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PLACEMENT_PREDICT_H */
