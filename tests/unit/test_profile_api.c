/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conf_profile.c - the profile API: builder, accessors, metrics and
 * collective selection in to_comm, the writer's round trips, limits, the fd
 * and buffer entry points, and the bad-argument paths (errno checked).
 */
#include "profile/profile_private.h"
#include "profile/profile.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char small[] = "format: comm-profile\n"
                            "version: 1\n"
                            "ranks: 3\n"
                            "metrics: [bytes, msgs]\n"
                            "directed: true\n"
                            "edges:\n"
                            "  - [0, 1, 10, 2]\n"
                            "  - [1, 0, 6, 2]\n"
                            "  - [1, 2, 9, 3]\n"
                            "coll_edges:\n"
                            "  - [0, 1, 4, 0]\n"
                            "  - [2, 0, 8, 8]\n";

static tmatch_profile_t *load_str(const char *s, tmatch_error_t *err)
{
	return tmatch_profile_load_buffer(s, strlen(s), "test.yml", NULL, NULL, NULL, err);
}

Test(conf_profile, limits_defaults)
{
	tmatch_profile_limits_t l;

	tmatch_profile_limits_init(&l);
	cr_expect_eq(l.max_ranks, 1048576);
	cr_expect_eq(l.max_file_size, (size_t)256 << 20);
	cr_expect_eq(l.max_matrix_ranks, 1024);
	cr_expect_gt(l.max_depth, 4);
	tmatch_profile_limits_init(NULL); /* no crash */
}

