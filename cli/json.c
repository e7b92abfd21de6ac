/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.c - the --json output of the CLI: a small streaming writer, two
 * spaces of indentation, keys in the order written, numbers printed the
 * same way every time (byte-identical for the same inputs), non-finite
 * numbers as null, strings escaped (control characters as \u00XX).
 */
#include "cli/json.h"

#include <math.h>
#include <string.h>

void tmatch_cli_json_init(tmatch_cli_json_t *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

static void string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* Before a value: the comma, the newline and indentation, the key. */
static void item(tmatch_cli_json_t *j, const char *key)
{
	if (j->depth > 0) {
		if (j->depth <= TMATCH_CLI_JSON_DEPTH && j->count[j->depth - 1]++)
			fputc(',', j->f);
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	if (key && j->depth > 0 && j->depth <= TMATCH_CLI_JSON_DEPTH && !j->array[j->depth - 1]) {
		string(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_(tmatch_cli_json_t *j, const char *key, int array)
{
	item(j, key);
	fputc(array ? '[' : '{', j->f);
	if (j->depth < TMATCH_CLI_JSON_DEPTH) {
		j->array[j->depth] = array;
		j->count[j->depth] = 0;
	}
	j->depth++;
}

void tmatch_cli_json_object(tmatch_cli_json_t *j, const char *key)
{
	open_(j, key, 0);
}

void tmatch_cli_json_array(tmatch_cli_json_t *j, const char *key)
{
	open_(j, key, 1);
}

void tmatch_cli_json_end(tmatch_cli_json_t *j)
{
	int had;

	if (j->depth == 0)
		return;
	j->depth--;
	had = j->depth < TMATCH_CLI_JSON_DEPTH && j->count[j->depth] > 0;
	if (had) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(j->depth < TMATCH_CLI_JSON_DEPTH && j->array[j->depth] ? ']' : '}', j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void tmatch_cli_json_string(tmatch_cli_json_t *j, const char *key, const char *value)
{
	item(j, key);
	if (value)
		string(j->f, value);
	else
		fputs("null", j->f);
}

void tmatch_cli_json_int(tmatch_cli_json_t *j, const char *key, long long value)
{
	item(j, key);
	fprintf(j->f, "%lld", value);
}

void tmatch_cli_json_number(tmatch_cli_json_t *j, const char *key, double value)
{
	item(j, key);
	if (isfinite(value))
		fprintf(j->f, "%.17g", value);
	else
		fputs("null", j->f);
}

void tmatch_cli_json_bool(tmatch_cli_json_t *j, const char *key, int value)
{
	item(j, key);
	fputs(value ? "true" : "false", j->f);
}

void tmatch_cli_json_null(tmatch_cli_json_t *j, const char *key)
{
	item(j, key);
	fputs("null", j->f);
}
