/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * svg.h - a very small SVG writer for `treematch draw`: shapes, escaped text
 * and the colour ramp of the log scales. Everything writes to a FILE*; the
 * caller checks ferror() once at the end. Numbers are printed with a fixed
 * format so the same picture gives byte-identical files.
 */
#ifndef TMATCH_CLI_SVG_H
#define TMATCH_CLI_SVG_H

#include <stdio.h>

/* "<?xml ...?><svg ...>" of the given size in px, white background. */
void tmatch_cli_svg_begin(FILE *f, double width, double height);
/* "</svg>". */
void tmatch_cli_svg_end(FILE *f);

/* Write s with &, <, >, " and ' escaped; control characters become '?'. */
void tmatch_cli_svg_escape(FILE *f, const char *s);

/*
 * A rectangle. cls (class attribute), stroke and tooltip may be NULL; a
 * tooltip becomes a <title> child, escaped.
 */
void tmatch_cli_svg_rect(FILE *f, double x, double y, double w, double h, const char *fill,
                         const char *stroke, const char *cls, const char *tooltip);
void tmatch_cli_svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke,
                         double width);
/* anchor: "start", "middle" or "end"; text is escaped. */
void tmatch_cli_svg_text(FILE *f, double x, double y, double size, const char *anchor,
                         const char *text);
/* Text rotated by -90 degrees around (x, y), for vertical axis labels. */
void tmatch_cli_svg_text_vertical(FILE *f, double x, double y, double size, const char *text);

/*
 * A colour scale over [lo, hi]: logarithmic (both > 0), or linear when
 * `linear` (lo is then 0: a value is shown against nothing, not against
 * the smallest one). tmatch_cli_svg_scale_pos() gives the position of v in
 * [0, 1] (clamped; 1 when lo == hi).
 */
typedef struct tmatch_cli_svg_scale {
	double lo;
	double hi;
	int linear;
} tmatch_cli_svg_scale_t;

double tmatch_cli_svg_scale_pos(const tmatch_cli_svg_scale_t *s, double v);

/* Colour of position t in [0, 1] on the ramp, as "#rrggbb" (out has >= 8 bytes). */
void tmatch_cli_svg_ramp(double t, char *out);

/*
 * A linear gradient named `id` sampling the ramp, left to right
 * (vertical = 0) or bottom to top (vertical = 1). Must be inside <defs>.
 */
void tmatch_cli_svg_ramp_gradient(FILE *f, const char *id, int vertical);

#endif
