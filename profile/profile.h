/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile.h - communication profiles: the versioned YAML format
 * "comm-profile" (see treematch-profile(5)), its loader, its writer and the
 * bridge to the mapping core's tmatch_comm_t.
 *
 * A profile is hostile input: slurmstepd reads it as root. The loader streams
 * libyaml events (no document tree), refuses anchors and aliases, checks the
 * file size before parsing, caps nesting depth, scalar length, rank and edge
 * counts, and validates every number. Every error names the file, the line
 * and the column and says what to fix; it never quotes the file's contents.
 *
 * Conventions as in treematch/treematch.h: functions return 0/-1 (or
 * pointer/NULL) and set errno (EINVAL bad input, EFBIG a file over
 * max_file_size, E2BIG more ranks than max_ranks: whose limit it is, the
 * caller says; ENOMEM, or the errno of a failed read); `err` may be NULL; a
 * failing call leaves its outputs untouched; destroy(NULL) is a no-op; no
 * global state.
 *
 * Index spaces: `rank` = MPI_COMM_WORLD rank, 0..ranks-1.
 */
#ifndef TMATCH_PROFILE_PROFILE_H
#define TMATCH_PROFILE_PROFILE_H

#include "treematch/treematch.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The newest format version this library reads and writes (it reads 1 and
   2; it writes 1 when the profile does not say what its collectives are,
   tmatch_profile_collectives() TMATCH_COLL_UNSTATED, else 2). */
#define TMATCH_PROFILE_VERSION 2

/* ------------------------------------------------------------------------ */
/* Limits                                                                    */

typedef struct tmatch_profile_limits {
	size_t max_file_size;  /* bytes; checked with fstat before parsing (default 256 MiB) */
	int max_ranks;         /* largest accepted `ranks` (default 1048576) */
	size_t max_edges;      /* rows in edges + coll_edges together (default 64 Mi) */
	int max_depth;         /* YAML nesting depth (default 16) */
	size_t max_scalar_len; /* longest scalar in bytes (default 4096) */
	int max_matrix_ranks;  /* largest `ranks` for the dense `matrix` form (default 1024) */
	int allow_special;     /* 1: also read pipes and devices; default 0: regular files
	                          only, so a FIFO cannot block the reader */
} tmatch_profile_limits_t;

#define TMATCH_PROFILE_DEFAULT_MAX_RANKS     1048576
#define TMATCH_PROFILE_DEFAULT_MAX_FILE_SIZE ((size_t)256 << 20)

/* Fill with the defaults above. */
TMATCH_API void tmatch_profile_limits_init(tmatch_profile_limits_t *lim);

/* ------------------------------------------------------------------------ */
/* Metrics and edge sets                                                     */

typedef enum tmatch_profile_metric {
	TMATCH_METRIC_BYTES = 0, /* bytes sent */
	TMATCH_METRIC_MSGS = 1,  /* messages sent */
	TMATCH_METRIC_AVG = 2,   /* bytes / msgs per pair (average message size, TreeMatch paper) */
} tmatch_profile_metric_t;

/* "bytes", "msgs", "avg" <-> enum. parse: -1/EINVAL listing the valid names. */
TMATCH_API int tmatch_profile_metric_parse(const char *name, tmatch_profile_metric_t *out,
                                           tmatch_error_t *err);
TMATCH_API const char *tmatch_profile_metric_name(tmatch_profile_metric_t m);

/* Bits for `metrics` (what a profile records). */
#define TMATCH_PROFILE_HAS_BYTES 0x1u
#define TMATCH_PROFILE_HAS_MSGS  0x2u

/* Edge sets (bit flags where a set of sets is asked for). */
#define TMATCH_PROFILE_P2P  0x1u /* `edges`: point-to-point traffic */
#define TMATCH_PROFILE_COLL 0x2u /* `coll_edges`: collective traffic */
/* `coll_edges` when the profile says they are the messages collectives
   send (`collectives: wire`), none otherwise: what a placement counts by
   default (placement/step.c's tmatch_place_comm decides; to_comm and
   compiled_comm resolve it against the profile). */
#define TMATCH_PROFILE_COLL_WIRE 0x4u

