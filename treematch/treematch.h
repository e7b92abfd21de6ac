/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * treematch.h - the mapping core: machine trees, communication matrices,
 * mappers and the metrics of a mapping.
 *
 * No Slurm, no hwloc, no printing. Every function that can fail returns -1
 * (or NULL), sets errno and, when `err` is not NULL, fills it with a message
 * (and, for files, the file, line and column). A failing call leaves its
 * outputs untouched. Nothing here keeps process-global state: all functions
 * are reentrant, and any randomness comes from an explicit seed.
 *
 * Index spaces: a `rank` is a row of the communication matrix (0..n-1); a
 * `leaf` is a leaf of the machine tree, numbered depth first (0..leaves-1).
 */
#ifndef TMATCH_TREEMATCH_H
#define TMATCH_TREEMATCH_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TMATCH_API __attribute__((visibility("default")))

/* Deepest tree we accept (levels below the root). */
#define TMATCH_MAX_DEPTH 16

/* ------------------------------------------------------------------------ */
/* Errors and logging                                                        */

typedef struct tmatch_error {
	char file[256]; /* file the problem is in, "" if none */
	int line;       /* 1-based; 0 when it does not apply */
	int column;     /* 1-based; 0 when it does not apply */
	char msg[512];  /* what is wrong and how to fix it; never file contents */
} tmatch_error_t;

/* Reset to "no error". Accepts NULL. */
TMATCH_API void tmatch_error_clear(tmatch_error_t *err);

/*
 * Format an error as "file:line:column: msg" (parts that do not apply are
 * left out) into buf. Returns buf.
 */
TMATCH_API const char *tmatch_error_format(const tmatch_error_t *err, char *buf, size_t len);

/*
 * Fill err (when not NULL) with the place of a problem (file NULL = none,
 * line and column 0 = do not apply) and a printf-style message, set errno to
 * errnum unless it is 0, and return -1. The one error helper of every module
 * of the library, so that `return tmatch_error_set(err, EINVAL, ...)` ends a
 * failing function. The message is truncated to fit; errno is set last.
 */
