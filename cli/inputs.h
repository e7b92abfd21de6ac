/* SPDX-License-Identifier: BSD-3-Clause */
/* inputs.h - --topology SPEC and --profile FILE, parsed once for all subcommands. */
#ifndef TMATCH_CLI_INPUTS_H
#define TMATCH_CLI_INPUTS_H

#include "treematch/treematch.h"

#include <stdio.h>

/* err must not be NULL. Returns NULL with err filled on failure. */
tmatch_topo_t *tmatch_cli_load_topology(const char *spec, tmatch_error_t *err);
tmatch_comm_t *tmatch_cli_load_profile(const char *path, tmatch_error_t *err);

#endif