/* What `coll_edges` hold (the `collectives` key of version 2). */
typedef enum tmatch_profile_coll {
	TMATCH_COLL_UNSTATED = 0, /* version 1: not said (placed by only when asked) */
	TMATCH_COLL_WIRE = 1,     /* the messages of the collectives' algorithms, between world
	                             ranks (the recorder's default, Open MPI's I lines) */
	TMATCH_COLL_LOGICAL = 2,  /* a logical model: one message per pair that depends on
	                             another (placed by only when asked) */
} tmatch_profile_coll_t;

/* "wire", "logical" <-> enum ("" for UNSTATED). parse: -1/EINVAL naming the valid ones. */
TMATCH_API int tmatch_profile_coll_parse(const char *name, tmatch_profile_coll_t *out,
                                         tmatch_error_t *err);
TMATCH_API const char *tmatch_profile_coll_name(tmatch_profile_coll_t c);

/* ------------------------------------------------------------------------ */
/* The profile object                                                        */

typedef struct tmatch_profile tmatch_profile_t;

/*
 * Load a profile. `lim` NULL = defaults; `log` (may be NULL) receives the
 * warnings (self edges ignored, duplicate directed edges summed, all-zero
 * profile...), each starting with the display name and line.
 *
 * load:        opens `path` itself (O_RDONLY|O_NONBLOCK, so opening a FIFO
 *              does not block; symlinks are followed: a privileged caller
 *              opens the file with the user's rights and uses load_fd).
 * load_fd:     reads an already-open fd from its current position to EOF.
 *              Regular files: size checked with fstat first. Anything else
 *              (pipe, device, socket) is refused with EINVAL unless
 *              lim->allow_special, in which case the size limit is enforced
 *              while reading. `name` is only used in messages (NULL =
 *              "<fd>"). The fd is NOT closed.
 * load_buffer: parses `len` bytes from memory (fuzzing, tests).
 */
TMATCH_API tmatch_profile_t *tmatch_profile_load(const char *path,
                                                 const tmatch_profile_limits_t *lim,
                                                 tmatch_log_fn log, void *log_arg,
                                                 tmatch_error_t *err);
TMATCH_API tmatch_profile_t *tmatch_profile_load_fd(int fd, const char *name,
                                                    const tmatch_profile_limits_t *lim,
                                                    tmatch_log_fn log, void *log_arg,
                                                    tmatch_error_t *err);
TMATCH_API tmatch_profile_t *tmatch_profile_load_buffer(const void *buf, size_t len,
                                                        const char *name,
                                                        const tmatch_profile_limits_t *lim,
                                                        tmatch_log_fn log, void *log_arg,
                                                        tmatch_error_t *err);

/*
 * The matrix of the profile at `path` (tmatch_profile_to_comm of what
 * tmatch_profile_load reads; metric < 0: the profile's placement metric),
 * the same matrix for less memory: an undirected compiled profile (a
 * converted matrix) is read straight into it, its file's pages given back
 * as they are read, with no profile in between (1,048,576 ranks of a 3D
 * stencil: about 90 MB at the peak instead of 220). Errors as the loader's
 * and tmatch_profile_to_comm's, naming the file.
 */
TMATCH_API tmatch_comm_t *tmatch_profile_load_comm(const char *path,
                                                   const tmatch_profile_limits_t *lim, int metric,
                                                   unsigned sets, tmatch_log_fn log, void *log_arg,
                                                   tmatch_error_t *err);

/* destroy(NULL) is a no-op. */
TMATCH_API void tmatch_profile_destroy(tmatch_profile_t *p);

/* Number of ranks (the `ranks` key). */
TMATCH_API int tmatch_profile_ranks(const tmatch_profile_t *p);

/* TMATCH_PROFILE_HAS_* bits of the recorded metrics. */
TMATCH_API unsigned tmatch_profile_metrics(const tmatch_profile_t *p);

/* 1 if rows are sender->receiver, 0 if each unordered pair appears once. */
TMATCH_API int tmatch_profile_directed(const tmatch_profile_t *p);

/* The file's `placement_metric` (bytes when absent). */
TMATCH_API tmatch_profile_metric_t tmatch_profile_placement_metric(const tmatch_profile_t *p);

/* What its coll_edges hold: version 1 UNSTATED, version 2 the `collectives`
   key (wire when absent). set: -1/EINVAL for an unknown value. */
TMATCH_API tmatch_profile_coll_t tmatch_profile_collectives(const tmatch_profile_t *p);
TMATCH_API int tmatch_profile_set_collectives(tmatch_profile_t *p, tmatch_profile_coll_t c,
                                              tmatch_error_t *err);
