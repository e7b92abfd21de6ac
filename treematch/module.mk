# SPDX-License-Identifier: BSD-3-Clause
# treematch/: the mapping core (no Slurm, no hwloc).
LIB_SRCS    += $(wildcard treematch/*.c)
LIB_HEADERS += treematch/treematch.h
LIB_DEPLIBS += -lmetis
TEST_SRCS   += tests/unit/test_treematch_mappers.c
