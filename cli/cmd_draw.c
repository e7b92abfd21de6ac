/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_draw.c - `treematch draw`: a profile and a placement as one SVG picture.
 *
 *   top left    the communication matrix in rank order (the view of the
 *               TreeMatch paper's Figures 1-4)
 *   top right   the same matrix with ranks in placement order (sorted by the
 *               leaf they run on), lines at the tree's node boundaries: a good
 *               placement gathers the heavy cells into blocks on the diagonal
 *   bottom      the machine tree, each leaf coloured by the traffic of the
 *               rank placed there
 *   with a placement of GPUs (--bindings): the node's GPUs under the tree,
 *               by package, each with the ranks it holds and its card,
 *               coloured by their traffic
 *
 * Both matrices share one log colour scale of at least one decade (or the
 * --range given), the tree a linear one from 0; the legends give the
 * profile's units. Nodes carry their names when the tree has them.
 * Matrices larger than --max-cells
 * are summed into blocks of ranks, trees with more than --max-leaves leaves
 * are cut at the deepest level that fits (each box then sums its subtree), so
 * the file stays small whatever the size of the job.
 */
#include "cli/cli.h"
#include "placement/gpu.h"
#include "placement/inputs.h"
#include "profile/profile.h"
#include "cli/svg.h"
#include "treematch/treematch.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_MAX_CELLS  64
#define DEFAULT_MAX_LEAVES 128

/* Page layout, in px. */
#define MARGIN    20.0
#define MAP_SIZE  340.0
#define MAP_LEFT  70.0
#define MAP_GAP   90.0
#define MAP_TOP   104.0
#define LEGEND_W  16.0
#define PAGE_W    (MAP_LEFT + 2 * MAP_SIZE + MAP_GAP + 40.0 + LEGEND_W + 70.0)
#define TREE_LEFT 110.0
#define LEVEL_H   46.0
#define LEAF_H    26.0

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: treematch draw --profile FILE --topology SPEC [--mapping FILE | --mapper "
	        "NAME]\n"
	        "                      -o OUT.svg [--png OUT.png] [options]\n"
	        "\n"
	        "Draw the communication matrix in rank order and in placement order side by\n"
	        "side (log colour scale), and the machine tree with each rank at its leaf\n"
	        "coloured by its traffic.\n"
	        "\n"
	        "options:\n"
	        "  -p, --profile FILE     communication profile (.yml, .yaml, .mtx, .mat)\n"
	        "  -t, --topology SPEC    machine tree (tleaf string, synthetic:, xml:, local, "
	        "cluster:)\n"
	        "      --mapping FILE     placement to draw (as written by 'treematch map')\n"
	        "      --bindings FILE    a placement with GPUs (treematch map's bindings "
	        "format):\n"
	        "                         one node's slots, and its GPUs with their ranks\n"
	        "  -m, --mapper NAME      compute the placement with this mapper instead "
	        "(default %s)\n"
	        "  -s, --seed N           seed of the mapper (default 1, as treematch map)\n"
	        "  -o, --output FILE      SVG file to write (required)\n"
	        "      --png FILE         also write a PNG (needs rsvg-convert, Debian package "
	        "librsvg2-bin)\n"
	        "      --max-cells N      sum ranks into blocks above N rows (default %d)\n"
	        "      --max-leaves N     cut the tree above N boxes per level (default %d)\n"
	        "      --title TEXT       title line (default: the profile's file name)\n"
	        "      --range LO:HI      the matrices' log colour scale (default: the data's,\n"
	        "                         at least a decade; the tree's is linear from 0)\n"
	        "  -h, --help             this help\n",
	        TMATCH_DEFAULT_MAPPER, DEFAULT_MAX_CELLS, DEFAULT_MAX_LEAVES);
}

/* ------------------------------------------------------------------------ */
/* Drawing                                                                  */

struct picture {
	const tmatch_comm_t *comm;
	const tmatch_topo_t *topo;
	const int *leaf_of_rank;
	int n;           /* ranks */
	int block;       /* ranks per heat-map cell */
	int cells;       /* heat-map cells per side */
	double *by_rank; /* cells x cells, rank order */
	double *by_leaf; /* cells x cells, placement order */
	int *rank_at;    /* rank at placement position p */
	double *traffic; /* per rank: sum of its row */
	tmatch_cli_svg_scale_t cell_scale;
	double range_lo, range_hi; /* --range: the matrices' scale (0: from the data) */
	const char *unit;          /* the numbers' unit ("bytes"), NULL: the matrix's own */
	const tmatch_affinity_tree_t *tree; /* node names; NULL for a tleaf */
	int max_leaves;
	const char *title;
	const char *mapping_name;
	const char *topo_spec;
	/* --bindings: the node's GPUs and each rank's */
	const tmatch_affinity_devices_t *dev;
	const tmatch_place_gpu_out_t *gpus;
};

static int cmp_by_leaf(const void *a, const void *b, void *arg)
{
	const int *leaf = arg;
	int ra = *(const int *)a, rb = *(const int *)b;
	if (leaf[ra] != leaf[rb])
		return leaf[ra] < leaf[rb] ? -1 : 1;
	return ra < rb ? -1 : ra > rb;
}

/* Sum the matrix into cells x cells blocks; pos[r] is the position of rank r. */
static void fill_blocks(const struct picture *pic, const int *pos, double *out)
{
	for (int r = 0; r < pic->n; r++) {
		const int *cols;
		const double *w;
		int len = tmatch_comm_row(pic->comm, r, &cols, &w);
		int bi = pos[r] / pic->block;
		for (int k = 0; k < len; k++) {
			int bj = pos[cols[k]] / pic->block;
			out[(size_t)bi * pic->cells + bj] += w[k];
		}
	}
}

