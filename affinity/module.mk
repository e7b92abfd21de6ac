# SPDX-License-Identifier: BSD-3-Clause
# affinity/: hwloc node trees, the network (its builder, network.c; read from
# Slurm's files by conf/), hostlists, the cluster tree, binding.
LIB_SRCS    += $(wildcard affinity/*.c)
LIB_HEADERS += affinity/affinity.h
TEST_SRCS   += $(wildcard tests/unit/test_affinity_*.c)

# `make bench-affinity`: time to build the 128-core node tree from XML
# (target < 20 ms) and a 16-node cluster tree. Part of `make bench`.
BENCH_TARGETS += bench-affinity
.PHONY: bench-affinity
$(B)/bench/affinity_build: bench/affinity_build.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ bench/affinity_build.c $(LIB_A) \
	    $(ALL_LDFLAGS) $(LIB_DEPLIBS)
bench-affinity: $(B)/bench/affinity_build
	$(B)/bench/affinity_build --reps $(or $(AFFINITY_REPS),50)
