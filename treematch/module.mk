# SPDX-License-Identifier: BSD-3-Clause
# treematch/: the mapping core (no Slurm, no hwloc).
LIB_SRCS    += $(wildcard treematch/*.c)
LIB_HEADERS += treematch/treematch.h
LIB_DEPLIBS += -lmetis -pthread
TEST_SRCS   += tests/unit/test_treematch_mappers.c
TEST_SRCS   += tests/unit/test_treematch_error.c tests/unit/test_treematch_topo.c \
               tests/unit/test_treematch_comm.c tests/unit/test_treematch_eval.c \
               tests/unit/test_treematch_map.c tests/unit/test_treematch_comm_sub.c \
               tests/unit/test_treematch_intlist.c