static int prepare(struct picture *pic, int max_cells)
{
	int n = pic->n, *pos = NULL, ret = -1;
	size_t ncell;

	pic->block = n > max_cells ? (n + max_cells - 1) / max_cells : 1;
	pic->cells = n > 0 ? (n + pic->block - 1) / pic->block : 0;
	ncell = (size_t)pic->cells * pic->cells;
	pic->by_rank = calloc(ncell ? ncell : 1, sizeof(double));
	pic->by_leaf = calloc(ncell ? ncell : 1, sizeof(double));
	pic->rank_at = malloc(((size_t)n + 1) * sizeof(int));
	pic->traffic = calloc((size_t)n + 1, sizeof(double));
	pos = calloc((size_t)n + 1, sizeof(int));
	if (!pic->by_rank || !pic->by_leaf || !pic->rank_at || !pic->traffic || !pos) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	for (int r = 0; r < n; r++) {
		const double *w;
		int len = tmatch_comm_row(pic->comm, r, NULL, &w);
		for (int k = 0; k < len; k++)
			pic->traffic[r] += w[k];
		pic->rank_at[r] = r;
		pos[r] = r;
	}
	fill_blocks(pic, pos, pic->by_rank);
	qsort_r(pic->rank_at, (size_t)n, sizeof(int), cmp_by_leaf, (void *)pic->leaf_of_rank);
	for (int p = 0; p < n; p++)
		pos[pic->rank_at[p]] = p;
	fill_blocks(pic, pos, pic->by_leaf);

	pic->cell_scale.lo = HUGE_VAL;
	pic->cell_scale.hi = 0;
	for (size_t i = 0; i < ncell; i++) {
		double v[2] = {pic->by_rank[i], pic->by_leaf[i]};
		for (int k = 0; k < 2; k++) {
			if (v[k] > 0 && v[k] < pic->cell_scale.lo)
				pic->cell_scale.lo = v[k];
			if (v[k] > pic->cell_scale.hi)
				pic->cell_scale.hi = v[k];
		}
	}
	if (pic->cell_scale.hi <= 0)
		pic->cell_scale.lo = pic->cell_scale.hi = 1;
	/* at least a decade: values a few percent apart look alike, not pale
	   and dark; or the range the user states */
	if (pic->cell_scale.lo > pic->cell_scale.hi / 10)
		pic->cell_scale.lo = pic->cell_scale.hi / 10;
	if (pic->range_hi > 0) {
		pic->cell_scale.lo = pic->range_lo;
		pic->cell_scale.hi = pic->range_hi;
	}
	ret = 0;
out:
	free(pos);
	return ret;
}

/* "ranks 4-7" or "rank 4" for the ranks at positions [first, first+count). */
static void range_name(char *buf, size_t len, const char *what, int first, int count)
{
	if (count == 1)
		snprintf(buf, len, "%s %d", what, first);
	else
		snprintf(buf, len, "%ss %d-%d", what, first, first + count - 1);
}

/* Leaves below one node at `level` (levels 0..depth, depth = the leaves). */
static long leaves_below(const tmatch_topo_t *topo, int level)
{
	long s = 1;
	for (int l = level; l < tmatch_topo_depth(topo); l++)
		s *= tmatch_topo_arity(topo, l);
	return s;
}

static long nodes_at(const tmatch_topo_t *topo, int level)
{
	long s = 1;
	for (int l = 0; l < level; l++)
		s *= tmatch_topo_arity(topo, l);
	return s;
}

static const char *level_name(const tmatch_topo_t *topo, int level, char *buf, size_t len)
{
	const char *name = tmatch_topo_level_name(topo, level);
	if (name && *name)
		return name;
	if (level == tmatch_topo_depth(topo))
		snprintf(buf, len, "leaf");
	else
		snprintf(buf, len, "level %d", level);
	return buf;
}

