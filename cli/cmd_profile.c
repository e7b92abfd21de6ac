/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_profile.c - `treematch profile convert|check|stats`.
 *
 * convert reads what tools already produce (Matrix Market, TreeMatch dense
 * .mat, plain edge lists, Open MPI pml monitoring .prof files, or a profile)
 * through the library's importer (tmatch_profile_import) and writes a
 * comm-profile v1 file through its writer. check validates and summarises;
 * stats adds distributions.
 */
#include "cli/cli.h"
#include "cli/json.h"
#include "placement/matrix.h"
#include "profile/profile.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* A whole number of ranks or pairs for an option: 0 .. max. */
static int parse_count(const char *s, int max, int *out)
{
	uint64_t v;

	if (tmatch_cli_number(s, (uint64_t)max, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

static const char convert_usage[] =
    "usage: treematch profile convert [options] INPUT... \n"
    "      --from FORMAT      mtx, mat, edges, ompi or yaml (default: by extension;\n"
    "                         .mtx .mat .prof .yml/.yaml .compiled, anything else\n"
    "                         is an edge list)\n"
    "  -o, --output FILE      write here (default: standard output; - too)\n"
    "  -n, --ntasks N         number of ranks (edge lists and .prof: default max index + 1)\n"
    "  -u, --undirected       edge list: each pair once (default: src -> dst)\n"
    "      --coll MODE        ompi: add collective traffic, MODE wire (I lines) or\n"
    "                         logical (C lines); never both\n"
    "      --matrix           write the dense matrix form (<= 1024 ranks, one metric)\n"
    "  -C, --compiled         write the compiled (binary) form: loads in time\n"
    "                         proportional to its size, a node reads only its ranks'\n"
    "                         rows (the same as `treematch profile compile`)\n"
    "      --application NAME record the application name in the provenance\n"
    "  -h, --help\n";

/* The compiled form to `output` (a new file, renamed into place once whole)
   or to standard output when it is not a terminal. */
static int write_compiled(const tmatch_profile_t *p, const char *output, tmatch_error_t *err)
{
	char tmp[4096];
	FILE *f;
	int rc;

	if (!output || !strcmp(output, "-")) {
		if (isatty(STDOUT_FILENO))
			return tmatch_error_set(
			    err, EINVAL, NULL, 0, 0,
			    "--compiled writes binary: give -o FILE or redirect "
			    "standard output");
		return tmatch_profile_compile(p, stdout, err);
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", output, (long)getpid()) >= sizeof(tmp))
		return tmatch_error_set(err, ENAMETOOLONG, output, 0, 0, "file name too long");
	f = fopen(tmp, "wbx");
	if (!f)
		return tmatch_error_set(err, errno, tmp, 0, 0, "cannot create: %s",
		                        strerror(errno));
	rc = tmatch_profile_compile(p, f, err);
	if (fsync(fileno(f)) && !rc)
		rc = tmatch_error_set(err, errno, tmp, 0, 0, "cannot write: %s", strerror(errno));
	if (fclose(f) && !rc)
		rc = tmatch_error_set(err, errno, tmp, 0, 0, "cannot write: %s", strerror(errno));
	if (!rc && rename(tmp, output))
		rc = tmatch_error_set(err, errno, output, 0, 0, "cannot rename %s into place: %s",
		                      tmp, strerror(errno));
	if (rc)
		unlink(tmp);
	return rc;
}

static const char compile_usage[] =
    "usage: treematch profile compile [options] INPUT...\n"
    "  the profile in its compiled (binary) form; options as for convert:\n"
    "      --from FORMAT      mtx, mat, edges, ompi or yaml (default: by extension)\n"
    "  -o, --output FILE      write here (default: standard output, not a terminal)\n"
    "  -n, --ntasks N         number of ranks (edge lists and .prof)\n"
    "  -u, --undirected       edge list: each pair once\n"
    "      --coll MODE        ompi: add collective traffic (wire or logical)\n"
    "      --application NAME record the application name in the provenance\n"
    "  -h, --help\n";

static int cmd_convert(int argc, char **argv, int compile)
{
	const char *usage = compile ? compile_usage : convert_usage;
	enum { O_FROM = 256, O_COLL, O_MATRIX, O_APPLICATION, O_RANKS = TMATCH_CLI_OLD_NAME };
	static const struct option lo[] = {
	    {"from", required_argument, NULL, O_FROM},
	    {"output", required_argument, NULL, 'o'},
	    {"ntasks", required_argument, NULL, 'n'},
	    {"undirected", no_argument, NULL, 'u'},
	    {"coll", required_argument, NULL, O_COLL},
	    {"matrix", no_argument, NULL, O_MATRIX},
	    {"compiled", no_argument, NULL, 'C'},
	    {"application", required_argument, NULL, O_APPLICATION},
	    {"ranks", required_argument, NULL, O_RANKS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *from = NULL, *output = NULL, *app = NULL;
	int matrix = 0, compiled = compile, c, rc = 1;
	tmatch_profile_import_opts_t o;
	tmatch_profile_t *p = NULL;
	tmatch_error_t err;

	memset(&o, 0, sizeof(o));
	optind = 1;
	opterr = 0;
	while ((c = tmatch_cli_getopt(argc, argv, "o:n:uCh", lo)) != -1) {
		switch (c) {
		case O_FROM:
			from = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case O_RANKS:
			tmatch_cli_renamed(compile ? "profile compile" : "profile convert",
			                   "--ranks", "--ntasks (-n)");
			/* fall through */
		case 'n':
			if (parse_count(optarg, TMATCH_PROFILE_DEFAULT_MAX_RANKS, &o.ranks) ||
			    o.ranks < 1) {
				tmatch_cli_error("--ntasks must be from 1 to %d",
				                 TMATCH_PROFILE_DEFAULT_MAX_RANKS);
				return 2;
			}
			break;
		case 'u':
			o.undirected = 1;
			break;
		case O_COLL:
			if (!strcmp(optarg, "wire"))
				o.coll = 'w';
			else if (!strcmp(optarg, "logical"))
				o.coll = 'l';
			else {
				tmatch_cli_error("--coll must be wire or logical");
				return 2;
			}
			break;
		case O_MATRIX:
			if (compile) {
				tmatch_cli_error("compile: --matrix has no compiled form");
				return 2;
			}
			matrix = 1;
			break;
		case 'C':
			compiled = 1;
			break;
		case O_APPLICATION:
			app = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return tmatch_cli_bad_option(
			    compile ? "profile compile" : "profile convert", argv, "o:n:uCh", lo);
		}
	}
	if (optind >= argc) {
		tmatch_cli_error("profile %s: give the INPUT file(s)",
		                 compile ? "compile" : "convert");
		tmatch_cli_usage_hint(compile ? "profile compile" : "profile convert");
		return 2;
	}
	o.format = tmatch_profile_format_of(argv[optind]);
	if (from && tmatch_profile_format_parse(from, &o.format, NULL)) {
		tmatch_cli_error("unknown --from '%s': use mtx, mat, edges, ompi or yaml", from);
		return 2;
	}
	if (argc - optind > 1 && o.format != TMATCH_PROFILE_FROM_OMPI &&
	    o.format != TMATCH_PROFILE_FROM_EDGES) {
		tmatch_cli_error("several inputs are added up only for edge lists and Open MPI "
		                 ".prof files");
		return 2;
	}
	if (o.coll && o.format != TMATCH_PROFILE_FROM_OMPI) {
		tmatch_cli_error("--coll applies to Open MPI .prof input only");
		return 2;
	}
	tmatch_error_clear(&err);
	/* '-' and pipes: an edge list is read as it comes; another format is
	   copied once into a regular file first */
	for (int i = optind; i < argc && o.format != TMATCH_PROFILE_FROM_EDGES; i++)
		if (!(argv[i] = (char *)tmatch_cli_input(argv[i], "INPUT")))
			return 1;
	p = tmatch_profile_import((const char *const *)argv + optind, argc - optind, &o,
	                          tmatch_cli_log, NULL, &err);
	if (!p)
		return tmatch_cli_report(&err);
	if (o.format != TMATCH_PROFILE_FROM_YAML) {
		tmatch_profile_set_info(p, "tool", "treematch profile convert", NULL);
		tmatch_profile_set_info(p, "tool_version", TMATCH_VERSION, NULL);
	}
	if (app && tmatch_profile_set_info(p, "application", app, &err)) {
		tmatch_cli_report(&err);
		goto out;
	}
	if (compiled) {
		if (write_compiled(p, output, &err)) {
			tmatch_cli_report(&err);
			goto out;
		}
	} else if (output && strcmp(output, "-") != 0) {
		if (tmatch_profile_save(p, output, matrix ? TMATCH_PROFILE_WRITE_MATRIX : 0,
		                        &err)) {
			tmatch_cli_report(&err);
			goto out;
		}
	} else if (tmatch_profile_write(p, stdout, matrix ? TMATCH_PROFILE_WRITE_MATRIX : 0,
	                                &err)) {
		tmatch_cli_report(&err);
		goto out;
	}
	rc = 0;
out:
	tmatch_profile_destroy(p);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* check and stats                                                           */

struct pair {
	int i, j;
	double w;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* "P (S %)" of a total: a share of point-to-point or collective traffic. */
static void put_share(uint64_t part, uint64_t total)
{
	printf("%" PRIu64 " (%.1f %%)", part, total ? 100.0 * (double)part / (double)total : 0.0);
}

/* What the profile's collectives are, and whether this matrix counts them. */
static const char *coll_says(const tmatch_profile_t *p)
{
	switch (tmatch_profile_collectives(p)) {
	case TMATCH_COLL_WIRE:
		return "wire (the messages collectives send: placed by, unless coll=off)";
	case TMATCH_COLL_LOGICAL:
		return "logical (a logical model: placed by only with coll=on)";
	default:
		return tmatch_profile_nedges(p, TMATCH_PROFILE_COLL)
		           ? "not said (version 1: placed by only with coll=on)"
		           : "none recorded (version 1)";
	}
}

/* The facts summarise prints, for --json. */
struct summary {
	int n, metric, coll, stats, nbest, dmin, dmax, isolated;
	unsigned m;
	double dsum, total;
	uint64_t tb[2], tm[2];
	const struct pair *best;
	const uint64_t *deg; /* sorted, stats only */
	size_t pairs;
};

static const char *const info_keys[] = {"application", "tool",    "tool_version",
                                        "mpi_library", "created", "source"};

/* profile check/stats --json: one document (schema in treematch(1)). */
static int summary_json(const tmatch_profile_t *p, const char *file, const struct summary *u)
{
	tmatch_cli_json_t j;
	int nodes, rpn;

	tmatch_cli_json_init(&j, stdout);
	tmatch_cli_json_object(&j, NULL);
	tmatch_cli_json_string(&j, "file", file);
	tmatch_cli_json_int(&j, "ranks", u->n);
	tmatch_cli_json_bool(&j, "directed", tmatch_profile_directed(p));
	tmatch_cli_json_array(&j, "metrics");
	if (u->m & TMATCH_PROFILE_HAS_BYTES)
		tmatch_cli_json_string(&j, NULL, "bytes");
	if (u->m & TMATCH_PROFILE_HAS_MSGS)
		tmatch_cli_json_string(&j, NULL, "msgs");
	tmatch_cli_json_end(&j);
	tmatch_cli_json_string(&j, "placement_metric",
	                       tmatch_profile_metric_name(tmatch_profile_placement_metric(p)));
	tmatch_cli_json_string(&j, "metric_used",
	                       tmatch_profile_metric_name((tmatch_profile_metric_t)u->metric));
	tmatch_cli_json_bool(&j, "collectives", u->coll);
	tmatch_cli_json_string(&j, "collectives_recorded",
	                       tmatch_profile_collectives(p) == TMATCH_COLL_UNSTATED
	                           ? NULL
	                           : tmatch_profile_coll_name(tmatch_profile_collectives(p)));
	tmatch_cli_json_object(&j, "edges");
	tmatch_cli_json_int(&j, "point_to_point",
	                    (long long)tmatch_profile_nedges(p, TMATCH_PROFILE_P2P));
	tmatch_cli_json_int(&j, "collective",
	                    (long long)tmatch_profile_nedges(p, TMATCH_PROFILE_COLL));
	tmatch_cli_json_end(&j);
	for (int k = 0; k < 2; k++) {
		const uint64_t *t = k ? u->tm : u->tb;

		if (!(u->m & (k ? TMATCH_PROFILE_HAS_MSGS : TMATCH_PROFILE_HAS_BYTES))) {
			tmatch_cli_json_null(&j, k ? "total_msgs" : "total_bytes");
			continue;
		}
		tmatch_cli_json_object(&j, k ? "total_msgs" : "total_bytes");
		tmatch_cli_json_number(&j, "point_to_point", (double)t[0]);
		tmatch_cli_json_number(&j, "collective", (double)t[1]);
		tmatch_cli_json_end(&j);
	}
	tmatch_cli_json_object(&j, "degree");
	tmatch_cli_json_int(&j, "min", u->dmin);
	tmatch_cli_json_number(&j, "mean", u->n ? u->dsum / u->n : 0.0);
	tmatch_cli_json_int(&j, "max", u->dmax);
	tmatch_cli_json_int(&j, "isolated", u->isolated);
	if (u->stats && u->deg && u->n > 0) {
		tmatch_cli_json_array(&j, "quartiles");
		tmatch_cli_json_int(&j, NULL, (long long)u->deg[u->n / 4]);
		tmatch_cli_json_int(&j, NULL, (long long)u->deg[u->n / 2]);
		tmatch_cli_json_int(&j, NULL, (long long)u->deg[(3 * (size_t)u->n) / 4]);
		tmatch_cli_json_end(&j);
	}
	tmatch_cli_json_end(&j);
	tmatch_cli_json_array(&j, "top_pairs");
	for (int k = 0; k < u->nbest; k++) {
		tmatch_cli_json_object(&j, NULL);
		tmatch_cli_json_int(&j, "i", u->best[k].i);
		tmatch_cli_json_int(&j, "j", u->best[k].j);
		tmatch_cli_json_number(&j, "weight", u->best[k].w);
		tmatch_cli_json_number(&j, "share", u->total > 0 ? u->best[k].w / u->total : 0.0);
		tmatch_cli_json_end(&j);
	}
	tmatch_cli_json_end(&j);
	if (u->stats) {
		if (u->m == 3u && u->tm[0])
			tmatch_cli_json_number(&j, "mean_message",
			                       (double)u->tb[0] / (double)u->tm[0]);
		else
			tmatch_cli_json_null(&j, "mean_message");
		if ((u->m & TMATCH_PROFILE_HAS_BYTES) && u->tb[0] + u->tb[1])
			tmatch_cli_json_number(&j, "collective_share",
			                       (double)u->tb[1] / (double)(u->tb[0] + u->tb[1]));
		else
			tmatch_cli_json_null(&j, "collective_share");
		tmatch_cli_json_int(&j, "pairs", (long long)u->pairs);
		tmatch_cli_json_number(&j, "pair_density",
		                       u->n > 1 ? (double)u->pairs / ((double)u->n * (u->n - 1) / 2)
		                                : 0.0);
		tmatch_cli_json_object(&j, "provenance");
		for (size_t i = 0; i < sizeof(info_keys) / sizeof(info_keys[0]); i++)
			if (tmatch_profile_info(p, info_keys[i]))
				tmatch_cli_json_string(&j, info_keys[i],
				                       tmatch_profile_info(p, info_keys[i]));
		tmatch_cli_json_end(&j);
		tmatch_profile_layout(p, &nodes, &rpn);
		if (nodes) {
			tmatch_cli_json_object(&j, "recorded_on");
			tmatch_cli_json_int(&j, "nodes", nodes);
			tmatch_cli_json_int(&j, "ranks_per_node", rpn);
			tmatch_cli_json_end(&j);
		} else {
			tmatch_cli_json_null(&j, "recorded_on");
		}
	}
	tmatch_cli_json_end(&j);
	return tmatch_cli_output_close(stdout, "-") < 0;
}

static int summarise(const tmatch_profile_t *p, const char *file, int metric, int coll, int top,
                     int stats, int json)
{
	tmatch_error_t err;
	/* the matrix the plugin places by, with its coll= and metric= */
	tmatch_comm_t *comm = tmatch_place_comm(p, metric, coll, &err);
	int with_coll =
	    (tmatch_profile_sets(p, tmatch_place_comm_sets(coll)) & TMATCH_PROFILE_COLL) != 0;
	int n = tmatch_profile_ranks(p), nodes, rpn;
	unsigned m = tmatch_profile_metrics(p);
	uint64_t tb[2] = {0, 0}, tm[2] = {0, 0};
	struct pair *best = NULL;
	int nbest = 0, rc = 1;

	if (!comm)
		return tmatch_cli_report(&err);
	for (int s = 0; s < 2; s++) {
		unsigned set = s ? TMATCH_PROFILE_COLL : TMATCH_PROFILE_P2P;
		for (size_t k = 0; k < tmatch_profile_nedges(p, set); k++) {
			uint64_t b, g;
			tmatch_profile_edge(p, set, k, NULL, NULL, &b, &g);
			tb[s] += b; /* each < 2^63 and sums checked at load per pair; the
			               total may wrap only beyond 2^64 bytes */
			tm[s] += g;
		}
	}
	if (json)
		goto numbers;
	printf("ranks:            %d\n", n);
	printf("directed:         %s\n", tmatch_profile_directed(p) ? "yes" : "no");
	printf("metrics:          %s%s%s\n", (m & TMATCH_PROFILE_HAS_BYTES) ? "bytes" : "",
	       m == 3u ? ", " : "", (m & TMATCH_PROFILE_HAS_MSGS) ? "msgs" : "");
	printf("placement metric: %s (used here: %s, %s)\n",
	       tmatch_profile_metric_name(tmatch_profile_placement_metric(p)),
	       tmatch_profile_metric_name((tmatch_profile_metric_t)metric),
	       with_coll ? "point-to-point and collectives" : "point-to-point only");
	printf("collectives:      %s\n", coll_says(p));
	printf("edges:            %zu point-to-point, %zu collective\n",
	       tmatch_profile_nedges(p, TMATCH_PROFILE_P2P),
	       tmatch_profile_nedges(p, TMATCH_PROFILE_COLL));
	printf("nonzeros:         %zu (symmetric, both triangles)\n", tmatch_comm_nnz(comm));
	for (int k = 0; k < 2; k++) {
		const uint64_t *t = k ? tm : tb;

		if (!(m & (k ? TMATCH_PROFILE_HAS_MSGS : TMATCH_PROFILE_HAS_BYTES)))
			continue;
		fputs(k ? "total msgs:       " : "total bytes:      ", stdout);
		put_share(t[0], t[0] + t[1]);
		printf(" point-to-point, ");
		put_share(t[1], t[0] + t[1]);
		printf(" collective\n");
	}
numbers:;
	int dmin = n, dmax = 0, isolated = 0;
	double dsum = 0;
	uint64_t *deg = stats ? malloc((size_t)n * sizeof(*deg)) : NULL;
	best = calloc((size_t)(top > 0 ? top : 1), sizeof(*best));
	if (!best || (stats && !deg)) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const int *cols;
		const double *w;
		int d = tmatch_comm_row(comm, i, &cols, &w);
		if (d < dmin)
			dmin = d;
		if (d > dmax)
			dmax = d;
		dsum += d;
		isolated += d == 0;
		if (deg)
			deg[i] = (uint64_t)d;
		for (int k = 0; k < d; k++) {
			if (cols[k] <= i || top <= 0)
				continue;
			int pos = nbest;
			while (pos > 0 && best[pos - 1].w < w[k])
				pos--;
			if (pos >= top)
				continue;
			if (nbest < top)
				nbest++;
			memmove(best + pos + 1, best + pos,
			        (size_t)(nbest - 1 - pos) * sizeof(*best));
			best[pos] = (struct pair){i, cols[k], w[k]};
		}
	}
	double total = tmatch_comm_total(comm);
	if (json) {
		struct summary u = {n,
		                    metric,
		                    with_coll,
		                    stats,
		                    nbest,
		                    dmin,
		                    dmax,
		                    isolated,
		                    m,
		                    dsum,
		                    total,
		                    {tb[0], tb[1]},
		                    {tm[0], tm[1]},
		                    best,
		                    deg,
		                    tmatch_comm_nnz(comm) / 2};

		if (stats)
			qsort(deg, (size_t)n, sizeof(*deg), cmp_u64);
		rc = summary_json(p, file, &u);
		goto out;
	}
	printf("degree:           min %d, mean %.2f, max %d; %d isolated rank%s\n", dmin, dsum / n,
	       dmax, isolated, isolated == 1 ? "" : "s");
	printf("top pairs (%s):\n", tmatch_profile_metric_name((tmatch_profile_metric_t)metric));
	for (int k = 0; k < nbest; k++)
		printf("  %6d %6d  %.0f  (%.1f%%)\n", best[k].i, best[k].j, best[k].w,
		       total > 0 ? 100.0 * best[k].w / total : 0.0);
	if (stats) {
		qsort(deg, (size_t)n, sizeof(*deg), cmp_u64);
		printf("degree quartiles: %" PRIu64 " / %" PRIu64 " / %" PRIu64 "\n", deg[n / 4],
		       deg[n / 2], deg[(3 * (size_t)n) / 4]);
		if (m == 3u && tm[0])
			printf("mean message:     %.1f bytes (point-to-point)\n",
			       (double)tb[0] / (double)tm[0]);
		size_t pairs = tmatch_comm_nnz(comm) / 2;
		printf("pair density:     %.6f (%zu of %.0f pairs)\n",
		       n > 1 ? (double)pairs / ((double)n * (n - 1) / 2) : 0.0, pairs,
		       (double)n * (n - 1) / 2);
		for (size_t i = 0; i < sizeof(info_keys) / sizeof(info_keys[0]); i++)
			if (tmatch_profile_info(p, info_keys[i]))
				printf("%-17s %s\n", info_keys[i],
				       tmatch_profile_info(p, info_keys[i]));
		tmatch_profile_layout(p, &nodes, &rpn);
		if (nodes)
			printf("recorded on:      %d nodes, %d ranks per node\n", nodes, rpn);
	}
	rc = 0;
out:
	free(deg);
	free(best);
	tmatch_comm_destroy(comm);
	return rc;
}

static const char check_usage[] =
    "usage: treematch profile %s [options] FILE\n"
    "  -n, --ntasks N      fail unless the profile has N ranks\n"
    "      --metric M      bytes, msgs or avg (default: the profile's placement_metric)\n"
    "      --collectives[=on|off]\n"
    "                      count collective traffic (default: as the plugin, the\n"
    "                      collectives the profile says are placed by)\n"
    "      --top K         show the K heaviest pairs (default 5)\n"
    "      --max-ranks N   rank limit (default 1048576)\n"
    "  -q, --quiet         only validate: no summary\n"
    "      --json          the summary as one JSON document (treematch(1))\n"
    "  -h, --help\n";

static int cmd_check(int argc, char **argv, int stats)
{
	enum {
		O_METRIC = 256,
		O_COLLECTIVES,
		O_TOP,
		O_MAX_RANKS,
		O_JSON,
		O_RANKS = TMATCH_CLI_OLD_NAME,
		O_COLL,
	};
	static const struct option lo[] = {
	    {"ntasks", required_argument, NULL, 'n'},
	    {"metric", required_argument, NULL, O_METRIC},
	    {"collectives", optional_argument, NULL, O_COLLECTIVES},
	    {"coll", optional_argument, NULL, O_COLL},
	    {"top", required_argument, NULL, O_TOP},
	    {"max-ranks", required_argument, NULL, O_MAX_RANKS},
	    {"json", no_argument, NULL, O_JSON},
	    {"ranks", required_argument, NULL, O_RANKS},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *name = stats ? "stats" : "check";
	int expect = -1, metric = -1, coll = -1, top = 5, quiet = 0, json = 0, c, rc = 1;
	const char *file;
	tmatch_profile_limits_t lim;
	tmatch_error_t err;
	tmatch_profile_t *p;

	tmatch_profile_limits_init(&lim);
	lim.allow_special = 1; /* a command-line tool may read /dev/stdin */
	optind = 1;
	opterr = 0;
	while ((c = tmatch_cli_getopt(argc, argv, "n:qh", lo)) != -1) {
		switch (c) {
		case O_RANKS:
			tmatch_cli_renamed(stats ? "profile stats" : "profile check", "--ranks",
			                   "--ntasks (-n)");
			/* fall through */
		case 'n':
			if (parse_count(optarg, TMATCH_PROFILE_DEFAULT_MAX_RANKS, &expect)) {
				tmatch_cli_error("--ntasks needs a number of ranks");
				return 2;
			}
			break;
		case O_METRIC: {
			tmatch_profile_metric_t mm;
			if (tmatch_profile_metric_parse(optarg, &mm, &err)) {
				tmatch_cli_error("--metric: %s", err.msg);
				return 2;
			}
			metric = (int)mm;
			break;
		}
		case O_COLL:
			tmatch_cli_renamed(stats ? "profile stats" : "profile check", "--coll",
			                   "--collectives, as record's");
			/* fall through */
		case O_COLLECTIVES:
			if (optarg && strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
				tmatch_cli_error("--collectives takes on or off");
				return 2;
			}
			coll = !optarg || !strcmp(optarg, "on");
			break;
		case O_TOP:
			if (parse_count(optarg, TMATCH_PROFILE_DEFAULT_MAX_RANKS - 1, &top)) {
				tmatch_cli_error("--top needs a number");
				return 2;
			}
			break;
		case O_MAX_RANKS:
			if (parse_count(optarg, TMATCH_PROFILE_DEFAULT_MAX_RANKS, &lim.max_ranks) ||
			    lim.max_ranks < 1) {
				tmatch_cli_error("--max-ranks needs a positive number");
				return 2;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case O_JSON:
			json = 1;
			break;
		case 'h':
			printf(check_usage, name);
			return 0;
		default:
			return tmatch_cli_bad_option(stats ? "profile stats" : "profile check",
			                             argv, "n:qh", lo);
		}
	}
	if (optind != argc - 1) {
		tmatch_cli_error("profile %s: give one profile FILE", name);
		tmatch_cli_usage_hint(stats ? "profile stats" : "profile check");
		return 2;
	}
	if (!(file = tmatch_cli_input(argv[optind], "FILE")))
		return 1;
	p = tmatch_profile_load(file, &lim, tmatch_cli_log, NULL, &err);
	if (!p) {
		/* this command's own limit: say how to raise it */
		if (errno == E2BIG)
			snprintf(err.msg + strlen(err.msg), sizeof(err.msg) - strlen(err.msg),
			         " (--max-ranks N raises it)");
		return tmatch_cli_report(&err);
	}
	if (expect >= 0 && tmatch_profile_check_ranks(p, expect, &err)) {
		snprintf(err.file, sizeof(err.file), "%s", argv[optind]);
		tmatch_cli_report(&err);
		goto out;
	}
	if (metric < 0)
		metric = (int)tmatch_profile_placement_metric(p);
	if ((!quiet || json) && summarise(p, argv[optind], metric, coll, top, stats, json))
		goto out;
	rc = 0;
out:
	tmatch_profile_destroy(p);
	return rc;
}

int tmatch_cli_profile(int argc, char **argv)
{
	static const char usage[] =
	    "usage: treematch profile <convert|compile|check|stats> [options] ...\n"
	    "  convert  turn .mtx, .mat, edge lists or Open MPI .prof files into a profile\n"
	    "  compile  the same, written in the compiled (binary) form\n"
	    "  check    validate a profile and summarise it\n"
	    "  stats    check plus distributions and provenance\n"
	    "See treematch-profile(5) for the format.\n";

	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "convert"))
		return cmd_convert(argc - 1, argv + 1, 0);
	if (!strcmp(argv[1], "compile"))
		return cmd_convert(argc - 1, argv + 1, 1);
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1, 0);
	if (!strcmp(argv[1], "stats"))
		return cmd_check(argc - 1, argv + 1, 1);
	tmatch_cli_error("unknown profile command '%s'", argv[1]);
	tmatch_cli_usage_hint("profile");
	return 2;
}