TMATCH_API int tmatch_error_set(tmatch_error_t *err, int errnum, const char *file, int line,
                                int column, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
TMATCH_API int tmatch_error_vset(tmatch_error_t *err, int errnum, const char *file, int line,
                                 int column, const char *fmt, va_list ap)
    __attribute__((format(printf, 6, 0)));

/*
 * Open a file every reader of the library reads from: a regular file only
 * (a FIFO is refused without the open waiting for a writer, a device or a
 * directory too), for reading, close-on-exec. The stream (close it with
 * fclose), or NULL with err naming the file: the open's errno, or EINVAL
 * "not a regular file: ...". *size (may be NULL) gets its size in bytes.
 */
TMATCH_API FILE *tmatch_file_open(const char *path, unsigned long long *size, tmatch_error_t *err);

/*
 * The whole of a small file (a CPU list, topology.conf, an hwloc XML), opened
 * as tmatch_file_open does, of at most max_bytes, read in one piece and
 * NUL-terminated (free it). NULL with err naming the file: EINVAL not a
 * regular file, EFBIG larger than max_bytes, else the errno.
 */
TMATCH_API char *tmatch_file_read(const char *path, size_t max_bytes, size_t *len,
                                  tmatch_error_t *err);

enum tmatch_log_level {
	TMATCH_LOG_ERROR = 0,
	TMATCH_LOG_WARNING = 1,
	TMATCH_LOG_INFO = 2,
	TMATCH_LOG_DEBUG = 3,
	/* how far a long piece of work is ("search 45%"): for a progress line,
	   not a log (a callback that does not show one drops it) */
	TMATCH_LOG_PROGRESS = 4,
};

/* Logging goes through a callback owned by the caller; NULL means silence. */
typedef void (*tmatch_log_fn)(void *arg, int level, const char *msg);

/* Format a message and hand it to `log` (nothing when log is NULL). */
TMATCH_API void tmatch_log_printf(tmatch_log_fn log, void *arg, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
TMATCH_API void tmatch_log_vprintf(tmatch_log_fn log, void *arg, int level, const char *fmt,
                                   va_list ap) __attribute__((format(printf, 4, 0)));

/*
 * The decimal reader of the library's text formats (profiles, the policy
 * grammar): s[0..len) must be digits only (no sign, no blank, at most 20)
 * and the value at most `max`. 0 with *out set, or -1 (*out untouched).
 */
TMATCH_API int tmatch_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out);

/*
 * A size as admins write them: digits with an optional K, M or G suffix
 * (binary units), more than 0, at most `max` bytes. 0 with *out, or -1.
 */
TMATCH_API int tmatch_parse_size(const char *s, size_t len, uint64_t max, uint64_t *out);

/*
 * "Did you mean": the name of names[0..n) that word[0..len) is a slip of
 * (at most 1 letter added, dropped, changed or two swapped for words of up
 * to 4 letters, 2 for longer ones; or a prefix or extension of it by up to
 * 2 letters), the closest first, the lowest index on a tie. Its index, or
 * -1 when none is that close (an exact match is not a slip: -1 too).
 */
TMATCH_API int tmatch_closest_name(const char *word, size_t len, const char *const *names,
                                   size_t n);

/* ------------------------------------------------------------------------ */
/* Machine tree                                                              */

/*
 * A balanced tree: `depth` levels below the root, every node at depth l has
 * arity[l] children (l = 0 is the root), leaves numbered depth first. cost[l]
 * is the cost of one unit of traffic between two leaves whose lowest common
 * ancestor is at depth l. An optional allowed-leaf set restricts where ranks
 * may go (partial allocations, padded unbalanced trees).
 */
typedef struct tmatch_topo tmatch_topo_t;

/*
 * Build a tree. arity has `depth` entries >= 1; cost may be NULL (then
 * cost[l] = depth - l, i.e. one per level climbed). The number of leaves
 * must fit in an int. Fails with EINVAL.
 */
TMATCH_API tmatch_topo_t *tmatch_topo_create(int depth, const int *arity, const double *cost,
                                             tmatch_error_t *err);

/*
 * The most leaves a tree described by a spec may have (tleaf strings, hwloc
 * synthetic descriptions): 4,194,304, four times the largest step the
 * project targets. A spec of more is refused before anything is built (a
 * 1e8-leaf spec took 57 s and 4.3 GB).
 */
#define TMATCH_TOPO_MAX_LEAVES (1LL << 22)

/*
 * Parse "tleaf h a0 c0 a1 c1 ... a(h-1) c(h-1)" (the format TreeMatch and
 * Scotch share; the leading word "tleaf" is optional), at most
 * TMATCH_TOPO_MAX_LEAVES leaves. Errors give the column of the offending
 * token.
 */
TMATCH_API tmatch_topo_t *tmatch_topo_from_tleaf(const char *spec, tmatch_error_t *err);

/* Deep copy. */
TMATCH_API tmatch_topo_t *tmatch_topo_dup(const tmatch_topo_t *topo, tmatch_error_t *err);

/* destroy(NULL) is a no-op. */
TMATCH_API void tmatch_topo_destroy(tmatch_topo_t *topo);

TMATCH_API int tmatch_topo_depth(const tmatch_topo_t *topo);
TMATCH_API int tmatch_topo_arity(const tmatch_topo_t *topo, int level);
TMATCH_API double tmatch_topo_cost(const tmatch_topo_t *topo, int level);
TMATCH_API int tmatch_topo_nb_leaves(const tmatch_topo_t *topo);

/*
 * Restrict the usable leaves to `leaves[0..count-1]` (distinct, in range);
 * leaves == NULL restores all. Fails with EINVAL, leaving the set unchanged.
 */
TMATCH_API int tmatch_topo_set_allowed(tmatch_topo_t *topo, const int *leaves, int count,
                                       tmatch_error_t *err);
TMATCH_API int tmatch_topo_is_allowed(const tmatch_topo_t *topo, int leaf);
TMATCH_API int tmatch_topo_nb_allowed(const tmatch_topo_t *topo);

/* Optional level names for display ("switch", "node", "package", "core"). */
TMATCH_API int tmatch_topo_set_level_name(tmatch_topo_t *topo, int level, const char *name);
TMATCH_API const char *tmatch_topo_level_name(const tmatch_topo_t *topo, int level);

/* Depth of the lowest common ancestor of two leaves (depth when a == b). */
TMATCH_API int tmatch_topo_lca_depth(const tmatch_topo_t *topo, int leaf_a, int leaf_b);

/* Write the tree as a tleaf string. Returns the length (snprintf-style). */
TMATCH_API int tmatch_topo_format(const tmatch_topo_t *topo, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Communication matrix                                                      */

/*
 * Symmetric sparse matrix (CSR, both triangles stored, no diagonal). The
 * weight of (i, j) is the total traffic between the two ranks, i.e. the sum
 * of what was given for (i, j) and for (j, i). Memory is O(n + nnz).
 */
typedef struct tmatch_comm tmatch_comm_t;

/*
 * Build from an edge list. Duplicates are summed, (i, j) and (j, i) are
 * summed, self edges are dropped, zero weights are dropped. Weights must be
 * finite and >= 0; indices in [0, n). weight == NULL means 1 per edge.
 * Fails with EINVAL (bad input) or ENOMEM.
 */
TMATCH_API tmatch_comm_t *tmatch_comm_from_edges(int n, size_t nedges, const int *src,
                                                 const int *dst, const double *weight,
                                                 tmatch_error_t *err);

/*
 * Build from edges handed over one at a time: source(sarg, visit, varg)
 * calls visit(varg, i, j, w) for every edge, with i < j in increasing
 * (i, j) order and each pair once (a finished undirected profile's edges),
 * w finite and >= 0 (0: no edge), and returns 0, or -1 to stop (its error
 * then stands). It is called twice, rows counted then filled, and must give
 * the same edges both times. The matrix is made in its own size, with no
 * copy of the edges: what tmatch_comm_from_edges gives for the same edges.
 * Fails with EINVAL (edges out of order or range, or not the same twice),
 * ENOMEM, or the source's own error.
 */
typedef void (*tmatch_edge_visit_fn)(void *varg, int i, int j, double w);
typedef int (*tmatch_edge_source_fn)(void *sarg, tmatch_edge_visit_fn visit, void *varg);
TMATCH_API tmatch_comm_t *tmatch_comm_from_sorted_edges(int n, tmatch_edge_source_fn source,
                                                        void *sarg, tmatch_error_t *err);

/*
 * The two matrix file formats, each read by one reader that every caller
 * shares (the loaders below, the profile importer): Matrix Market
 * coordinate (.mtx: real, integer or pattern; general, or symmetric with
 * only ROW >= COL stored) and the TreeMatch dense text matrix (.mat: N lines
 * of N non-negative numbers).
 */
enum tmatch_matrix_format {
	TMATCH_MATRIX_MTX = 1,
	TMATCH_MATRIX_MAT = 2,
};

/* The format a file name says (".mtx", ".mat", any case), 0 for neither. */
TMATCH_API int tmatch_matrix_format_of(const char *path);

/* One stored entry, as the file gives it. */
typedef struct tmatch_matrix_entry {
	int row, col;     /* 0-based; a .mat file gives its non-zero off-diagonal entries only */
	double value;     /* 1 in a pattern file */
	const char *text; /* the value as written (checked: a non-negative number), NULL for
	                     pattern; valid during the callback only */
	int order;        /* the matrix's order; 0 while unknown (the first row of a .mat) */
	int symmetric;    /* 1 in a symmetric .mtx: the entry stands for both triangles */
	int line;         /* its line in the file (1-based) */
} tmatch_matrix_entry_t;

/* Called for every entry. Return 0 to go on, or -1 with errno and err->msg
   (and err->column if it helps) set to stop the reading: the reader names
   the file and the entry's line. */
typedef int (*tmatch_matrix_entry_fn)(void *arg, const tmatch_matrix_entry_t *entry,
                                      tmatch_error_t *err);

/*
 * Read `path` in `format`, calling `fn` for each entry in file order. The
 * banner, the size line, every number, index and the count of entries are
 * checked here. 0 with *order and *symmetric set (either may be NULL); on a
 * malformed file -1/EINVAL (EIO on a read error, the errno of fopen) with
 * err naming the file, line and column and saying what to fix.
 */
TMATCH_API int tmatch_matrix_read(const char *path, int format, tmatch_matrix_entry_fn fn,
                                  void *arg, int *order, int *symmetric, tmatch_error_t *err);

/* Matrix Market coordinate file (real, integer or pattern; general or symmetric). */
TMATCH_API tmatch_comm_t *tmatch_comm_load_mtx(const char *path, tmatch_error_t *err);

/* TreeMatch dense text matrix: N lines of N non-negative numbers. */
TMATCH_API tmatch_comm_t *tmatch_comm_load_mat(const char *path, tmatch_error_t *err);

/* Either of the above, chosen by the file's extension (.mtx, .mat). */
TMATCH_API tmatch_comm_t *tmatch_comm_load(const char *path, tmatch_error_t *err);

TMATCH_API void tmatch_comm_destroy(tmatch_comm_t *comm);

TMATCH_API int tmatch_comm_order(const tmatch_comm_t *comm);
/* Stored entries (each unordered pair counts twice). */
TMATCH_API size_t tmatch_comm_nnz(const tmatch_comm_t *comm);
/* Sum over unordered pairs of their weight. */
TMATCH_API double tmatch_comm_total(const tmatch_comm_t *comm);
/*
 * Row i: sets *cols and *weights (may be NULL) to arrays of the returned
 * length, columns in increasing order. Returns -1 (EINVAL) if i is out of range.
 */
TMATCH_API int tmatch_comm_row(const tmatch_comm_t *comm, int i, const int **cols,
                               const double **weights);
/* Weight of (i, j), 0 when absent (binary search in row i). */
TMATCH_API double tmatch_comm_get(const tmatch_comm_t *comm, int i, int j);
/*
 * The matrix restricted to `ranks` (nranks distinct ranks of `full`), in the
 * list's order: entry (a, b) of the result is entry (ranks[a], ranks[b]) of
 * `full`; traffic with ranks not listed is dropped. This is the sub-profile
 * of one node's tasks that the SPANK plugin maps, and what `treematch map
 * --ranks` maps. Fails with EINVAL (NULL, empty list, a rank out of range
 * or repeated: err names it) or ENOMEM; the caller destroys the result.
 */
TMATCH_API tmatch_comm_t *tmatch_comm_submatrix(const tmatch_comm_t *full, const int *ranks,
                                                int nranks, tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* Mapping                                                                   */

/* The mapper used when none is named. */
#define TMATCH_DEFAULT_MAPPER "auto"

typedef struct tmatch_map_opts {
	const char *mapper;   /* NULL or "" = TMATCH_DEFAULT_MAPPER; see tmatch_map_mappers() */
	uint64_t seed;        /* seeds every random choice */
	int exact_max_groups; /* exact grouping when the candidate groups are at most this many,
	                         bucket grouping above (0 = library default) */
	long iter_budget;     /* refinement/search steps (0 = library default); deterministic */
	double time_budget;   /* seconds; a safety cap only (0 = none). Results may differ if it
	                         is hit: that is reported through the log callback */
	size_t mem_budget;    /* bytes of working memory (0 = library default) */
	tmatch_log_fn log;
	void *log_arg;
	double search_time; /* seconds auto may add for its budgeted search (0 = none): counted
	                       in steps at a fixed rate, so the result does not depend on the
	                       machine's speed; see TMATCH_SEARCH_STEPS_PER_S */
} tmatch_map_opts_t;

/* The most threads a mapping uses (auto's candidates on inputs of at most
   1024 ranks, the bisection's subtrees on inputs of at least 16384; every
   other mapper uses one). */
#define TMATCH_MAP_MAX_THREADS 4

/* The steps of search one second of search_time buys (a conservative rate). */
#define TMATCH_SEARCH_STEPS_PER_S 20000000.0

/* Fill with defaults. */
TMATCH_API void tmatch_map_opts_init(tmatch_map_opts_t *opts);

/* NULL-terminated list of mapper names (without "+refine" variants). */
TMATCH_API const char *const *tmatch_map_mappers(void);

/* 0 if `name` (optionally with "+refine") is a known mapper, else -1/EINVAL with the list. */
TMATCH_API int tmatch_map_check_name(const char *name, tmatch_error_t *err);

/*
 * Place every rank of `comm` on a distinct allowed leaf of `topo`:
 * leaf_of_rank[r] for r in [0, n). Needs n <= allowed leaves (EINVAL
 * otherwise). Deterministic for given inputs and options.
 */
TMATCH_API int tmatch_map_compute(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                                  const tmatch_map_opts_t *opts, int *leaf_of_rank,
                                  tmatch_error_t *err);

/*
 * Read a mapping file, the plain format `treematch map` writes: one line per
 * rank, "RANK LEAF", or a lone "LEAF" for the rank after the previous line's;
 * '#' starts a comment, blank lines are ignored; each of the n ranks exactly
 * once. Fills leaf_of_rank[n] and, when not NULL, line_of_rank[n] (the line
 * that placed each rank). The leaves are not checked against a tree (see
 * tmatch_map_validate). -1 with err naming the file, line and column
 * (EINVAL), or the errno of a failed open/read; outputs untouched then.
 */
TMATCH_API int tmatch_map_read(const char *path, int n, int *leaf_of_rank, int *line_of_rank,
                               tmatch_error_t *err);

/*
 * Write a mapping in the plain format tmatch_map_read reads: for each of the
 * n ranks, "RANK LEAF\n", RANK being rank_of[r] (global rank numbers of a
 * node's sub-matrix) or r when rank_of is NULL. 0, or -1 with errno and
 * err when out cannot be written.
 */
TMATCH_API int tmatch_map_write(FILE *out, const int *rank_of, const int *leaf_of_rank, int n,
                                tmatch_error_t *err);

/* tmatch_map_read, then tmatch_map_validate on `topo`: a leaf outside the
   tree, not allowed or used twice is reported at the line that placed it. */
TMATCH_API int tmatch_map_load(const char *path, const tmatch_topo_t *topo, int n,
                               int *leaf_of_rank, tmatch_error_t *err);

/* 0 if the mapping is injective onto allowed leaves, else -1/EINVAL saying which rank. */
TMATCH_API int tmatch_map_validate(const tmatch_topo_t *topo, const int *leaf_of_rank, int n,
                                   tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* Metrics                                                                   */

typedef struct tmatch_metrics {
	/* sum over pairs of weight x 2 x (levels climbed to the common ancestor) */
	double hop_bytes;
	/* sum over pairs of weight x cost[depth of the common ancestor] */
	double cost;
	/* traffic whose common ancestor is at depth l; [depth] is unused (no
	   two ranks share a leaf) */
	double level_traffic[TMATCH_MAX_DEPTH + 1];
	/* heaviest traffic crossing the uplink of any tree node (a node at
	   depth >= 1): its value, depth and index within its level */
	double max_node_traffic;
	int max_node_depth;
	int max_node_index;
	/* Hoefler-Snir: per-link load on the tree's links (uplink of each node,
	   divided by the level's link capacity = 1); max congestion and the
	   average/maximum dilation in hops of the traffic-weighted pairs */
	double congestion;
	double dilation_avg;
	int dilation_max;
} tmatch_metrics_t;

TMATCH_API int tmatch_eval(const tmatch_comm_t *comm, const tmatch_topo_t *topo,
                           const int *leaf_of_rank, tmatch_metrics_t *out, tmatch_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_TREEMATCH_H */
