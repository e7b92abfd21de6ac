/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spank_profiles.h - profiles shared by the unit tests of the plugin's
 * per-node planning (test_spank_plan) and of `treematch map --ranks`, which
 * must predict that planning (test_cli_map_ranks).
 */
#ifndef TMATCH_TESTS_SPANK_PROFILES_H
#define TMATCH_TESTS_SPANK_PROFILES_H

/*
 * 8 ranks: i talks to i^4 heavily (pairs across a block split), 4-6 and 5-7
 * less, a light 0-1.
 */
static const char pairs8[] = "format: comm-profile\n"
                             "version: 1\n"
                             "ranks: 8\n"
                             "metrics: [bytes]\n"
                             "directed: false\n"
                             "edges:\n"
                             "  - [0, 4, 1000]\n"
                             "  - [1, 5, 1000]\n"
                             "  - [2, 6, 1000]\n"
                             "  - [3, 7, 1000]\n"
                             "  - [4, 6, 500]\n"
                             "  - [5, 7, 500]\n"
                             "  - [0, 1, 1]\n";

#endif /* TMATCH_TESTS_SPANK_PROFILES_H */
