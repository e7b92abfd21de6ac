/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cli_manpages.c - the man pages say what the code does:
 *   - every subcommand listed by `treematch --help` (and every nested
 *     subcommand listed by `treematch GROUP --help`) has its own section
 *     ".SS treematch NAME..." in cli/treematch.1, and every option its
 *     --help prints is documented in that section;
 * (treematch(8) has its own check in test_spank_glue: every option the plugin
 * registers and every plugstack.conf argument.)
 * Runs the CLI that `make` built in TMATCH_BUILDDIR.
 */
#include "cli_helpers.h"
#include "tmpdir.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLI     (char *)cli_path()
#define PAGE1   TMATCH_SRCDIR "/cli/treematch.1"
#define MAXHELP (1 << 16)

/* Read a man page and drop the roff markup that can split a word: font
   changes (\fB \fI \fR \fP \f(CW), "\-" -> "-", "\&" -> "". */
static char *read_page(const char *path)
{
	FILE *f = fopen(path, "r");
	char *raw, *out;
	size_t n, j = 0;

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	raw = malloc(1 << 20);
	out = malloc(1 << 20);
	cr_assert(raw && out);
	n = fread(raw, 1, (1 << 20) - 1, f);
	fclose(f);
	raw[n] = 0;
	for (size_t i = 0; i < n; i++) {
		if (raw[i] == '\\' && raw[i + 1] == 'f') {
			i += raw[i + 2] == '(' ? 4 : 2;
			continue;
		}
		if (raw[i] == '\\' && (raw[i + 1] == '-' || raw[i + 1] == '&')) {
			if (raw[i + 1] == '-')
				out[j++] = '-';
			i++;
			continue;
		}
		out[j++] = raw[i];
	}
	out[j] = 0;
	free(raw);
	return out;
}

/* Run `treematch args...` and capture stdout+stderr. Returns the exit status. */
static int run_cli(const char *a1, const char *a2, const char *a3, char *out, size_t outlen)
{
	char *argv[] = {CLI, (char *)a1, (char *)a2, (char *)a3, NULL};

	return cli_run(argv, NULL, out, NULL, outlen);
}

static int is_word(int c)
{
	return isalnum(c) || c == '-' || c == '_';
}

/* 1 if `word` occurs in [from, to) not glued to other word characters. */
static int has_word(const char *from, const char *to, const char *word)
{
	size_t wl = strlen(word);
	for (const char *p = from; (p = strstr(p, word)) && p + wl <= to; p++) {
		if ((p == from || !is_word((unsigned char)p[-1])) && !is_word((unsigned char)p[wl]))
			return 1;
	}
	return 0;
}

/* The section ".SS treematch NAME" of the page, up to the next .SS/.SH. */
static int section(const char *page, const char *name, const char **from, const char **to)
{
	char head[128];
	const char *p = page;
	size_t hl;

	snprintf(head, sizeof(head), ".SS \"treematch %s\"", name);
	hl = strlen(head);
	for (; (p = strstr(p, head)); p += hl) {
		if ((p == page || p[-1] == '\n') && p[hl] == '\n')
			break;
	}
	if (!p)
		return -1;
	*from = p;
	*to = p + hl;
	while (**to &&
	       !(((*to)[-1] == '\n') && (!strncmp(*to, ".SS", 3) || !strncmp(*to, ".SH", 3))))
		(*to)++;
	return 0;
}

/*
 * The subcommands listed in a help text, any of:
 *   a line "commands:" followed by lines "  NAME  summary" (until a blank line);
 *   a usage line "usage: treematch GROUP <a|b|c> ..." (group is not NULL);
 *   a usage line "usage: treematch GROUP word ..." with one lowercase word.
 */
