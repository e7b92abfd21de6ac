# SPDX-License-Identifier: BSD-3-Clause
# placement/: from a profile, an allocation and the site's policy to where
# each task runs: the policy grammar (config.c) and the decisions.
LIB_SRCS    += $(wildcard placement/*.c)
LIB_HEADERS += placement/config.h
TEST_SRCS   += $(wildcard tests/unit/test_placement_*.c)