/* The edge sets `sets` asks for in p (TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL), with
   TMATCH_PROFILE_COLL_WIRE resolved against what p's collectives are. */
TMATCH_API unsigned tmatch_profile_sets(const tmatch_profile_t *p, unsigned sets);

/*
 * 0 if the profile has exactly `expected` ranks; else -1/EINVAL with a
 * message giving both numbers ("profile has 64 ranks but the job step has
 * 128 tasks: record a profile with 128 ranks").
 */
TMATCH_API int tmatch_profile_check_ranks(const tmatch_profile_t *p, int expected,
                                          tmatch_error_t *err);

/*
 * Edges of one set (TMATCH_PROFILE_P2P or TMATCH_PROFILE_COLL), sorted by
 * (src, dst), duplicates merged; for an undirected profile src < dst.
 * edge(): idx in [0, nedges); any output pointer may be NULL; a metric the
 * profile does not record reads as 0. Returns -1/EINVAL out of range.
 */
TMATCH_API size_t tmatch_profile_nedges(const tmatch_profile_t *p, unsigned set);
TMATCH_API int tmatch_profile_edge(const tmatch_profile_t *p, unsigned set, size_t idx, int *src,
                                   int *dst, uint64_t *bytes, uint64_t *msgs);

/*
 * Provenance (informative only, never used for decisions). Keys:
 * "application", "tool", "tool_version", "mpi_library", "created" (RFC 3339),
 * "source" (free text: what a converter read). get: NULL when absent or an
 * unknown key. set: value NULL removes; -1/EINVAL on unknown key or a value
 * longer than 1024 bytes or holding control characters.
 */
TMATCH_API const char *tmatch_profile_info(const tmatch_profile_t *p, const char *key);
TMATCH_API int tmatch_profile_set_info(tmatch_profile_t *p, const char *key, const char *value,
                                       tmatch_error_t *err);