static int list_commands(const char *help, const char *group, char names[][32], int max)
{
	const char *p = strstr(help, "commands:\n");
	char head[64];
	int n = 0;

	if (p) {
		p = strchr(p, '\n') + 1;
		while (*p == ' ' && n < max) {
			int len;
			while (*p == ' ')
				p++;
			len = (int)strcspn(p, " \n");
			if (len > 0 && len < 32) {
				memcpy(names[n], p, (size_t)len);
				names[n][len] = 0;
				n++;
			}
			p = strchr(p, '\n');
			if (!p)
				break;
			p++;
		}
		return n;
	}
	if (!group)
		return 0;
	snprintf(head, sizeof(head), "usage: treematch %s ", group);
	p = strstr(help, head);
	if (!p)
		return 0;
	p += strlen(head);
	if (*p == '<') {
		p++;
		while (n < max && *p && *p != '>') {
			int len = (int)strcspn(p, "|>");
			if (len > 0 && len < 32) {
				memcpy(names[n], p, (size_t)len);
				names[n][len] = 0;
				n++;
			}
			p += len;
			if (*p == '|')
				p++;
		}
		return n;
	}
	{
		int len = 0;
		while (p[len] >= 'a' && p[len] <= 'z')
			len++;
		if (len > 0 && len < 32 && (p[len] == ' ' || p[len] == '\n')) {
			memcpy(names[0], p, (size_t)len);
			names[0][len] = 0;
			return 1;
		}
	}
	return 0;
}

/*
 * Check every option in `help` (tokens --long-name and -x) is in the page's
 * section for `name`. Returns the number of problems (each reported).
 */
static int check_options(const char *page, const char *name, const char *help, int report)
{
	const char *from, *to;
	int bad = 0, found = 0;

	if (section(page, name, &from, &to) < 0) {
		if (report)
			cr_log_error("treematch.1 has no section .SS \"treematch %s\"", name);
		return 1;
	}
	for (const char *p = help; *p; p++) {
		char opt[64];
		size_t len;
		if (*p != '-' || (p > help && is_word((unsigned char)p[-1])))
			continue;
		len = 1;
		if (p[1] == '-')
			len = 2;
		if (!isalpha((unsigned char)p[len]))
			continue;
		while (is_word((unsigned char)p[len]) && len < sizeof(opt) - 1)
			len++;
		/* "-x" short options are one letter; longer single-dash words are prose. */
		if (p[1] != '-' && len != 2)
			continue;
		memcpy(opt, p, len);
		opt[len] = 0;
		found++;
		p += len - 1;
		/* Report each option once, even when the help names it twice. */
		if (has_word(help, p + 1 - len, opt))
			continue;
		if (!has_word(from, to, opt)) {
			if (report)
				cr_log_error("treematch %s: option %s (from --help) is not in its "
				             "section of "
				             "treematch.1",
				             name, opt);
			bad++;
		}
	}
	if (found == 0) {
		if (report)
			cr_log_error("treematch %s --help lists no option at all", name);
		bad++;
	}
	return bad;
}

/*
 * Call fn(name, help, ctx) for every command `treematch --help` lists and
 * every command of a group, with its --help text; returns the number of
 * commands whose --help failed (each reported) plus fn's results.
 */
typedef int (*help_fn)(const char *name, const char *help, void *ctx);

static int each_command(help_fn fn, void *ctx)
{
	static char help[MAXHELP], sub[MAXHELP];
	char names[32][32], nested[32][32];
	int n, bad = 0;

	cr_assert_eq(run_cli("--help", NULL, NULL, help, sizeof(help)), 0);
	n = list_commands(help, NULL, names, 32);
	cr_assert_geq(n, 7, "treematch --help lists %d commands:\n%s", n, help);
	for (int i = 0; i < n; i++) {
		int rc = run_cli(names[i], "--help", NULL, help, sizeof(help));
		int nn;
		if (rc != 0) {
			cr_log_error("treematch %s --help exits %d: %s", names[i], rc, help);
			bad++;
			continue;
		}
		nn = list_commands(help, names[i], nested, 32);
		if (nn == 0) {
			bad += fn(names[i], help, ctx);
			continue;
		}
		/* A group: each of its commands. */
		for (int k = 0; k < nn; k++) {
			char full[80];
			rc = run_cli(names[i], nested[k], "--help", sub, sizeof(sub));
			snprintf(full, sizeof(full), "%.31s %.31s", names[i], nested[k]);
			if (rc != 0) {
				cr_log_error("treematch %s --help exits %d: %s", full, rc, sub);
				bad++;
				continue;
			}
			bad += fn(full, sub, ctx);
		}
	}
	return bad;
}

