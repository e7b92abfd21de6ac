/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.h - the writer of the CLI's --json output (cli/json.c). Values go
 * into the object or array last opened: `key` names them in an object and
 * is ignored in an array. The caller checks ferror() once at the end.
 */
#ifndef TMATCH_CLI_JSON_H
#define TMATCH_CLI_JSON_H

#include <stdio.h>

#define TMATCH_CLI_JSON_DEPTH 16

typedef struct tmatch_cli_json {
	FILE *f;
	int depth;
	int array[TMATCH_CLI_JSON_DEPTH]; /* 1: that level is an array */
	int count[TMATCH_CLI_JSON_DEPTH]; /* values written at that level */
} tmatch_cli_json_t;

void tmatch_cli_json_init(tmatch_cli_json_t *j, FILE *f);
/* Open an object or an array (key NULL at the top or in an array). */
void tmatch_cli_json_object(tmatch_cli_json_t *j, const char *key);
void tmatch_cli_json_array(tmatch_cli_json_t *j, const char *key);
/* Close the last one opened; the outermost ends with a newline. */
void tmatch_cli_json_end(tmatch_cli_json_t *j);
/* Values: a NULL string is null, a non-finite number null. */
void tmatch_cli_json_string(tmatch_cli_json_t *j, const char *key, const char *value);
void tmatch_cli_json_int(tmatch_cli_json_t *j, const char *key, long long value);
void tmatch_cli_json_number(tmatch_cli_json_t *j, const char *key, double value);
void tmatch_cli_json_bool(tmatch_cli_json_t *j, const char *key, int value);
void tmatch_cli_json_null(tmatch_cli_json_t *j, const char *key);

#endif /* TMATCH_CLI_JSON_H */
