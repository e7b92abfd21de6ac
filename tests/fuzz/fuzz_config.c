/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_config.c - libFuzzer harness for the option grammar. The user's
 * --treematch=... string crosses the privilege boundary (slurmstepd parses
 * it as root), so it gets the same treatment as the profile loader.
 *
 * The first byte picks the front end (user string, admin string, admin
 * file, plugstack argv split on newlines); the rest is the text. A parse
 * that fails must leave the config untouched and say something; a parse
 * that succeeds is merged with an admin config and formatted.
 */
#include "conf/config.h"
#include "tests/fuzz/fuzz_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tmatch_config_t cfg, before, admin, out;
	tmatch_error_t err;
	char *text, *argv[64];
	int rc = 0, argc = 0;
	char buf[4096];

	if (!(text = fuzz_text(data, size, 8192)))
		return 0;
	tmatch_config_init(&cfg);
	before = cfg;
	err.msg[0] = '\0';
	switch (data[0] & 3) {
	case 0:
		rc = tmatch_config_parse_string(&cfg, text, TMATCH_CONFIG_USER, "u", &err);
		break;
	case 1:
		rc = tmatch_config_parse_string(&cfg, text, TMATCH_CONFIG_ADMIN, "a", &err);
		break;
	case 2:
		rc = tmatch_config_parse_text(&cfg, (const char *)data + 1, size - 1, "f", &err);
		break;
	default:
		for (char *s = text, *save = NULL, *t; argc < 64 && (t = strtok_r(s, "\n", &save));
		     s = NULL)
			argv[argc++] = t;
		rc = tmatch_config_parse_argv(&cfg, argc, argv, "p", &err);
		break;
	}
	if (rc) {
		if (!err.msg[0] || memcmp(&cfg, &before, sizeof(cfg)))
			abort();
	} else {
		char *const adm[] = {"allowed_mappers=greedy:rcm:packed", "max_ranks=1000"};
		tmatch_config_init(&admin);
		if (tmatch_config_parse_argv(&admin, 2, adm, "p", &err))
			abort();
		if (tmatch_config_merge(&admin, &cfg, &out, &err) == 0 && out.max_ranks > 1000)
			abort();
		tmatch_config_format(&cfg, buf, sizeof(buf));
	}
	free(text);
	return 0;
}