static int check_section(const char *name, const char *help, void *page)
{
	return check_options(page, name, help, 1);
}

Test(manpages, every_cli_option_is_in_treematch_1)
{
	char *page = read_page(PAGE1);
	int bad;

	cr_expect(has_word(page, page + strlen(page), "--version"));
	bad = each_command(check_section, page);
	cr_expect_eq(bad, 0, "%d problems between the CLI and treematch.1 (see above)", bad);
	free(page);
}

/* The rows of treematch(1)'s OPTION GRAMMAR table: "-x, --long<TAB>ARG<TAB>..."
   or "--long<TAB>ARG<TAB>..." (ARG empty: no value; "[X]": optional). */
typedef struct grammar {
	int n;
	char lng[128][32];
	char shrt[128];   /* 0: none */
	char arg[128];    /* 'n' none, 'r' required, 'o' optional */
	int used[128];    /* commands that take it */
	const char *text; /* the section, for the old names */
	const char *end;
} grammar_t;

static void read_grammar(const char *page, grammar_t *g)
{
	const char *p = strstr(page, ".SH \"OPTION GRAMMAR\"");
	const char *end;

	cr_assert_not_null(p, "treematch.1 has no section .SH \"OPTION GRAMMAR\"");
	end = strstr(p + 1, "\n.SH ");
	cr_assert_not_null(end);
	g->n = 0;
	g->text = p;
	g->end = end;
	for (p = strchr(p, '\n'); p && p < end; p = strchr(p + 1, '\n')) {
		const char *l = p + 1, *tab = strchr(l, '\t'), *nl = strchr(l, '\n');
		char s = 0;
		size_t len;

		if (!tab || (nl && tab > nl) || l[0] != '-')
			continue;
		if (l[1] != '-') {
			s = l[1];
			cr_assert_eq(strncmp(l + 2, ", --", 4), 0, "grammar row: %.40s", l);
			l += 4;
		}
		len = (size_t)(tab - l);
		cr_assert(len > 2 && len < 32 && g->n < 128, "grammar row: %.40s", l);
		memcpy(g->lng[g->n], l, len);
		g->lng[g->n][len] = 0;
		g->shrt[g->n] = s;
		g->arg[g->n] = tab[1] == '\t' ? 'n' : tab[1] == '[' ? 'o' : 'r';
		g->used[g->n] = 0;
		for (int i = 0; i < g->n; i++) {
			cr_expect_str_neq(g->lng[i], g->lng[g->n], "%s twice in the table",
			                  g->lng[i]);
			cr_expect(!s || g->shrt[i] != s, "-%c is %s and %s", s, g->lng[i],
			          g->lng[g->n]);
		}
		g->n++;
	}
}

/*
 * A command's own option table (TREEMATCH_OPTION_TABLE=1: one line per long
 * option, "--long<TAB>-x or -<TAB>none|required|optional<TAB>old or
 * nothing"; "-x<TAB>-x<TAB>letter only" for a letter without a long
 * option) against the grammar: every option a row, with the row's letter
 * and argument; an old name said as such in the section. Returns the
 * number of problems, each logged.
 */
/* Problems are logged (Criterion fails a run that logs errors) unless the
   check's own test feeds it mistakes on purpose. */
static int grammar_quiet;
#define SAY(...)                                                                                   \
	do {                                                                                       \
		if (!grammar_quiet)                                                                \
			cr_log_error(__VA_ARGS__);                                                 \
	} while (0)

