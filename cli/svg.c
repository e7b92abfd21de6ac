/* SPDX-License-Identifier: BSD-3-Clause */
/* svg.c - the SVG writer behind `treematch draw` (see svg.h). */
#include "cli/svg.h"

#include <math.h>

void tmatch_cli_svg_begin(FILE *f, double width, double height)
{
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
	        "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	        "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
	        width, height, width, height);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
	        width, height);
}

void tmatch_cli_svg_end(FILE *f)
{
	fputs("</svg>\n", f);
}

void tmatch_cli_svg_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			/* XML 1.0 forbids most control characters, even escaped. */
			fputc(c < 0x20 || c == 0x7f ? '?' : (int)c, f);
		}
	}
}

void tmatch_cli_svg_rect(FILE *f, double x, double y, double w, double h, const char *fill,
                         const char *stroke, const char *cls, const char *tooltip)
{
	fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x, y,
	        w, h, fill);
	if (stroke)
		fprintf(f, " stroke=\"%s\" stroke-width=\"0.5\"", stroke);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	if (tooltip) {
		fputs("><title>", f);
		tmatch_cli_svg_escape(f, tooltip);
		fputs("</title></rect>\n", f);
	} else {
		fputs("/>\n", f);
	}
}

void tmatch_cli_svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke,
                         double width)
{
	fprintf(f,
	        "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
	        "stroke-width=\"%.2f\"/>\n",
	        x1, y1, x2, y2, stroke, width);
}

void tmatch_cli_svg_text(FILE *f, double x, double y, double size, const char *anchor,
                         const char *text)
{
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" text-anchor=\"%s\">", x, y, size,
	        anchor);
	tmatch_cli_svg_escape(f, text);
	fputs("</text>\n", f);
}

void tmatch_cli_svg_text_vertical(FILE *f, double x, double y, double size, const char *text)
{
	fprintf(f,
	        "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" text-anchor=\"middle\" "
	        "transform=\"rotate(-90 %.2f %.2f)\">",
	        x, y, size, x, y);
	tmatch_cli_svg_escape(f, text);
	fputs("</text>\n", f);
}

double tmatch_cli_svg_scale_pos(const tmatch_cli_svg_scale_t *s, double v)
{
	double t;

	if (!(s->hi > s->lo))
		return 1.0;
	if (!(v > s->lo))
		return 0.0;
	t = s->linear ? (v - s->lo) / (s->hi - s->lo) : log(v / s->lo) / log(s->hi / s->lo);
	return t > 1.0 ? 1.0 : t;
}

/* Pale yellow to dark red, readable on white and in grey print. */
static const unsigned char ramp_stops[][3] = {
    {0xfb, 0xe3, 0x8e}, {0xfc, 0xc2, 0x5c}, {0xf3, 0x8b, 0x3c},
    {0xd6, 0x45, 0x2a}, {0x9b, 0x16, 0x2a}, {0x4a, 0x08, 0x1c},
};
#define RAMP_N ((int)(sizeof(ramp_stops) / sizeof(ramp_stops[0])))

void tmatch_cli_svg_ramp(double t, char *out)
{
	double pos, frac;
	int i, c[3];

	if (!(t > 0.0))
		t = 0.0;
	if (t > 1.0)
		t = 1.0;
	pos = t * (RAMP_N - 1);
	i = (int)pos;
	if (i >= RAMP_N - 1)
		i = RAMP_N - 2;
	frac = pos - i;
	for (int k = 0; k < 3; k++)
		c[k] = (int)lround(ramp_stops[i][k] +
		                   frac * (ramp_stops[i + 1][k] - ramp_stops[i][k]));
	snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

void tmatch_cli_svg_ramp_gradient(FILE *f, const char *id, int vertical)
{
	char col[8];

	fprintf(f, "<linearGradient id=\"%s\" x1=\"0\" y1=\"%s\" x2=\"%s\" y2=\"0\">\n", id,
	        vertical ? "1" : "0", vertical ? "0" : "1");
	for (int i = 0; i <= 10; i++) {
		tmatch_cli_svg_ramp(i / 10.0, col);
		fprintf(f, "<stop offset=\"%.1f\" stop-color=\"%s\"/>\n", i / 10.0, col);
	}
	fputs("</linearGradient>\n", f);
}