static void draw_legend(FILE *f, const tmatch_cli_svg_scale_t *s, double x, double y, double w,
                        double h, int vertical, const char *gradient, const char *caption)
{
	char label[64];
	double lo_exp = s->linear ? 0 : ceil(log10(s->lo)),
	       hi_exp = s->linear ? 2 : floor(log10(s->hi));
	int nticks = (int)(hi_exp - lo_exp) + 1;
	int step = nticks > 6 ? (nticks + 5) / 6 : 1;

	fprintf(f,
	        "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"url(#%s)\" "
	        "stroke=\"#555555\" stroke-width=\"0.5\"/>\n",
	        x, y, w, h, gradient);
	/* Ticks at the powers of ten inside a log range; at 0, half and the top
	   of a linear one. */
	for (int e = (int)lo_exp; e <= (int)hi_exp; e += step) {
		double v = s->linear ? s->hi * e / 2 : pow(10.0, e);
		double t = s->linear ? e / 2.0 : tmatch_cli_svg_scale_pos(s, v);

		if (s->linear)
			snprintf(label, sizeof(label), "%.3g", v);
		else
			snprintf(label, sizeof(label), "1e%d", e);
		if (vertical) {
			double ty = y + h - t * h;
			tmatch_cli_svg_line(f, x + w, ty, x + w + 4, ty, "#333333", 0.8);
			tmatch_cli_svg_text(f, x + w + 6, ty + 3.5, 9, "start", label);
		} else {
			double tx = x + t * w;
			tmatch_cli_svg_line(f, tx, y + h, tx, y + h + 4, "#333333", 0.8);
			tmatch_cli_svg_text(f, tx, y + h + 14, 9, "middle", label);
		}
	}
	/* the ends of a log range, which need not be ticks: its top, and that
	   everything at or below its bottom is its palest colour */
	if (vertical && !s->linear) {
		snprintf(label, sizeof(label), "top %.3g", s->hi);
		tmatch_cli_svg_text(f, x, y - 6, 9, "start", label);
		snprintf(label, sizeof(label), "%.3g or less", s->lo);
		tmatch_cli_svg_text(f, x, y + h + 14, 9, "start", label);
	} else if (!s->linear) {
		snprintf(label, sizeof(label), "%.3g or less", s->lo);
		tmatch_cli_svg_text(f, x - 6, y + h - 2, 9, "end", label);
		snprintf(label, sizeof(label), "top %.3g", s->hi);
		tmatch_cli_svg_text(f, x + w + 6, y + h - 2, 9, "start", label);
	}
	if (vertical)
		tmatch_cli_svg_text(f, x, y - 20, 10, "start", caption);
	else
		tmatch_cli_svg_text(f, x + w / 2, y - 5, 10, "middle", caption);
}

/* The unit of the numbers, for the legends. */
static const char *unit_of(const struct picture *pic)
{
	return pic->unit ? pic->unit : "matrix units";
}

/* The name of the node holding `leaf` ("" when the tree has none). */
static const char *node_of_leaf(const struct picture *pic, long leaf)
{
	const char *name;

	if (!pic->tree || !tmatch_affinity_leaf_is_real(pic->tree, (int)leaf))
		return "";
	name = tmatch_affinity_tree_node_name(pic->tree,
	                                      tmatch_affinity_leaf_node(pic->tree, (int)leaf));
	return name ? name : "";
}

static void draw_map(FILE *f, const struct picture *pic, const double *cells, double x0, double y0,
                     int placement, const char *caption)
{
	double cs = MAP_SIZE / pic->cells;
	int g = pic->cells, b = pic->block;
	int tooltips = g <= 32;
	char col[8], tip[160], a[48], c[48];

	tmatch_cli_svg_text(f, x0 + MAP_SIZE / 2, y0 - 12, 12, "middle", caption);
	tmatch_cli_svg_rect(f, x0, y0, MAP_SIZE, MAP_SIZE, "#ffffff", "#888888", "matrix", NULL);
	for (int i = 0; i < g; i++) {
		for (int j = 0; j < g; j++) {
			double v = cells[(size_t)i * g + j];
			int ni = i * b + b <= pic->n ? b : pic->n - i * b;
			int nj = j * b + b <= pic->n ? b : pic->n - j * b;
			if (!(v > 0))
				continue;
			tmatch_cli_svg_ramp(tmatch_cli_svg_scale_pos(&pic->cell_scale, v), col);
			if (tooltips) {
				if (placement && b == 1) {
					snprintf(a, sizeof(a), "rank %d", pic->rank_at[i]);
					snprintf(c, sizeof(c), "rank %d", pic->rank_at[j]);
				} else {
					range_name(a, sizeof(a), placement ? "position" : "rank",
					           i * b, ni);
					range_name(c, sizeof(c), placement ? "position" : "rank",
					           j * b, nj);
				}
				snprintf(tip, sizeof(tip), "%s x %s: %.6g %s", a, c, v,
				         unit_of(pic));
			}
			tmatch_cli_svg_rect(f, x0 + j * cs, y0 + i * cs, cs, cs, col, NULL, "cell",
			                    tooltips ? tip : NULL);
		}
	}
	/* Axis labels: every rank when few, else about eight ticks. */
	{
		int every = pic->n <= 16 ? 1 : pic->n <= 64 ? 4 : (pic->n + 7) / 8;
		for (int p = 0; p < pic->n; p += every) {
			int block = p / b;
			double t = (block + (b == 1 ? 0.5 : 0.0)) * cs;
			char lab[24];
			snprintf(lab, sizeof(lab), "%d", placement && b == 1 ? pic->rank_at[p] : p);
			tmatch_cli_svg_text(f, x0 - 4, y0 + t + 3, 8, "end", lab);
			tmatch_cli_svg_text(f, x0 + t, y0 + MAP_SIZE + 11, 8, "middle", lab);
		}
		tmatch_cli_svg_text(f, x0 + MAP_SIZE / 2, y0 + MAP_SIZE + 26, 10, "middle",
		                    placement ? (b == 1 ? "rank (in placement order)"
		                                        : "position in placement order")
		                              : "rank");
	}
	if (!placement)
		return;
	/* Node boundaries of the tree in placement order, shallow levels darker. */
	for (int level = 1; level < tmatch_topo_depth(pic->topo); level++) {
		long span = leaves_below(pic->topo, level);
		double width = level == 1 ? 1.2 : 0.6;
		const char *stroke = level == 1 ? "#1f3b73" : "#6f86b3";
		int drawn = 0;
		for (int p = 1; p < pic->n; p++) {
			long a0 = pic->leaf_of_rank[pic->rank_at[p - 1]] / span;
			long a1 = pic->leaf_of_rank[pic->rank_at[p]] / span;
			if (a0 != a1 && p % b == 0)
				drawn++;
		}
		if (drawn == 0 || drawn > g / 2)
			continue;
		for (int p = 1; p < pic->n; p++) {
			long a0 = pic->leaf_of_rank[pic->rank_at[p - 1]] / span;
			long a1 = pic->leaf_of_rank[pic->rank_at[p]] / span;
			int block = p / b;
			double t;
			if (a0 == a1 || p % b != 0)
				continue;
			t = block * cs;
			tmatch_cli_svg_line(f, x0 + t, y0, x0 + t, y0 + MAP_SIZE, stroke, width);
			tmatch_cli_svg_line(f, x0, y0 + t, x0 + MAP_SIZE, y0 + t, stroke, width);
		}
	}
}

/* Height of the tree panel for a tree cut at `cut`. */
static double tree_height(int cut)
{
	return 30 + cut * LEVEL_H + LEAF_H + 70;
}

static int draw_tree(FILE *f, const struct picture *pic, double y0, int cut)
{
	const tmatch_topo_t *topo = pic->topo;
	int depth = tmatch_topo_depth(topo), nleaves = tmatch_topo_nb_leaves(topo);
	long nbox = nodes_at(topo, cut), span = leaves_below(topo, cut);
	double x0 = TREE_LEFT, w = PAGE_W - MARGIN - TREE_LEFT, bw = w / (double)nbox;
	double by = y0 + 30 + cut * LEVEL_H;
	double *box_traffic = calloc((size_t)nbox, sizeof(double));
	int *box_ranks = calloc((size_t)nbox, sizeof(int));
	int *rank_of_leaf = calloc((size_t)nleaves + 1, sizeof(int));
	tmatch_cli_svg_scale_t s = {0, 0, 1}; /* linear, from 0 */
	char buf[200], name[32], col[8];
	int ret = -1;

	if (!box_traffic || !box_ranks || !rank_of_leaf) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	for (int l = 0; l < nleaves; l++)
		rank_of_leaf[l] = -1;
	for (int r = 0; r < pic->n; r++) {
		int leaf = pic->leaf_of_rank[r];
		rank_of_leaf[leaf] = r;
		box_traffic[leaf / span] += pic->traffic[r];
		box_ranks[leaf / span]++;
	}
	for (long i = 0; i < nbox; i++)
		if (box_traffic[i] > s.hi)
			s.hi = box_traffic[i];
	if (s.hi <= 0)
		s.hi = 1;

	snprintf(buf, sizeof(buf), "Machine tree (%d leaves%s), %s coloured by traffic", nleaves,
	         cut < depth ? ", cut above the leaves" : "",
	         cut < depth ? "each box (sum of its ranks)" : "each rank at its leaf");
	tmatch_cli_svg_text(f, x0, y0 + 8, 12, "start", buf);

	/* Edges, then internal nodes, level by level. */
	for (int l = 0; l < cut; l++) {
		long nl = nodes_at(topo, l), per = nbox / nl, child = nbox / nodes_at(topo, l + 1);
		double y = y0 + 30 + l * LEVEL_H, yc = y + LEVEL_H;
		for (long i = 0; i < nl; i++) {
			double cx = x0 + (i * per + per / 2.0) * bw;
			for (long c = 0; c < per / child; c++) {
				long first = i * per + c * child;
				double ccx = x0 + (first + child / 2.0) * bw;
				tmatch_cli_svg_line(f, cx, y, ccx, yc, "#9a9a9a", 0.7);
			}
		}
	}
	for (int l = 0; l < cut; l++) {
		long nl = nodes_at(topo, l), per = nbox / nl;
		double y = y0 + 30 + l * LEVEL_H, r = bw * per / 2 < 4 ? bw * per / 2 : 4;
		const char *lname = level_name(topo, l, name, sizeof(name));
		int named = pic->tree && !strcmp(lname, "node");

		tmatch_cli_svg_text(f, x0 - 8, y + 3, 9, "end", lname);
		for (long i = 0; i < nl; i++) {
			double cx = x0 + (i * per + per / 2.0) * bw;
			fprintf(f,
			        "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"#2f4f7f\" "
			        "class=\"node\">",
			        cx, y, r > 0.8 ? r : 0.8);
			if (named) {
				fputs("<title>", f);
				tmatch_cli_svg_escape(f,
				                      node_of_leaf(pic, i * leaves_below(topo, l)));
				fputs("</title>", f);
			}
			fputs("</circle>\n", f);
			/* the node's name beside it, where there is room */
			if (named && bw * per >= 30)
				tmatch_cli_svg_text(f, cx + 6, y - 5, 8, "start",
				                    node_of_leaf(pic, i * leaves_below(topo, l)));
		}
	}
	tmatch_cli_svg_text(f, x0 - 8, by + LEAF_H / 2 + 3, 9, "end",
	                    level_name(topo, cut, name, sizeof(name)));
	for (long i = 0; i < nbox; i++) {
		const char *fill = "#ffffff", *stroke = "#777777";
		double bx = x0 + i * bw + (bw > 6 ? 1 : 0), bww = bw > 6 ? bw - 2 : bw;
		if (cut == depth) {
			int r = rank_of_leaf[i];
			if (r >= 0) {
				tmatch_cli_svg_ramp(tmatch_cli_svg_scale_pos(&s, pic->traffic[r]),
				                    col);
				fill = col;
				snprintf(buf, sizeof(buf), "leaf %ld%s%s: rank %d, %.6g %s", i,
				         pic->tree ? " on " : "", node_of_leaf(pic, i), r,
				         pic->traffic[r], unit_of(pic));
			} else if (!tmatch_topo_is_allowed(topo, (int)i)) {
				fill = "#d0d0d0";
				snprintf(buf, sizeof(buf), "leaf %ld: not allowed", i);
			} else {
				snprintf(buf, sizeof(buf), "leaf %ld: empty", i);
			}
		} else {
			if (box_ranks[i] > 0) {
				tmatch_cli_svg_ramp(tmatch_cli_svg_scale_pos(&s, box_traffic[i]),
				                    col);
				fill = col;
			}
			level_name(topo, cut, name, sizeof(name));
			snprintf(buf, sizeof(buf), "%s %ld%s%s: %d ranks, %.6g %s", name, i,
			         pic->tree && !strcmp(name, "node") ? " " : "",
			         pic->tree && !strcmp(name, "node") ? node_of_leaf(pic, i * span)
			                                            : "",
			         box_ranks[i], box_traffic[i], unit_of(pic));
		}
		tmatch_cli_svg_rect(f, bx, by, bww, LEAF_H, fill, bw > 3 ? stroke : NULL, "leaf",
		                    buf);
		if (bw >= 14) {
			char lab[16];
			if (cut == depth && rank_of_leaf[i] >= 0)
				snprintf(lab, sizeof(lab), "%d", rank_of_leaf[i]);
			else if (cut < depth)
				snprintf(lab, sizeof(lab), "%d", box_ranks[i]);
			else
				lab[0] = 0;
			if (lab[0]) {
				double t = tmatch_cli_svg_scale_pos(
				    &s,
				    cut == depth ? pic->traffic[rank_of_leaf[i]] : box_traffic[i]);
				fprintf(f,
				        "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" "
				        "text-anchor=\"middle\" fill=\"%s\">",
				        bx + bww / 2, by + LEAF_H / 2 + 3.5, bw >= 22 ? 10.0 : 8.0,
				        t > 0.55 ? "#ffffff" : "#000000");
				tmatch_cli_svg_escape(f, lab);
				fputs("</text>\n", f);
			}
		}
	}
	tmatch_cli_svg_text(f, x0, by + LEAF_H + 14, 9, "start",
	                    cut == depth ? "label: the rank at the leaf; grey: not allowed"
	                                 : "label: number of ranks in the box");
	snprintf(buf, sizeof(buf), "%s %s (its row of the matrix), linear from 0", unit_of(pic),
	         cut == depth ? "of the rank" : "of the box's ranks");
	draw_legend(f, &s, x0 + w / 2 - 120, by + LEAF_H + 34, 240, 12, 0, "ramp-h", buf);
	ret = 0;
out:
	free(box_traffic);
	free(box_ranks);
	free(rank_of_leaf);
	return ret;
}

#define GPU_H 110.0

/* The node's GPUs in index order, a gap between packages, each box with
   its name, its ranks and card, coloured by the traffic of its ranks. */
static int draw_gpus(FILE *f, const struct picture *pic, double y0)
{
	const tmatch_affinity_devices_t *d = pic->dev;
	double x0 = TREE_LEFT, w = PAGE_W - MARGIN - TREE_LEFT, bw, gap = 10, x;
	double *traffic = calloc((size_t)d->ngpus + 1, sizeof(double));
	char **ranks = calloc((size_t)d->ngpus + 1, sizeof(char *));
	tmatch_cli_svg_scale_t s = {HUGE_VAL, 0, 0}; /* log, as the matrices */
	int npk = 1, ret = -1;
	char buf[300], col[8];

	if (!traffic || !ranks) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	for (int g = 1; g < d->ngpus; g++)
		npk += d->gpu[g].package != d->gpu[g - 1].package;
	bw = (w - gap * (npk - 1)) / d->ngpus;
	for (int r = 0; r < pic->n; r++)
		for (int j = 0; j < pic->gpus->ngpus[r]; j++) {
			int g = pic->gpus->gpu[(size_t)r * (size_t)pic->gpus->stride + j];
			char *old = ranks[g];

			traffic[g] += pic->traffic[r];
			if (asprintf(&ranks[g], "%s%s%d", old ? old : "", old ? "," : "", r) < 0)
				ranks[g] = NULL;
			free(old);
		}
	for (int g = 0; g < d->ngpus; g++) {
		if (traffic[g] > 0 && traffic[g] < s.lo)
			s.lo = traffic[g];
		if (traffic[g] > s.hi)
			s.hi = traffic[g];
	}
	if (s.hi <= 0)
		s.lo = s.hi = 1;
	tmatch_cli_svg_text(f, x0, y0 + 8, 12, "start",
	                    "GPUs (index order, by package), each with its ranks and card, "
	                    "coloured by their traffic");
	tmatch_cli_svg_text(f, x0 - 8, y0 + 46, 9, "end", "gpu");
	x = x0;
	for (int g = 0; g < d->ngpus; g++) {
		const tmatch_affinity_gpu_t *x_ = &d->gpu[g];
		const char *fill = "#ffffff";
		const char *nic = "-";

		if (g && x_->package != d->gpu[g - 1].package)
			x += gap;
		if (ranks[g]) {
			tmatch_cli_svg_ramp(tmatch_cli_svg_scale_pos(&s, traffic[g]), col);
			fill = col;
		}
		for (int r = 0; r < pic->n; r++)
			if (pic->gpus->ngpus[r] &&
			    pic->gpus->gpu[(size_t)r * (size_t)pic->gpus->stride] == g &&
			    pic->gpus->nic[r] >= 0)
				nic = d->nic[pic->gpus->nic[r]].name;
		snprintf(buf, sizeof(buf),
		         "%s (package %d, numa %d): ranks %s, card %s, traffic %.6g", x_->name,
		         x_->package, x_->numa, ranks[g] ? ranks[g] : "none", nic, traffic[g]);
		tmatch_cli_svg_rect(f, x + 1, y0 + 30, bw - 2, 32, fill, "#555555", "gpu", buf);
		if (bw >= 30) {
			tmatch_cli_svg_text(f, x + bw / 2, y0 + 44, bw >= 50 ? 9.0 : 7.0, "middle",
			                    x_->name);
			tmatch_cli_svg_text(f, x + bw / 2, y0 + 56, bw >= 50 ? 8.0 : 6.0, "middle",
			                    ranks[g] ? ranks[g] : "-");
			tmatch_cli_svg_text(f, x + bw / 2, y0 + 74, 7.0, "middle", nic);
		}
		x += bw;
	}
	tmatch_cli_svg_text(f, x0, y0 + 92, 9, "start",
	                    "box: the GPU's name, its ranks; below: the card of its ranks");
	ret = 0;
out:
	for (int g = 0; ranks && g < d->ngpus; g++)
		free(ranks[g]);
	free(ranks);
	free(traffic);
	return ret;
}

static int write_svg(FILE *f, const struct picture *pic)
{
	int depth = tmatch_topo_depth(pic->topo), cut = depth;
	double tree_y = MAP_TOP + MAP_SIZE + 50;
	char buf[400];
	tmatch_metrics_t m_place = {0}, m_pack = {0}; /* read only if have_metrics */
	int *packed = NULL, have_metrics = 0;

	while (cut > 0 && nodes_at(pic->topo, cut) > pic->max_leaves)
		cut--;

	/* Cost of the placement next to packed (rank r on the r-th allowed leaf). */
	packed = malloc(((size_t)pic->n + 1) * sizeof(int));
	if (packed) {
		int r = 0, nleaves = tmatch_topo_nb_leaves(pic->topo);
		for (int l = 0; l < nleaves && r < pic->n; l++)
			if (tmatch_topo_is_allowed(pic->topo, l))
				packed[r++] = l;
		have_metrics =
		    r == pic->n &&
		    tmatch_eval(pic->comm, pic->topo, pic->leaf_of_rank, &m_place, NULL) == 0 &&
		    tmatch_eval(pic->comm, pic->topo, packed, &m_pack, NULL) == 0;
	}
	free(packed);

	tmatch_cli_svg_begin(f, PAGE_W,
	                     tree_y + tree_height(cut) + (pic->dev && pic->dev->ngpus ? GPU_H : 0));
	fputs("<defs>\n", f);
	tmatch_cli_svg_ramp_gradient(f, "ramp-v", 1);
	tmatch_cli_svg_ramp_gradient(f, "ramp-h", 0);
	fputs("</defs>\n", f);

	tmatch_cli_svg_text(f, MARGIN, 26, 15, "start", pic->title);
	snprintf(buf, sizeof(buf), "%d ranks, %d leaves (%s), placement: %s", pic->n,
	         tmatch_topo_nb_leaves(pic->topo), pic->topo_spec, pic->mapping_name);
	tmatch_cli_svg_text(f, MARGIN, 44, 10, "start", buf);
	if (have_metrics) {
		snprintf(buf, sizeof(buf),
		         "hop-bytes %.4g (packed %.4g), cost %.4g (packed %.4g), "
		         "congestion %.4g (packed %.4g)",
		         m_place.hop_bytes, m_pack.hop_bytes, m_place.cost, m_pack.cost,
		         m_place.congestion, m_pack.congestion);
		tmatch_cli_svg_text(f, MARGIN, 58, 10, "start", buf);
	}
	if (pic->block > 1) {
		snprintf(buf, sizeof(buf), "each cell sums a block of %d x %d ranks", pic->block,
		         pic->block);
		tmatch_cli_svg_text(f, MARGIN, 72, 10, "start", buf);
	}

	/* Groups with fixed ids, so tests and scripts can find each part. */
	fputs("<g id=\"rank-order\">\n", f);
	draw_map(f, pic, pic->by_rank, MAP_LEFT, MAP_TOP, 0, "Communication matrix, rank order");
	fputs("</g>\n<g id=\"placement-order\">\n", f);
	draw_map(f, pic, pic->by_leaf, MAP_LEFT + MAP_SIZE + MAP_GAP, MAP_TOP, 1,
	         "Same matrix, placement order");
	fputs("</g>\n<g id=\"matrix-legend\">\n", f);
	snprintf(buf, sizeof(buf), "%s, log", unit_of(pic));
	draw_legend(f, &pic->cell_scale, MAP_LEFT + 2 * MAP_SIZE + MAP_GAP + 40, MAP_TOP + 30,
	            LEGEND_W, MAP_SIZE - 30, 1, "ramp-v", buf);
	fputs("</g>\n<g id=\"tree\">\n", f);
	if (draw_tree(f, pic, tree_y, cut) < 0)
		return -1;
	fputs("</g>\n", f);
	if (pic->dev && pic->dev->ngpus) {
		fputs("<g id=\"gpus\">\n", f);
		if (draw_gpus(f, pic, tree_y + tree_height(cut)) < 0)
			return -1;
		fputs("</g>\n", f);
	}
	tmatch_cli_svg_end(f);
	return 0;
}

/* Find rsvg-convert on PATH; 0 and the path in buf when found. */
static int find_rsvg(char *buf, size_t len)
{
	const char *path = getenv("PATH");
	const char *p = path && *path ? path : "/usr/bin:/bin";

	while (*p) {
		size_t dl = strcspn(p, ":");
		if (dl > 0 && (size_t)snprintf(buf, len, "%.*s/rsvg-convert", (int)dl, p) < len &&
		    access(buf, X_OK) == 0)
			return 0;
		p += dl;
		// p + strcspn stays in the string
		// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
		if (*p == ':')
			p++;
	}
	return -1;
}

static int write_png(const char *svg, const char *png)
{
	char tool[4096];
	pid_t pid;
	int status;

	if (find_rsvg(tool, sizeof(tool)) < 0) {
		tmatch_cli_error(
		    "--png needs rsvg-convert, which is not installed (Debian: apt-get "
		    "install librsvg2-bin); the SVG was written to %s",
		    svg);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		tmatch_cli_error("cannot start rsvg-convert: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		// the user's own PATH, as a shell
		// NOLINTNEXTLINE(clang-analyzer-optin.taint.GenericTaint)
		execl(tool, "rsvg-convert", "--format=png", "-o", png, svg, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			tmatch_cli_error("waiting for rsvg-convert: %s", strerror(errno));
			return -1;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		tmatch_cli_error("rsvg-convert failed to write %s (exit status %d)", png,
		                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return 0;
}

static int parse_count(const char *opt, const char *s, int min, int *out)
{
	uint64_t v;

	if (tmatch_cli_number(s, 100000, &v) < 0 || v < (uint64_t)min) {
		tmatch_cli_error("%s: expected an integer from %d to 100000, got '%.32s'", opt, min,
		                 s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int tmatch_cli_draw(int argc, char **argv)
{
	enum {
		OPT_PNG = 256,
		OPT_MAX_CELLS,
		OPT_MAX_LEAVES,
		OPT_TITLE,
		OPT_RANGE,
		OPT_MAPPING,
		OPT_BINDINGS,
	};
	static const struct option longopts[] = {
	    {"profile", required_argument, NULL, 'p'},
	    {"topology", required_argument, NULL, 't'},
	    {"mapping", required_argument, NULL, OPT_MAPPING},
	    {"bindings", required_argument, NULL, OPT_BINDINGS},
	    {"mapper", required_argument, NULL, 'm'},
	    {"seed", required_argument, NULL, 's'},
	    {"output", required_argument, NULL, 'o'},
	    {"png", required_argument, NULL, OPT_PNG},
	    {"max-cells", required_argument, NULL, OPT_MAX_CELLS},
	    {"max-leaves", required_argument, NULL, OPT_MAX_LEAVES},
	    {"title", required_argument, NULL, OPT_TITLE},
	    {"range", required_argument, NULL, OPT_RANGE},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *profile = NULL, *topo_spec = NULL, *mapping = NULL, *mapper = NULL;
	const char *bindings = NULL;
	tmatch_affinity_tree_t *tree = NULL;
	tmatch_affinity_devices_t *dev = NULL;
	tmatch_place_gpu_out_t gpus = {0};
	const char *output = NULL, *png = NULL, *title = NULL;
	int max_cells = DEFAULT_MAX_CELLS, max_leaves = DEFAULT_MAX_LEAVES;
	unsigned long long seed = 1;
	tmatch_error_t err;
	tmatch_comm_t *comm = NULL;
	tmatch_topo_t *topo = NULL;
	int *leaf_of_rank = NULL, ret = 1, c, metric = -1;
	struct picture pic;
	char ebuf[1024], mapping_name[300];
	FILE *f = NULL;

	memset(&pic, 0, sizeof(pic));
	tmatch_error_clear(&err);
	optind = 0;
	opterr = 0;
	while ((c = tmatch_cli_getopt(argc, argv, ":p:t:m:s:o:h", longopts)) != -1) {
		switch (c) {
		case OPT_BINDINGS:
			bindings = optarg;
			break;
		case 'p':
			profile = optarg;
			break;
		case 't':
			topo_spec = optarg;
			break;
		case OPT_MAPPING:
			mapping = optarg;
			break;
		case 'm':
			mapper = optarg;
			break;
		case 's': {
			uint64_t v;

			if (tmatch_cli_seed(optarg, &v) < 0)
				return 2;
			seed = v;
			break;
		}
		case 'o':
			output = optarg;
			break;
		case OPT_PNG:
			png = optarg;
			break;
		case OPT_MAX_CELLS:
			if (parse_count("--max-cells", optarg, 1, &max_cells) < 0)
				return 2;
			break;
		case OPT_MAX_LEAVES:
			if (parse_count("--max-leaves", optarg, 1, &max_leaves) < 0)
				return 2;
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_RANGE: {
			char *end = NULL;

			pic.range_lo = strtod(optarg, &end);
			if (!end || *end != ':' || !(pic.range_lo > 0) ||
			    !((pic.range_hi = strtod(end + 1, &end)) > pic.range_lo) || *end) {
				tmatch_cli_error("draw: --range wants LO:HI, 0 < LO < HI (the log "
				                 "scale of the matrices), not '%.40s'",
				                 optarg);
				return 2;
			}
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			return tmatch_cli_bad_option("draw", argv, ":p:t:m:s:o:h", longopts);
		}
	}
	if (optind < argc) {
		tmatch_cli_error("draw: unexpected argument '%s'", argv[optind]);
		tmatch_cli_usage_hint("draw");
		return 2;
	}
	if (!profile || !topo_spec || !output) {
		tmatch_cli_error("draw: --profile, --topology and -o/--output are required");
		tmatch_cli_usage_hint("draw");
		return 2;
	}
	if (mapping && mapper) {
		tmatch_cli_error("draw: give --mapping FILE or --mapper NAME, not both");
		return 2;
	}
	if (bindings && (mapping || mapper)) {
		tmatch_cli_error("draw: give --bindings FILE or --mapping/--mapper, not both");
		return 2;
	}
	if (png && !strcmp(output, "-")) {
		tmatch_cli_error("draw: --png converts the SVG file: give -o FILE, not -");
		return 2;
	}
	/* '-' and pipes: standard input copied once into a regular file */
	if (!title)
		title = strcmp(profile, "-")
		            ? (strrchr(profile, '/') ? strrchr(profile, '/') + 1 : profile)
		            : "standard input";
	if (!(profile = tmatch_cli_input(profile, "--profile")) ||
	    (mapping && !(mapping = tmatch_cli_input(mapping, "--mapping"))) ||
	    (bindings && !(bindings = tmatch_cli_input(bindings, "--bindings"))))
		return 1;

	comm = tmatch_place_comm_load_metric(profile, tmatch_cli_log, NULL, &metric, &err);
	if (!comm)
		goto fail;
	if (bindings) {
		/* one node as the plugin sees it: its task slots and devices */
		int n = tmatch_comm_order(comm);

		if (!(tree = tmatch_place_node_tree_load(topo_spec, n > 0 ? n : 1, 1, 1, NULL,
		                                         &err)) ||
		    !(dev = tmatch_affinity_tree_devices(tree, 0, &err)) ||
		    !(topo = tmatch_affinity_tree_topo_dup(tree, &err)))
			goto fail;
	} else if (!strncmp(topo_spec, "cluster:", 8) || !strncmp(topo_spec, "synthetic:", 10) ||
	           !strncmp(topo_spec, "xml:", 4) || !strcmp(topo_spec, "local")) {
		/* a tree with CPUs has node names too */
		tree = tmatch_place_tree_load(topo_spec, NULL, NULL, NULL, &err);
		topo = tree ? tmatch_affinity_tree_topo_dup(tree, &err) : NULL;
	} else {
		topo = tmatch_place_topo_load(topo_spec, &err);
	}
	if (!topo && bindings)
		goto fail;
	if (!topo) {
		tmatch_cli_report_value("--topology", topo_spec, &err);
		goto out;
	}
	pic.tree = tree;
	pic.unit = metric == TMATCH_METRIC_BYTES  ? "bytes"
	           : metric == TMATCH_METRIC_MSGS ? "messages"
	           : metric == TMATCH_METRIC_AVG  ? "bytes per message"
	                                          : NULL;
	pic.n = tmatch_comm_order(comm);
	if (pic.n <= 0) {
		tmatch_cli_error("%s: the profile has no ranks: nothing to draw", profile);
		goto out;
	}
	leaf_of_rank = malloc(((size_t)pic.n + 1) * sizeof(int));
	if (!leaf_of_rank) {
		tmatch_cli_error("out of memory");
		goto out;
	}
	if (bindings) {
		if (tmatch_place_bindings_read(bindings, tree, dev, pic.n, &gpus, &err) < 0) {
			tmatch_cli_report(&err);
			goto out;
		}
		memcpy(leaf_of_rank, gpus.leaf, (size_t)pic.n * sizeof(int));
		pic.dev = dev;
		pic.gpus = &gpus;
		snprintf(mapping_name, sizeof(mapping_name), "bindings %.250s", bindings);
	} else if (mapping) {
		if (tmatch_map_load(mapping, topo, pic.n, leaf_of_rank, &err) < 0) {
			tmatch_cli_report(&err);
			goto out;
		}
		snprintf(mapping_name, sizeof(mapping_name), "file %.250s", mapping);
	} else {
		tmatch_map_opts_t opts;
		tmatch_map_opts_init(&opts);
		opts.mapper = mapper;
		opts.seed = seed;
		if (tmatch_map_compute(comm, topo, &opts, leaf_of_rank, &err) < 0)
			goto fail;
		snprintf(mapping_name, sizeof(mapping_name), "mapper %.64s, seed %llu",
		         mapper ? mapper : TMATCH_DEFAULT_MAPPER, seed);
	}

	pic.comm = comm;
	pic.topo = topo;
	pic.leaf_of_rank = leaf_of_rank;
	pic.max_leaves = max_leaves;
	pic.mapping_name = mapping_name;
	pic.topo_spec = topo_spec;
	pic.title = title;
	if (prepare(&pic, max_cells) < 0)
		goto out;

	if (!(f = tmatch_cli_output(output, "w")))
		goto out;
	if ((write_svg(f, &pic) < 0) | (tmatch_cli_output_close(f, output) < 0)) {
		f = NULL;
		if (strcmp(output, "-") != 0)
			remove(output);
		goto out;
	}
	f = NULL;
	if (png && write_png(output, png) < 0)
		goto out;
	ret = 0;
	goto out;
fail:
	tmatch_cli_error("%s", tmatch_error_format(&err, ebuf, sizeof(ebuf)));
out:
	free(pic.by_rank);
	free(pic.by_leaf);
	free(pic.rank_at);
	free(pic.traffic);
	free(leaf_of_rank);
	tmatch_place_gpu_out_free(&gpus);
	tmatch_affinity_devices_destroy(dev);
	tmatch_affinity_tree_destroy(tree);
	tmatch_topo_destroy(topo);
	tmatch_comm_destroy(comm);
	return ret;
}