static int check_table(const char *name, const char *table, grammar_t *g)
{
	int bad = 0;

	for (const char *l = table; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		char lng[64], letter[8], arg[16], old[8] = "";
		int row = -1;

		if (sscanf(l, "%63[^\t]\t%7[^\t]\t%15[^\t\n]\t%7[^\t\n]", lng, letter, arg, old) <
		    3) {
			SAY("treematch %s: option table line '%.40s'", name, l);
			bad++;
			continue;
		}
		if (!strcmp(arg, "letter only")) {
			SAY("treematch %s: %s has no long option", name, lng);
			bad++;
			continue;
		}
		if (!strcmp(old, "old")) {
			char said[96];

			snprintf(said, sizeof(said), "%s is its old name", lng);
			if (!strstr(g->text, said) || strstr(g->text, said) > g->end) {
				SAY("treematch %s: the grammar does not say '%s'", name, said);
				bad++;
			}
			continue;
		}
		for (int i = 0; i < g->n; i++)
			if (!strcmp(g->lng[i], lng))
				row = i;
		if (row < 0) {
			SAY("treematch %s: %s is not in treematch(1)'s OPTION GRAMMAR", name, lng);
			bad++;
			continue;
		}
		g->used[row]++;
		if (letter[1] != g->shrt[row]) {
			SAY("treematch %s: %s%s%s; the grammar says %s%c", name,
			    letter[1] ? letter : "", letter[1] ? ", " : "", lng,
			    g->shrt[row] ? "-" : "long-only", g->shrt[row]);
			bad++;
		}
		if (arg[0] != g->arg[row]) {
			SAY("treematch %s: %s takes %s value; the grammar says %c", name, lng, arg,
			    g->arg[row]);
			bad++;
		}
	}
	return bad;
}

static int check_grammar(const char *name, const char *help, void *ctx)
{
	static char table[MAXHELP];
	char *argv[4] = {CLI, NULL, NULL, NULL}, words[64], *sp;
	int rc;

	(void)help;
	snprintf(words, sizeof(words), "%s", name);
	argv[1] = words;
	if ((sp = strchr(words, ' '))) {
		*sp = 0;
		argv[2] = sp + 1;
	}
	setenv("TREEMATCH_OPTION_TABLE", "1", 1);
	rc = cli_run(argv, NULL, table, NULL, sizeof(table));
	unsetenv("TREEMATCH_OPTION_TABLE");
	if (rc != 0 || !strstr(table, "--help\t-h\tnone")) {
		cr_log_error("treematch %s: no option table (status %d): %.200s", name, rc, table);
		return 1;
	}
	return check_table(name, table, ctx);
}

Test(manpages, one_option_grammar)
{
	char *page = read_page(PAGE1);
	grammar_t g;
	int bad;

	read_grammar(page, &g);
	cr_assert_geq(g.n, 40, "the grammar table has %d rows", g.n);
	bad = each_command(check_grammar, &g);
	for (int i = 0; i < g.n; i++)
		if (!g.used[i]) {
			cr_log_error("%s is in the grammar but no command takes it", g.lng[i]);
			bad++;
		}
	cr_expect_eq(bad, 0, "%d options against treematch(1)'s OPTION GRAMMAR (see above)", bad);
	free(page);
}

/* The check can fail: a letter the grammar does not give, an option it
   does not have, a letter alone, an old name it does not say. */
Test(manpages, one_option_grammar_can_fail)
{
	char *page = read_page(PAGE1);
	grammar_t g;

	read_grammar(page, &g);
	grammar_quiet = 1;
	cr_expect_eq(check_table("x",
	                         "--profile\t-q\trequired\t\n--nosuch\t-\tnone\t\n"
	                         "-Z\t-Z\tletter only\t\n--frobs\t-\tnone\told\n"
	                         "--seed\t-s\tnone\t\n--help\t-h\tnone\t\n",
	                         &g),
	             5);
	free(page);
}

