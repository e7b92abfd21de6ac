# SPDX-License-Identifier: BSD-3-Clause
# bench/: `make bench` - our mappers and Scotch side by side (see bench/README.md).
#
#   make bench                       standard set (< 15 min on 2 cores)
#   make bench BENCH_FULL=1          + 1,048,576-rank stencil3d (default mapper)
#   make bench BENCH_REPS=1 BENCH_ARGS="--sizes 64,256 --no-odd"
#
# The tools are built only here, never by `make all`. The table goes to
# $(B)/bench/RESULTS.md (and stdout); bench/RESULTS.md is the committed copy.

BENCH_REPS   ?= 3
BENCH_FULL   ?= 0
BENCH_ARGS   ?=
BENCH_OUT    ?= $(B)/bench/RESULTS.md
SCOTCH_INC   := $(wildcard /usr/include/scotch/scotch.h)
SCOTCH_CFLAGS := -I/usr/include/scotch
SCOTCH_LIBS  := -lscotch -lscotcherr

BENCH_TOOLS  := $(B)/bench/bench $(B)/bench/gen $(B)/bench/anneal $(B)/bench/metis_graph
ifneq ($(SCOTCH_INC),)
BENCH_TOOLS  += $(B)/bench/scotch_map
endif

BENCH_TARGETS += bench-tools bench-run bench-layout
.PHONY: bench-tools bench-run bench-layout bench-headroom bench-scale

bench-tools: $(BENCH_TOOLS)

$(B)/bench/gen: bench/gen.c bench/patterns.c bench/patterns.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ bench/gen.c bench/patterns.c \
	    $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS)

$(B)/bench/metis_graph: bench/metis_graph.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ bench/metis_graph.c $(LIB_A) $(ALL_LDFLAGS) \
	    $(LIB_DEPLIBS)

$(B)/bench/scotch_map: bench/scotch_map.c bench/mtxread.c bench/mtxread.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(SCOTCH_CFLAGS) $(ALL_CFLAGS) -o $@ bench/scotch_map.c \
	    bench/mtxread.c $(LIB_A) $(ALL_LDFLAGS) $(SCOTCH_LIBS) $(LIB_DEPLIBS)

$(B)/bench/anneal: bench/anneal.c treematch/treematch.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ bench/anneal.c $(LIB_A) $(ALL_LDFLAGS) \
	    $(LIB_DEPLIBS) -lm

$(B)/bench/bench: bench/bench.c bench/patterns.c bench/mtxread.c bench/patterns.h \
                  bench/mtxread.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(if $(SCOTCH_INC),$(SCOTCH_CFLAGS) -DBENCH_HAVE_SCOTCH_H) \
	    $(ALL_CFLAGS) -o $@ bench/bench.c bench/patterns.c bench/mtxread.c \
	    $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS)

# Runs after `all` and the tools (make bench = all + BENCH_TARGETS in order).
bench-run: bench-tools $(CLI_BIN)
	$(B)/bench/bench --treematch $(CLI_BIN) --scotch $(B)/bench/scotch_map \
	    --workdir $(B)/bench/work --reps $(BENCH_REPS) \
	    $(if $(filter 1,$(BENCH_FULL)),--full) --out $(BENCH_OUT) \
	    --command "make $(or $(MAKECMDGOALS),bench) BUILDDIR=$(B) BENCH_REPS=$(BENCH_REPS) BENCH_FULL=$(BENCH_FULL)$(if $(BENCH_ARGS), BENCH_ARGS='$(BENCH_ARGS)')" \
	    $(BENCH_ARGS)
	@echo "bench: table written to $(BENCH_OUT)"

# Issue 3: how far the default mapper is from what a long annealing finds
# (bench/headroom-results.md; not part of `make bench`: several minutes).
bench-headroom: bench-tools $(CLI_BIN)
	sh bench/headroom.sh $(B) $(B)/bench/headroom-results.md

# Issue 7: treematch layout vs block/cyclic on 8 switches x 16 nodes x 64 cores.
bench-layout: bench-tools $(CLI_BIN)
	sh bench/layout.sh $(B) $(B)/bench/layout-results.md

# Issue 18: 1,048,576 ranks - one node's plan, the whole step's layout and
# the map of the whole profile, each a whole process, median of SCALE_REPS
# (default 5; several minutes). Results in bench/results/scale.md.
bench-scale: bench-tools $(CLI_BIN)
	sh bench/scale.sh $(abspath $(B)) $(or $(SCALE_REPS),5) bench/results/scale.md

# Issue 7 (treematch layout), owned with bench/: the CLI's own test (the
# layout's decisions are tested with placement/, test_placement_layout.c).
TEST_SRCS += tests/unit/test_layout_cli.c

# The launcher of issue 7 (srun with a layout), installed beside the CLI.
MAN_PAGES         += cli/treematch-srun.1
INSTALL_TARGETS   += install-treematch-srun
UNINSTALL_TARGETS += uninstall-treematch-srun
.PHONY: install-treematch-srun uninstall-treematch-srun
# cli_filter.lua (plain srun --treematch gets the layout) is the admin's
# to copy beside slurm.conf: a data file, not documentation (images that
# leave out /usr/share/doc still have it).
install-treematch-srun:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/slurm-treematch
	install -m 0755 cli/treematch-srun $(DESTDIR)$(BINDIR)/treematch-srun
	install -m 0644 cli/cli_filter.lua $(DESTDIR)$(DATADIR)/slurm-treematch/cli_filter.lua