/* Layout when recorded: number of nodes and ranks per node (0 = unknown). */
TMATCH_API void tmatch_profile_layout(const tmatch_profile_t *p, int *nodes, int *ranks_per_node);
TMATCH_API int tmatch_profile_set_layout(tmatch_profile_t *p, int nodes, int ranks_per_node,
                                         tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* Building (converters)                                                     */

/*
 * An empty profile: `ranks` in [1, TMATCH_PROFILE_DEFAULT_MAX_RANKS], metrics
 * a non-zero mix of TMATCH_PROFILE_HAS_*, directed 0/1.
 */
TMATCH_API tmatch_profile_t *tmatch_profile_create(int ranks, unsigned metrics, int directed,
                                                   tmatch_error_t *err);
TMATCH_API int tmatch_profile_set_placement_metric(tmatch_profile_t *p, tmatch_profile_metric_t m,
                                                   tmatch_error_t *err);

/*
 * Append one edge to `set`. Same rules as the loader: src/dst in range,
 * weights < 2^63; a self edge is ignored with a warning through `log` (returns
 * 0). Duplicates are merged by tmatch_profile_finish(): summed when directed,
 * refused (EINVAL) when undirected; (j, i) counts as a duplicate of (i, j).
 * For undirected profiles, (i, j) is stored as (min, max).
 */
TMATCH_API int tmatch_profile_add_edge(tmatch_profile_t *p, unsigned set, int src, int dst,
                                       uint64_t bytes, uint64_t msgs, tmatch_log_fn log,
                                       void *log_arg, tmatch_error_t *err);

/* Sort and merge after add_edge calls. Needed before write/to_comm/edge(). */
TMATCH_API int tmatch_profile_finish(tmatch_profile_t *p, tmatch_log_fn log, void *log_arg,
                                     tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* Importing what other tools write                                          */

enum tmatch_profile_format {
	TMATCH_PROFILE_FROM_MTX = 1,   /* Matrix Market coordinate (tmatch_matrix_read) */
	TMATCH_PROFILE_FROM_MAT = 2,   /* TreeMatch dense text matrix (tmatch_matrix_read) */
	TMATCH_PROFILE_FROM_EDGES = 3, /* "src dst bytes [msgs]" lines, 0-based, '#' comments */
	TMATCH_PROFILE_FROM_OMPI = 4,  /* Open MPI pml monitoring .prof files */
	TMATCH_PROFILE_FROM_YAML = 5,  /* a comm-profile (loaded as is) */
};

/* "mtx", "mat", "edges", "ompi", "yaml" -> format; -1/EINVAL listing them. */
TMATCH_API int tmatch_profile_format_parse(const char *name, int *format, tmatch_error_t *err);
/* The format a file name says: .mtx .mat .prof .yml/.yaml (and .compiled, which the YAML
   loader recognises); anything else is an edge list. */
TMATCH_API int tmatch_profile_format_of(const char *path);

typedef struct tmatch_profile_import_opts {
	int format;     /* enum tmatch_profile_format; 0 = tmatch_profile_format_of(paths[0]) */
	int ranks;      /* number of ranks; 0 = the matrix's order, or the largest rank + 1 */
	int undirected; /* edge lists: each pair given once (default: src -> dst) */
	int coll;       /* Open MPI: 'w' adds the I lines (wire traffic of collectives) and
	                   'l' the C lines (logical) as coll_edges; 0 = point-to-point only */
} tmatch_profile_import_opts_t;

/*
 * A profile from `npaths` files (only edge lists and .prof files may be
 * several: their edges add up; "-" reads standard input). Matrix Market
 * general files give directed profiles, symmetric ones undirected; a .mat
 * file is undirected when it is symmetric (at most 16384 rows). Values must
 * be whole numbers. The result is finished, with "source" naming the input
 * format in its provenance. Errors name the file and the line; `log`
 * receives the builder's warnings (self edges, duplicates summed).
 * opts NULL = all defaults. A YAML input is loaded with allow_special.
 */
TMATCH_API tmatch_profile_t *tmatch_profile_import(const char *const *paths, int npaths,
                                                   const tmatch_profile_import_opts_t *opts,
                                                   tmatch_log_fn log, void *log_arg,
                                                   tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* Output                                                                    */

/* Writer flags. */
#define TMATCH_PROFILE_WRITE_MATRIX 0x1u /* add a dense `matrix` (ranks <= 1024, one metric) */

/*
 * Write the profile in the canonical form (header, provenance, edges,
 * coll_edges): version 1, or 2 with `collectives` when the profile says
 * what its collectives are. Deterministic: the same profile gives the same bytes, and
 * load(write(p)) gives back p exactly. Fails with EINVAL (unfinished
 * profile, bad flags) or the errno of the failed write.
 */
TMATCH_API int tmatch_profile_write(const tmatch_profile_t *p, FILE *out, unsigned flags,
                                    tmatch_error_t *err);
/* Same, to a file created (or truncated) at `path`. */
TMATCH_API int tmatch_profile_save(const tmatch_profile_t *p, const char *path, unsigned flags,
                                   tmatch_error_t *err);

/*
 * The compiled (binary) form (`treematch profile compile`): the profile's
 * finished edges indexed by rank, checksummed, loaded in time proportional
 * to its size; tmatch_profile_load* recognise it by its first bytes.
 * compile: fails with EINVAL (unfinished profile) or the write's errno.
 * is_compiled: 1 if buf starts like a compiled profile.
 * compiled_comm: the matrix of ranks[0..n) only (in that order), as
 * tmatch_comm_submatrix(tmatch_profile_to_comm(whole), ranks) would give,
 * reading only those ranks' rows from the regular file `fd` (header and
 * row checks, no whole-file checksum): what one node needs. metric < 0:
 * the profile's placement_metric.
 */
TMATCH_API int tmatch_profile_compile(const tmatch_profile_t *p, FILE *out, tmatch_error_t *err);
TMATCH_API int tmatch_profile_is_compiled(const void *buf, size_t len);
TMATCH_API tmatch_comm_t *tmatch_profile_compiled_comm(int fd, const char *name, const int *ranks,
                                                       int n, int metric, unsigned sets,
                                                       const tmatch_profile_limits_t *lim,
                                                       tmatch_error_t *err);

/*
 * The symmetric matrix the mappers consume: weight(i, j) = metric of (i, j)
 * plus metric of (j, i), over the edge sets in `sets` (TMATCH_PROFILE_P2P,
 * optionally | TMATCH_PROFILE_COLL or TMATCH_PROFILE_COLL_WIRE). For TMATCH_METRIC_AVG the weight
 * is (total bytes) / (total msgs) of the pair (0 when no message). Asking for a metric the profile
 * does not record fails with EINVAL, saying which ones it has. Sums are done in 64-bit integers,
 * converted to double at the end.
 */
TMATCH_API tmatch_comm_t *tmatch_profile_to_comm(const tmatch_profile_t *p,
                                                 tmatch_profile_metric_t metric, unsigned sets,
                                                 tmatch_error_t *err);

/* ------------------------------------------------------------------------ */
/* The store of learned profiles (profile/store.c)                          */

/*
 * One entry per application and scale, in a directory only its user may
 * read: the profile a run recorded, found again by the next run of the same
 * executable at the same rank count (--treematch=learn, `treematch store`).
 */
#define TMATCH_STORE_ID_MAX 32
/* The size a store is kept under by default (srun, treematch store). */
#define TMATCH_STORE_DEFAULT_MAX ((uint64_t)256 << 20)
enum {
	TMATCH_STORE_KEY_BUILD_ID = 1, /* the executable's ELF build id */
	TMATCH_STORE_KEY_CONTENT = 2,  /* hashes of its content and its size */
};
typedef struct tmatch_profile_store_key {
	int kind; /* TMATCH_STORE_KEY_* */
	int ranks;
	int id_len;
	unsigned char id[TMATCH_STORE_ID_MAX];
	char name[64]; /* a name the user gives ("" = none) */
	/* a content key's id in the store's format 1 (two FNV-1a hashes and
	   the size), to find the entries written then; 0: the same as id */
	int v1_id_len;
	unsigned char v1_id[24];
} tmatch_profile_store_key_t;

typedef struct tmatch_profile_store_entry {
	tmatch_profile_store_key_t key;
	char stem[17];      /* the entry's file names: STEM.compiled, STEM.meta */
	char exe[256];      /* the executable's path when it was recorded */
	uint64_t size;      /* of STEM.compiled */
	uint64_t checksum;  /* of STEM.compiled */
	uint64_t meta_sum;  /* of STEM.meta: this version of the entry (each put makes a new one) */
	int64_t created_ns; /* CLOCK_REALTIME */
	int64_t used_ns;    /* last found by a run */
	int version;        /* of its .meta: 1 keyed by FNV-1a, 2 by SHA-256, 3 the same with
	                       XXH3 checksums (1 and 2: FNV-1a) */
} tmatch_profile_store_entry_t;

/*
 * key: the key of `exe` (a regular file, read as the caller) at `ranks`
 * ranks, with an optional `name`: its ELF build id (libelf), or else the
 * SHA-256 of its whole content (up to 8 GiB). stem: the 16 hex digits that
 * name the key's files, the first 8 bytes of a SHA-256 of the key. Entries
 * written under the store's format 1 (FNV-1a stems and content ids) are
 * found too, and moved to the new stem by a get that may write.
 * key_format: "build-id 3f..., 64 ranks, name lmp".
 */
TMATCH_API int tmatch_profile_store_key(const char *exe, int ranks, const char *name,
                                        tmatch_profile_store_key_t *key, tmatch_error_t *err);
TMATCH_API void tmatch_profile_store_stem(const tmatch_profile_store_key_t *key, char *buf,
                                          size_t len);
TMATCH_API void tmatch_profile_store_key_format(const tmatch_profile_store_key_t *key, char *buf,
                                                size_t len);

/*
 * A store, opened once: open finds its directory (site/<uid> when the admin
 * gave a site directory, else XDG_CACHE_HOME/treematch/store, else
 * HOME/.cache/treematch/store; xdg, home: NULL = the caller's environment,
 * and for home the passwd entry's when HOME is not absolute; a home given
 * is used as it is), open_path takes it by
 * name (a store another process chose). The path is walked from "/" through
 * descriptors: every directory on the way must be root's or the caller's
 * and not writable by others unless sticky, a link on the way root's or the
 * caller's; the store itself must be a directory (not a link) of the
 * caller's, closed to others (EPERM says how to fix). With
 * TMATCH_STORE_CREATE, missing directories are made 0700 (not a site
 * directory itself). A site store: the site directory must be root's or
 * the caller's, closed to others unless sticky; the caller's directory in it
 * must be theirs; when it is missing and cannot be made (the site directory
 * is root's), ENOENT with its path in err->file (root makes it:
 * make_user_dir). Every later operation goes through the directory's
 * descriptor. path: the store's name, links resolved. make_user_dir (root):
 * site/<uid>, mode 0700, owned by uid and gid, made in a site directory of
 * root's; 0 when it is there and uid's; EPERM when it is another user's.
 */
#define TMATCH_STORE_READONLY 0x1u /* get: no lock file made, no last use, no removal */
#define TMATCH_STORE_CREATE   0x2u /* open: make what is missing */
typedef struct tmatch_profile_store tmatch_profile_store_t;
TMATCH_API tmatch_profile_store_t *tmatch_profile_store_open(const char *site, const char *xdg,
                                                             const char *home, unsigned flags,
                                                             tmatch_error_t *err);
TMATCH_API tmatch_profile_store_t *tmatch_profile_store_open_path(const char *dir, unsigned flags,
                                                                  tmatch_error_t *err);
TMATCH_API const char *tmatch_profile_store_path(const tmatch_profile_store_t *s);
TMATCH_API void tmatch_profile_store_close(tmatch_profile_store_t *s);
TMATCH_API int tmatch_profile_store_make_user_dir(const char *site, uid_t uid, gid_t gid,
                                                  tmatch_error_t *err);

/*
 * get: 1 and the path of the key's profile (its compiled form; its entry in
 * *entry when not NULL) when the store holds it and it checks (header, key,
 * size, checksum); its last use becomes now. 0 when there is none. -1/EPROTO
 * when the entry was damaged: it is removed, err says so in one line
 * ("discarded the stored profile ...: ...; it will be recorded again"); with
 * TMATCH_STORE_READONLY it is only reported. Other errors -1 with errno.
 * find (read only): the entry named stem, the version of it whose meta_sum
 * is `meta_sum` (an entry another process chose): 1 and its path; -1 with
 * ENOENT (gone), ESTALE (replaced since) or EPROTO (damaged).
 * put: load and check the profile read from profile_fd (any format; `name`
 * in messages), which must have key->ranks ranks, and store it compiled
 * under key (replacing an older one): both files are written in full first,
 * then committed, the .meta last, so that no half entry is ever seen or
 * left; then, when cap > 0, evict the least recently used other entries
 * until the store holds at most cap bytes.
 * recording_name: ".rec-JOB.STEP.yml", where a learning step records.
 * take_recording: put the step's recording under key, then remove it and
 * the recorder's temporaries of it, stored or not: 1 stored, 0 nothing
 * recorded, -1 not stored (why in err).
 * list: every entry, least recently used first (free *out); damaged ones
 * counted in *damaged. forget: remove the entries whose stem starts with
 * prefix, or whose name is prefix. gc: evict until at most cap bytes, and
 * remove damaged entries and what interrupted writes left (a put's
 * temporaries older than an hour, a profile without its .meta, recordings
 * older than a day); nothing but the store's own names is ever removed.
 */
TMATCH_API int tmatch_profile_store_get(const tmatch_profile_store_t *s,
                                        const tmatch_profile_store_key_t *key, unsigned flags,
                                        char *path, size_t len, tmatch_profile_store_entry_t *entry,
                                        tmatch_error_t *err);
TMATCH_API int tmatch_profile_store_find(const tmatch_profile_store_t *s, const char *stem,
                                         uint64_t meta_sum, char *path, size_t len,
                                         tmatch_error_t *err);
TMATCH_API int tmatch_profile_store_put(const tmatch_profile_store_t *s,
                                        const tmatch_profile_store_key_t *key, int profile_fd,
                                        const char *name, const char *exe, uint64_t cap,
                                        tmatch_error_t *err);
TMATCH_API int tmatch_profile_store_recording_name(uint64_t job_id, uint32_t step_id, char *buf,
                                                   size_t len);
TMATCH_API int tmatch_profile_store_take_recording(const tmatch_profile_store_t *s,
                                                   const tmatch_profile_store_key_t *key,
                                                   uint64_t job_id, uint32_t step_id,
                                                   const char *exe, uint64_t cap,
                                                   tmatch_error_t *err);
TMATCH_API int tmatch_profile_store_list(const tmatch_profile_store_t *s,
                                         tmatch_profile_store_entry_t **out, int *n, int *damaged,
                                         tmatch_error_t *err);
TMATCH_API int tmatch_profile_store_forget(const tmatch_profile_store_t *s, const char *prefix,
                                           int *removed, tmatch_error_t *err);
TMATCH_API int tmatch_profile_store_gc(const tmatch_profile_store_t *s, uint64_t cap, int *removed,
                                       tmatch_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* TMATCH_PROFILE_PROFILE_H */