Test(manpages, check_options_catches_an_undocumented_option)
{
	const char *page = ".SH X\n.SS \"treematch draw\"\n\\fB\\-\\-profile\\fR \\fIFILE\\fR\n"
	                   "\\-o FILE\n.SS \"treematch map\"\n\\-\\-mapper\n";
	char *copy = strdup(page), *norm;
	FILE *f;
	char path[TM_TMP_MAX];
	int fd = mkstemp(tm_tmpname(path, sizeof(path), "test_manpages.XXXXXX"));

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	fputs(copy, f);
	fclose(f);
	norm = read_page(path);
	unlink(path);
	cr_expect_eq(check_options(norm, "draw", "  -o FILE\n  --profile FILE\n", 0), 0);
	/* --mapper is documented, but under map, not draw. */
	cr_expect_eq(check_options(norm, "draw", "  --profile FILE\n  --mapper NAME\n", 0), 1);
	/* --profiles is not --profile. */
	cr_expect_eq(check_options(norm, "draw", "  --profiles\n", 0), 1);
	cr_expect_eq(check_options(norm, "layout", "  --x\n", 0), 1);
	cr_expect_eq(check_options(norm, "draw", "no options here\n", 0), 1);
	free(norm);
	free(copy);
}

Test(manpages, nested_commands_are_found)
{
	char names[8][32];

	cr_expect_eq(list_commands("usage: treematch profile <convert|check|stats> [options]\n",
	                           "profile", names, 8),
	             3);
	cr_expect_str_eq(names[2], "stats");
	cr_expect_eq(
	    list_commands("usage: treematch topology show [--xml FILE]\n", "topology", names, 8),
	    1);
	cr_expect_str_eq(names[0], "show");
	cr_expect_eq(list_commands("usage: treematch draw --profile FILE\n", "draw", names, 8), 0);
	cr_expect_eq(
	    list_commands("usage: x\n\ncommands:\n  map  m\n  eval  e\n\nmore\n", NULL, names, 8),
	    2);
	cr_expect_str_eq(names[1], "eval");
}

/*
 * The font macros that alternate (.BR, .RB, .BI, .IB, .IR, .RI) join their
 * arguments without a space: two plain words in a row are prose given to
 * the macro by mistake ("treematch map;thesameinput..."). Returns how many
 * such lines the page has, printing each.
 */
static int joined_words(const char *path, int say)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int bad = 0, no = 0;

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 3, prev[64] = "";

		no++;
		if (line[0] != '.' || !strchr("BRI", line[1]) || !strchr("BRI", line[2]) ||
		    line[1] == line[2] || (line[3] != ' ' && line[3] != '\t'))
			continue;
		while (*p) {
			char word[64];
			size_t n = 0;
			int quoted = 0, alpha = 1;

			while (*p == ' ' || *p == '\t' || *p == '\n')
				p++;
			if (!*p)
				break;
			if (*p == '"') {
				quoted = 1;
				for (p++; *p && *p != '"'; p++)
					;
				p += *p == '"';
			} else {
				for (; *p && *p != ' ' && *p != '\t' && *p != '\n'; p++) {
					if (!isalpha((unsigned char)*p))
						alpha = 0;
					if (n + 1 < sizeof(word))
						word[n++] = *p;
				}
			}
			word[n] = '\0';
			if (!quoted && alpha && n >= 2) {
				if (prev[0]) {
					if (say)
						fprintf(stderr,
						        "%s:%d: '%s' and '%s' run together: %s",
						        path, no, prev, word, line);
					bad++;
					break;
				}
				snprintf(prev, sizeof(prev), "%s", word);
			} else {
				prev[0] = '\0';
			}
		}
	}
	fclose(f);
	return bad;
}

Test(manpages, no_prose_in_alternating_font_macros)
{
	static const char *const pages[] = {
	    PAGE1,
	    TMATCH_SRCDIR "/cli/treematch-srun.1",
	    TMATCH_SRCDIR "/spank/treematch.8",
	    TMATCH_SRCDIR "/profile/treematch-profile.5",
	};
	char path[256];
	FILE *f;

	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		cr_expect_eq(joined_words(pages[i], 1), 0, "%s", pages[i]);
	/* the check can fail */
	snprintf(path, sizeof(path), "/tmp/test_cli_manpages_XXXXXX");
	{
		int fd = mkstemp(path);

		cr_assert_geq(fd, 0);
		f = fdopen(fd, "w");
	}
	fputs(".BR \"treematch map\" ; the same inputs and seed\n.BR auto \" (default), \" "
	      "greedy\n",
	      f);
	fclose(f);
	cr_expect_eq(joined_words(path, 0), 1);
	unlink(path);
}