Test(conf_profile, metric_names)
{
	tmatch_profile_metric_t m = TMATCH_METRIC_MSGS;
	tmatch_error_t err;

	cr_expect_eq(tmatch_profile_metric_parse("avg", &m, NULL), 0);
	cr_expect_eq(m, TMATCH_METRIC_AVG);
	cr_expect_str_eq(tmatch_profile_metric_name(TMATCH_METRIC_BYTES), "bytes");
	errno = 0;
	cr_expect_eq(tmatch_profile_metric_parse("time", &m, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(m, TMATCH_METRIC_AVG, "output changed on failure");
	cr_expect_not_null(strstr(err.msg, "bytes, msgs, avg"));
	cr_expect_eq(tmatch_profile_metric_parse(NULL, &m, NULL), -1);
}

Test(conf_profile, accessors)
{
	tmatch_error_t err;
	tmatch_profile_t *p = load_str(small, &err);
	int s, d;
	uint64_t b, m;

	cr_assert_not_null(p, "%s", err.msg);
	cr_expect_eq(tmatch_profile_ranks(p), 3);
	cr_expect_eq(tmatch_profile_metrics(p), TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS);
	cr_expect_eq(tmatch_profile_directed(p), 1);
	cr_expect_eq(tmatch_profile_placement_metric(p), TMATCH_METRIC_BYTES);
	cr_expect_eq(tmatch_profile_nedges(p, TMATCH_PROFILE_P2P), 3);
	cr_expect_eq(tmatch_profile_nedges(p, TMATCH_PROFILE_COLL), 2);
	cr_expect_eq(tmatch_profile_nedges(p, 7), 0);
	cr_assert_eq(tmatch_profile_edge(p, TMATCH_PROFILE_P2P, 2, &s, &d, &b, &m), 0);
	cr_expect(s == 1 && d == 2 && b == 9 && m == 3);
	cr_assert_eq(tmatch_profile_edge(p, TMATCH_PROFILE_COLL, 1, &s, &d, &b, &m), 0);
	cr_expect(s == 2 && d == 0 && b == 8 && m == 8);
	errno = 0;
	cr_expect_eq(tmatch_profile_edge(p, TMATCH_PROFILE_P2P, 3, &s, NULL, NULL, NULL), -1);
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_eq(tmatch_profile_ranks(NULL), -1);
	cr_expect_eq(errno, EINVAL);
	tmatch_profile_destroy(p);
	tmatch_profile_destroy(NULL);
}

Test(conf_profile, to_comm_metrics_and_collectives)
{
	tmatch_error_t err;
	tmatch_profile_t *p = load_str(small, &err);
	tmatch_comm_t *c;

	cr_assert_not_null(p);
	/* bytes, p2p: (0,1) = 10 + 6, (1,2) = 9 */
	c = tmatch_profile_to_comm(p, TMATCH_METRIC_BYTES, TMATCH_PROFILE_P2P, &err);
	cr_assert_not_null(c, "%s", err.msg);
	cr_expect_float_eq(tmatch_comm_get(c, 0, 1), 16.0, 1e-12);
	cr_expect_float_eq(tmatch_comm_get(c, 2, 1), 9.0, 1e-12);
	cr_expect_float_eq(tmatch_comm_get(c, 0, 2), 0.0, 1e-12);
	tmatch_comm_destroy(c);
	/* with collectives: (0,1) = 20, (0,2) = 8 */
	c = tmatch_profile_to_comm(p, TMATCH_METRIC_BYTES, TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL,
	                           &err);
	cr_assert_not_null(c);
	cr_expect_float_eq(tmatch_comm_get(c, 1, 0), 20.0, 1e-12);
	cr_expect_float_eq(tmatch_comm_get(c, 0, 2), 8.0, 1e-12);
	tmatch_comm_destroy(c);
	/* msgs: (0,1) = 4 */
	c = tmatch_profile_to_comm(p, TMATCH_METRIC_MSGS, TMATCH_PROFILE_P2P, &err);
	cr_assert_not_null(c);
	cr_expect_float_eq(tmatch_comm_get(c, 0, 1), 4.0, 1e-12);
	tmatch_comm_destroy(c);
	/* avg: (0,1) = 16 / 4, (1,2) = 9 / 3; with coll (0,1) = 20 / 4 */
	c = tmatch_profile_to_comm(p, TMATCH_METRIC_AVG, TMATCH_PROFILE_P2P, &err);
	cr_assert_not_null(c);
	cr_expect_float_eq(tmatch_comm_get(c, 0, 1), 4.0, 1e-12);
	cr_expect_float_eq(tmatch_comm_get(c, 1, 2), 3.0, 1e-12);
	tmatch_comm_destroy(c);
	c = tmatch_profile_to_comm(p, TMATCH_METRIC_AVG, TMATCH_PROFILE_P2P | TMATCH_PROFILE_COLL,
	                           &err);
	cr_assert_not_null(c);
	cr_expect_float_eq(tmatch_comm_get(c, 0, 1), 5.0, 1e-12);
	cr_expect_float_eq(tmatch_comm_get(c, 0, 2), 1.0, 1e-12);
	tmatch_comm_destroy(c);
	/* bad arguments */
	errno = 0;
	cr_expect_null(tmatch_profile_to_comm(p, TMATCH_METRIC_BYTES, 0, &err));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(tmatch_profile_to_comm(p, (tmatch_profile_metric_t)7, 1, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(tmatch_profile_to_comm(NULL, TMATCH_METRIC_BYTES, 1, &err));
	tmatch_profile_destroy(p);
}

Test(conf_profile, to_comm_missing_metric_says_what_exists)
{
	tmatch_error_t err;
	const char *s = "format: comm-profile\nversion: 1\nranks: 2\nmetrics: [bytes]\n"
	                "edges: [[0, 1, 5]]\n";
	tmatch_profile_t *p = load_str(s, &err);

	cr_assert_not_null(p);
	errno = 0;
	cr_expect_null(tmatch_profile_to_comm(p, TMATCH_METRIC_AVG, TMATCH_PROFILE_P2P, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect_not_null(strstr(err.msg, "records only bytes"), "%s", err.msg);
	tmatch_profile_destroy(p);
}

Test(conf_profile, large_weights_accumulate_exactly)
{
	tmatch_error_t err;
	/* 2^53 + 1 does not survive a double sum of two halves; 64-bit sums do. */
	const char *s = "format: comm-profile\nversion: 1\nranks: 2\nmetrics: [bytes]\n"
	                "edges: [[0, 1, 4503599627370497], [1, 0, 4503599627370496]]\n";
	tmatch_profile_t *p = load_str(s, &err);
	cr_assert_not_null(p);
	tmatch_comm_t *c = tmatch_profile_to_comm(p, TMATCH_METRIC_BYTES, TMATCH_PROFILE_P2P, &err);
	cr_assert_not_null(c);
	cr_expect_eq(tmatch_comm_get(c, 0, 1), 9007199254740993.0);
	tmatch_comm_destroy(c);
	tmatch_profile_destroy(p);
}

Test(conf_profile, check_ranks_gives_both_numbers)
{
	tmatch_error_t err;
	tmatch_profile_t *p = load_str(small, &err);

	cr_assert_not_null(p);
	cr_expect_eq(tmatch_profile_check_ranks(p, 3, &err), 0);
	errno = 0;
	cr_expect_eq(tmatch_profile_check_ranks(p, 128, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_not_null(strstr(err.msg, "has 3 ranks"), "%s", err.msg);
	cr_expect_not_null(strstr(err.msg, "has 128 tasks"), "%s", err.msg);
	cr_expect_eq(tmatch_profile_check_ranks(NULL, 3, &err), -1);
	tmatch_profile_destroy(p);
}

struct count {
	int n;
	char last[512];
};

static void counter(void *arg, int level, const char *msg)
{
	struct count *c = arg;
	cr_expect_eq(level, TMATCH_LOG_WARNING);
	c->n++;
	snprintf(c->last, sizeof(c->last), "%s", msg);
}

Test(conf_profile, builder_rules)
{
	tmatch_error_t err;
	struct count cnt = {0, ""};

	errno = 0;
	cr_expect_null(tmatch_profile_create(0, TMATCH_PROFILE_HAS_BYTES, 1, &err));
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(tmatch_profile_create(4, 0, 1, &err));
	cr_expect_null(tmatch_profile_create(4, 8, 1, &err));
	cr_expect_null(tmatch_profile_create(4, 1, 2, &err));

	tmatch_profile_t *p = tmatch_profile_create(4, TMATCH_PROFILE_HAS_BYTES, 0, &err);
	cr_assert_not_null(p);
	cr_expect_eq(tmatch_profile_add_edge(p, TMATCH_PROFILE_P2P, 2, 1, 7, 0, NULL, NULL, &err),
	             0);
	cr_expect_eq(
	    tmatch_profile_add_edge(p, TMATCH_PROFILE_P2P, 3, 3, 7, 0, counter, &cnt, &err), 0);
	cr_expect_eq(cnt.n, 1, "self edge must warn");
	errno = 0;
	cr_expect_eq(tmatch_profile_add_edge(p, TMATCH_PROFILE_P2P, 0, 4, 1, 0, NULL, NULL, &err),
	             -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_not_null(strstr(err.msg, "4 ranks"));
	errno = 0;
	cr_expect_eq(tmatch_profile_add_edge(p, TMATCH_PROFILE_P2P, 0, 1, (uint64_t)1 << 63, 0,
	                                     NULL, NULL, &err),
	             -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(tmatch_profile_add_edge(p, 5, 0, 1, 1, 0, NULL, NULL, &err), -1);
	/* undirected: (1, 2) is stored as given once; writing before finish fails */
	FILE *f = fopen("/dev/null", "w");
	errno = 0;
	cr_expect_eq(tmatch_profile_write(p, f, 0, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(tmatch_profile_finish(p, NULL, NULL, &err), 0);
	cr_expect_eq(tmatch_profile_write(p, f, 0, &err), 0);
	cr_expect_eq(tmatch_profile_write(p, f, 0x10, &err), -1);
	fclose(f);
	int s, d;
	cr_assert_eq(tmatch_profile_edge(p, TMATCH_PROFILE_P2P, 0, &s, &d, NULL, NULL), 0);
	cr_expect(s == 1 && d == 2, "undirected edges are stored (min, max)");
	/* the reverse pair is a duplicate in an undirected profile */
	cr_expect_eq(tmatch_profile_add_edge(p, TMATCH_PROFILE_P2P, 1, 2, 1, 0, NULL, NULL, &err),
	             0);
	errno = 0;
	cr_expect_eq(tmatch_profile_finish(p, NULL, NULL, &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_not_null(strstr(err.msg, "given twice"));
	tmatch_profile_destroy(p);
}

Test(conf_profile, provenance_round_trip)
{
	tmatch_error_t err;
	tmatch_profile_t *p = tmatch_profile_create(2, TMATCH_PROFILE_HAS_MSGS, 1, &err);

	cr_assert_not_null(p);
	cr_expect_eq(
	    tmatch_profile_set_info(p, "application", "a \"quoted\" \\ name \xc3\xa9", &err), 0);
	cr_expect_eq(tmatch_profile_set_info(p, "created", "2026-11-22T02:37:44Z", &err), 0);
	errno = 0;
	cr_expect_eq(tmatch_profile_set_info(p, "argv", "x", &err), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(tmatch_profile_set_info(p, "tool", "bad\nline", &err), -1);
	cr_expect_eq(tmatch_profile_set_info(p, "tool", "bad\xff", &err), -1);
	cr_expect_eq(tmatch_profile_set_layout(p, 2, 1, &err), 0);
	cr_expect_eq(tmatch_profile_set_layout(p, -1, 1, &err), -1);
	cr_expect_eq(tmatch_profile_add_edge(p, TMATCH_PROFILE_P2P, 1, 0, 0, 5, NULL, NULL, &err),
	             0);
	cr_assert_eq(tmatch_profile_finish(p, NULL, NULL, &err), 0);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(tmatch_profile_write(p, f, 0, &err), 0);
	fclose(f);
	tmatch_profile_t *q = tmatch_profile_load_buffer(buf, len, "rt", NULL, NULL, NULL, &err);
	cr_assert_not_null(q, "%s at line %d", err.msg, err.line);
	cr_expect_str_eq(tmatch_profile_info(q, "application"), "a \"quoted\" \\ name \xc3\xa9");
	cr_expect_str_eq(tmatch_profile_info(q, "created"), "2026-11-22T02:37:44Z");
	cr_expect_null(tmatch_profile_info(q, "tool"));
	cr_expect_null(tmatch_profile_info(q, "nonsense"));
	int nodes, rpn;
	tmatch_profile_layout(q, &nodes, &rpn);
	cr_expect(nodes == 2 && rpn == 1);
	cr_expect_eq(tmatch_profile_placement_metric(q), TMATCH_METRIC_MSGS);
	uint64_t m;
	cr_expect_eq(tmatch_profile_edge(q, TMATCH_PROFILE_P2P, 0, NULL, NULL, NULL, &m), 0);
	cr_expect_eq(m, 5);
	free(buf);
	tmatch_profile_destroy(q);
	tmatch_profile_destroy(p);
}

Test(conf_profile, matrix_form_round_trip)
{
	tmatch_error_t err;
	const char *s = "format: comm-profile\nversion: 1\nranks: 3\nmetrics: [bytes]\n"
	                "directed: true\nedges: [[0, 1, 5], [2, 1, 7], [1, 0, 1]]\n";
	tmatch_profile_t *p = load_str(s, &err);
	cr_assert_not_null(p);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(tmatch_profile_write(p, f, TMATCH_PROFILE_WRITE_MATRIX, &err), 0);
	fclose(f);
	cr_expect_not_null(strstr(buf, "- [0, 5, 0]"), "%s", buf);
	tmatch_profile_t *q = tmatch_profile_load_buffer(buf, len, "m", NULL, NULL, NULL, &err);
	cr_assert_not_null(q, "%s", err.msg);
	cr_assert_eq(tmatch_profile_nedges(q, TMATCH_PROFILE_P2P), 3);
	for (size_t k = 0; k < 3; k++) {
		int a, b, c, d;
		uint64_t x, y;
		tmatch_profile_edge(p, TMATCH_PROFILE_P2P, k, &a, &b, &x, NULL);
		tmatch_profile_edge(q, TMATCH_PROFILE_P2P, k, &c, &d, &y, NULL);
		cr_expect(a == c && b == d && x == y, "edge %zu differs", k);
	}
	free(buf);
	tmatch_profile_destroy(q);
	tmatch_profile_destroy(p);
}

Test(conf_profile, rank_and_edge_limits)
{
	tmatch_profile_limits_t lim;
	tmatch_error_t err;

	tmatch_profile_limits_init(&lim);
	lim.max_ranks = 2;
	errno = 0;
	cr_expect_null(
	    tmatch_profile_load_buffer(small, strlen(small), "x", &lim, NULL, NULL, &err));
	/* over a limit (E2BIG, as EFBIG for the size): a front end says whose */
	cr_expect_eq(errno, E2BIG);
	cr_expect_not_null(strstr(err.msg, "limit of 2 ranks"), "%s", err.msg);
	cr_expect_null(strstr(err.msg, "administrator"), "%s", err.msg);
	tmatch_profile_limits_init(&lim);
	lim.max_edges = 2;
	errno = 0;
	cr_expect_null(
	    tmatch_profile_load_buffer(small, strlen(small), "x", &lim, NULL, NULL, &err));
	cr_expect_eq(errno, EFBIG);
	cr_expect_eq(err.line, 9);
	tmatch_profile_limits_init(&lim);
	lim.max_file_size = 20;
	errno = 0;
	cr_expect_null(
	    tmatch_profile_load_buffer(small, strlen(small), "x", &lim, NULL, NULL, &err));
	cr_expect_eq(errno, EFBIG);
	tmatch_profile_limits_init(&lim);
	lim.max_depth = 0;
	errno = 0;
	cr_expect_null(
	    tmatch_profile_load_buffer(small, strlen(small), "x", &lim, NULL, NULL, &err));
	cr_expect_eq(errno, EINVAL);
}

Test(conf_profile, load_fd_regular_file_and_pipe)
{
	char path[TM_TMP_MAX];
	int fd = mkstemp(tm_tmpname(path, sizeof(path), "test_conf_profileXXXXXX"));
	tmatch_profile_limits_t lim;
	tmatch_error_t err;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, small, strlen(small)), (ssize_t)strlen(small));
	lseek(fd, 0, SEEK_SET);
	tmatch_profile_t *p = tmatch_profile_load_fd(fd, "shown-name.yml", NULL, NULL, NULL, &err);
	cr_expect_not_null(p, "%s", err.msg);
	tmatch_profile_destroy(p);
	/* fstat size check before parsing */
	lseek(fd, 0, SEEK_SET);
	tmatch_profile_limits_init(&lim);
	lim.max_file_size = 100;
	errno = 0;
	cr_expect_null(tmatch_profile_load_fd(fd, "shown-name.yml", &lim, NULL, NULL, &err));
	cr_expect_eq(errno, EFBIG);
	cr_expect_str_eq(err.file, "shown-name.yml");
	cr_expect_not_null(strstr(err.msg, "100 bytes"), "%s", err.msg);
	close(fd);
	unlink(path);

	/* a pipe: the limit is enforced while reading */
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	cr_assert_eq(write(pfd[1], small, strlen(small)), (ssize_t)strlen(small));
	close(pfd[1]);
	errno = 0;
	cr_expect_null(tmatch_profile_load_fd(pfd[0], "pipe", &lim, NULL, NULL, &err));
	cr_expect_eq(errno, EINVAL, "pipes are refused by default");
	cr_expect_not_null(strstr(err.msg, "not a regular file"), "%s", err.msg);
	lim.allow_special = 1;
	errno = 0;
	cr_expect_null(tmatch_profile_load_fd(pfd[0], "pipe", &lim, NULL, NULL, &err));
	cr_expect_eq(errno, EFBIG);
	close(pfd[0]);
	/* allowed and within the limit */
	cr_assert_eq(pipe(pfd), 0);
	cr_assert_eq(write(pfd[1], small, strlen(small)), (ssize_t)strlen(small));
	close(pfd[1]);
	lim.max_file_size = 1 << 20;
	tmatch_profile_t *pp = tmatch_profile_load_fd(pfd[0], "pipe", &lim, NULL, NULL, &err);
	cr_expect_not_null(pp, "%s", err.msg);
	tmatch_profile_destroy(pp);
	close(pfd[0]);

	/* a FIFO without writer: refused at once, never blocks */
	char fifo[TM_TMP_MAX];
	int tfd = mkstemp(tm_tmpname(fifo, sizeof(fifo), "test_conf_fifoXXXXXX"));
	cr_assert_geq(tfd, 0);
	close(tfd);
	unlink(fifo);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	errno = 0;
	cr_expect_null(tmatch_profile_load(fifo, NULL, NULL, NULL, &err));
	cr_expect_eq(errno, EINVAL);
	unlink(fifo);

	errno = 0;
	cr_expect_null(tmatch_profile_load_fd(-1, "x", NULL, NULL, NULL, &err));
	cr_expect_eq(errno, EBADF);
	int dfd = open("/tmp", O_RDONLY);
	errno = 0;
	cr_expect_null(tmatch_profile_load_fd(dfd, "/tmp", NULL, NULL, NULL, &err));
	cr_expect_eq(errno, EISDIR);
	close(dfd);
	errno = 0;
	cr_expect_null(tmatch_profile_load("/nonexistent/p.yml", NULL, NULL, NULL, &err));
	cr_expect_eq(errno, ENOENT);
	cr_expect_str_eq(err.file, "/nonexistent/p.yml");
	cr_expect_null(tmatch_profile_load(NULL, NULL, NULL, NULL, NULL));
	cr_expect_null(tmatch_profile_load_buffer(NULL, 5, "x", NULL, NULL, NULL, &err));
}

Test(conf_profile, never_echoes_file_contents)
{
	tmatch_error_t err;
	const char *s = "format: comm-profile\nversion: 1\nranks: 2\nmetrics: [bytes]\n"
	                "edges: [[0, 1, SECRETVALUE]]\n";
	cr_assert_null(load_str(s, &err));
	cr_expect_null(strstr(err.msg, "SECRET"), "%s", err.msg);
	cr_expect_eq(err.line, 5);
	cr_expect_eq(err.column, 16);
}

Test(conf_profile, sort_merge_internal)
{
	struct tmatch__edges e = {0};
	size_t ndup;
	uint32_t l1, l2;
	int a, b;
	const int src[] = {3, 0, 3, 1, 0};
	const int dst[] = {1, 2, 1, 0, 2};

	for (int i = 0; i < 5; i++)
		cr_assert_eq(tmatch__edges_push(&e, TMATCH_PROFILE_HAS_BYTES, src[i], dst[i],
		                                (uint64_t)i + 1, 0, (uint32_t)i + 10),
		             0);
	cr_assert_eq(
	    tmatch__edges_sort_merge(&e, TMATCH_PROFILE_HAS_BYTES, 4, 1, &ndup, &l1, &l2, &a, &b),
	    0);
	cr_expect_eq(e.n, 3);
	cr_expect_eq(ndup, 2);
	cr_expect(e.src[0] == 0 && e.dst[0] == 2 && e.bytes[0] == 2 + 5);
	cr_expect(e.src[1] == 1 && e.dst[1] == 0 && e.bytes[1] == 4);
	cr_expect(e.src[2] == 3 && e.dst[2] == 1 && e.bytes[2] == 1 + 3);
	tmatch__edges_free(&e);
}

/*
 * An undirected profile with one edge set builds its matrix straight from
 * its (already sorted, merged) edges; a directed profile with the same
 * edges goes the general way (copy, sort, merge). Same matrix, every metric,
 * with the other set empty or asked for.
 */
Test(conf_profile, undirected_fast_path_same_as_general)
{
	tmatch_profile_t *u, *d;
	tmatch_error_t err;

	u = tmatch_profile_create(40, TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS, 0, &err);
	d = tmatch_profile_create(40, TMATCH_PROFILE_HAS_BYTES | TMATCH_PROFILE_HAS_MSGS, 1, &err);
	cr_assert(u && d);
	for (int i = 0; i < 40; i++)
		for (int j = i + 1; j < 40; j += 1 + (i * j) % 7) {
			uint64_t b = (uint64_t)(i * 131 + j * 17) % 1000, m = (uint64_t)(i + j) % 5;
			cr_assert_eq(tmatch_profile_add_edge(u, TMATCH_PROFILE_P2P, j, i, b, m,
			                                     NULL, NULL, &err),
			             0);
			cr_assert_eq(tmatch_profile_add_edge(d, TMATCH_PROFILE_P2P, i, j, b, m,
			                                     NULL, NULL, &err),
			             0);
		}
	cr_assert_eq(tmatch_profile_finish(u, NULL, NULL, &err), 0);
	cr_assert_eq(tmatch_profile_finish(d, NULL, NULL, &err), 0);
	for (int metric = 0; metric < 3; metric++)
		for (unsigned sets = 1; sets <= 3; sets++) {
			tmatch_comm_t *a = tmatch_profile_to_comm(u, metric, sets, &err);
			tmatch_comm_t *b = tmatch_profile_to_comm(d, metric, sets, &err);

			cr_assert(a && b, "%s", err.msg);
			for (int i = 0; i < 40; i++)
				for (int j = 0; j < 40; j++)
					cr_assert_eq(
					    tmatch_comm_get(a, i, j), tmatch_comm_get(b, i, j),
					    "metric %d sets %u (%d, %d)", metric, sets, i, j);
			tmatch_comm_destroy(a);
			tmatch_comm_destroy(b);
		}
	tmatch_profile_destroy(u);
	tmatch_profile_destroy(d);
}