uninstall-treematch-srun:
	rm -f $(DESTDIR)$(BINDIR)/treematch-srun
	rm -f $(DESTDIR)$(DATADIR)/slurm-treematch/cli_filter.lua
	-rmdir $(DESTDIR)$(DATADIR)/slurm-treematch 2>/dev/null

# Issue 7 end to end: the 4-node, 2-switch cluster (needs root), in make check.
CHECK_TARGETS += e2e-layout
.PHONY: e2e-layout
e2e-layout: all
	BUILDDIR=$(abspath $(B)) SRCDIR=$(CURDIR) sh tests/e2e/test_layout.sh

# The stencils' lower bound (bench/patterns.c) has a unit test of its own:
# it links the bench's pattern code next to the library.
TEST_SRCS += tests/unit/test_bench_bound.c
$(B)/tests/unit/test_bench_bound: tests/unit/test_bench_bound.c bench/patterns.c bench/patterns.h \
                                  treematch/treematch.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(CRIT_CFLAGS) $(ALL_CFLAGS) -fvisibility=default \
	    -o $@ $< bench/patterns.c $(LIB_A) $(ALL_LDFLAGS) $(CRIT_LIBS) \
	    $(LIB_DEPLIBS) -lm

# Predicted run times under each placement: applications traced here and
# replayed by SimGrid (bench/predict.sh, issue 19); needs libsimgrid-dev.
BENCH_TARGETS += bench-predict
.PHONY: bench-predict
bench-predict: all
	@mkdir -p $(B)/bench
	BUILDDIR=$(abspath $(B)) SRCDIR=$(CURDIR) sh bench/predict.sh | tee $(B)/bench/predict.md

# Whether a recording's compute repeats on a loaded machine: the halo, the
# collectives-only program and ScaLAPACK's LU recorded three times as
# measured and three times as the recorder writes it (bench/predict_repeat.sh,
# issue 37). Not in `make bench`: bench-predict gives the spreads too.
.PHONY: bench-predict-repeat
bench-predict-repeat: all
	@mkdir -p $(B)/bench
	BUILDDIR=$(abspath $(B)) SRCDIR=$(CURDIR) sh bench/predict_repeat.sh | \
	    tee $(B)/bench/predict-repeat.md

# How far the predictions can be trusted: the same runs predicted and
# measured on the local Slurm cluster (bench/predict_real.sh, issue 19);
# needs root, MPICH and libsimgrid-dev. Not in `make bench`: it starts a
# cluster.
.PHONY: bench-predict-real
bench-predict-real: all
	@mkdir -p $(B)/bench
	BUILDDIR=$(abspath $(B)) SRCDIR=$(CURDIR) sh bench/predict_real.sh | \
	    tee $(B)/bench/predict-real.md

# Issue 21 and 39: the default mapper against the public process mappers
# (VieM, SharedMap, KaHIP's mapping and its integrated mapping), all scored
# by our evaluator. Each peer is a binary built by hand outside the
# repository, given by path: VIEM=, SHAREDMAP=, KAFFPA=, IPM= (one not
# given is left out with a line; bench/README.md names their repositories,
# commits and options). Not in `make bench`: it takes about an hour.
.PHONY: bench-peers
bench-peers: bench-tools $(CLI_BIN)
	VIEM='$(VIEM)' SHAREDMAP='$(SHAREDMAP)' KAFFPA='$(KAFFPA)' IPM='$(IPM)' \
	    sh bench/peers.sh $(abspath $(B)) $(B)/bench/peers.md

# Issue 21's two VieM figures, measured on the bench's instances without
# VieM: the default, search budgets and a long annealing (about 5 minutes).
.PHONY: bench-viem-figures
bench-viem-figures: bench-tools $(CLI_BIN)
	sh bench/viem_figures.sh $(abspath $(B)) bench/results/viem-figures.md

# Issue 21's node-size target: auto on <= 256 ranks as a whole process.
.PHONY: bench-node
bench-node: bench-tools $(CLI_BIN)
	sh bench/node_time.sh $(abspath $(B)) $(or $(NODE_REPS),5) bench/results/node-time.md

# Issue 36: GPU steps - the node's whole work (tree with devices, the step's
# GPUs, the decision) at 8 GPUs and 128 ranks against 50 ms, and the
# targets measured on every real node of ../shared/topologies. Results in
# bench/results/gpu-place.md.
.PHONY: bench-gpu
$(B)/bench/gpu_place: bench/gpu_place.c bench/patterns.c bench/patterns.h tests/unit/gpu_xml.h \
                      $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) -DTMATCH_SRCDIR=\"$(CURDIR)\" $(ALL_CFLAGS) -o $@ bench/gpu_place.c \
	    bench/patterns.c $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS) -lm
bench-gpu: $(B)/bench/gpu_place
	@mkdir -p bench/results
	$(B)/bench/gpu_place --reps $(or $(GPU_REPS),11) --out bench/results/gpu-place.md
	@cat bench/results/gpu-place.md
