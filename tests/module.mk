# SPDX-License-Identifier: BSD-3-Clause
# tests/: what is not one module's: the fuzz harnesses (tests/fuzz/) and their
# replay in `make check`. Unit tests are listed by the module they test.
CHECK_TARGETS += fuzz-replay check-layers

# Every #include of another module's header is an arrow of HACKING.md's
# table (read from HACKING.md itself), and the check can fail: its own test
# plants forbidden includes in a copy of the tree.
.PHONY: check-layers
check-layers:
	@if sh tests/check_layers.sh . && sh tests/test_check_layers.sh; then \
	    BUILDDIR=$(abspath $(B)) sh tests/summary.sh add check-layers 1 0; \
	else BUILDDIR=$(abspath $(B)) sh tests/summary.sh add check-layers 0 1; exit 1; fi

# ---------------------------------------------------------------------------
# Fuzzing the profile loader (profile/), the compiled profile's two readers
# (profile/compiled.c) and the option grammar (conf/config.c).
#
#   make fuzz                       build the libFuzzer harness (clang) and run it
#                                   for FUZZ_TIME seconds over tests/fuzz/corpus
#   make fuzz FUZZ_RUNS=10000000    run that many inputs instead
#   make fuzz-replay                replay corpus + regressions with $(CC), no
#                                   libFuzzer (part of `make check`)
# New inputs go to $(B)/fuzz/corpus (seeded from the committed corpus); a crash
# is written as $(B)/fuzz/crash-*: copy it into tests/fuzz/regressions/.

FUZZ_CC     ?= clang
FUZZ_TIME   ?= 60
FUZZ_RUNS   ?= -1
FUZZ_SRCS   := tests/fuzz/fuzz_profile.c $(wildcard profile/*.c) $(wildcard treematch/*.c)
FUZZ_BIN    := $(B)/fuzz/fuzz_profile
REPLAY_BIN  := $(B)/fuzz/replay_profile
FUZZ_CONFIG_SRCS := tests/fuzz/fuzz_config.c conf/config.c $(wildcard treematch/*.c)
FUZZ_CONFIG_BIN  := $(B)/fuzz/fuzz_config
REPLAY_CONFIG_BIN := $(B)/fuzz/replay_config

$(FUZZ_BIN): $(FUZZ_SRCS) $(wildcard profile/*.h) treematch/treematch.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -D_GNU_SOURCE -I. $(YAML_CFLAGS) -g -O1 -fno-omit-frame-pointer \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -o $@ $(FUZZ_SRCS) $(YAML_LIBS) $(STORE_LIBS) $(XXHASH_LIBS) -lmetis -lm

FUZZ_COMPILED_SRCS := tests/fuzz/fuzz_compiled.c $(wildcard profile/*.c) $(wildcard treematch/*.c)
FUZZ_COMPILED_BIN  := $(B)/fuzz/fuzz_compiled
REPLAY_COMPILED_BIN := $(B)/fuzz/replay_compiled

$(FUZZ_COMPILED_BIN): $(FUZZ_COMPILED_SRCS) $(wildcard profile/*.h) treematch/treematch.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -D_GNU_SOURCE -I. $(YAML_CFLAGS) -g -O1 -fno-omit-frame-pointer \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -o $@ $(FUZZ_COMPILED_SRCS) $(YAML_LIBS) $(STORE_LIBS) $(XXHASH_LIBS) -lmetis -lm

$(REPLAY_COMPILED_BIN): tests/fuzz/replay.c tests/fuzz/fuzz_compiled.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ tests/fuzz/replay.c tests/fuzz/fuzz_compiled.c \
	    $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS)

$(FUZZ_CONFIG_BIN): $(FUZZ_CONFIG_SRCS) conf/config.h treematch/treematch.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -D_GNU_SOURCE -I. $(YAML_CFLAGS) -g -O1 -fno-omit-frame-pointer \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -o $@ $(FUZZ_CONFIG_SRCS) $(YAML_LIBS) $(XXHASH_LIBS) -lmetis -lm

# The root side's reading of the plugin helper's result (placement/helper.c)
# and the other text readers (matrix files, topology.conf, hostlists; the
# trace, machine description and prediction of `treematch predict`; the
# network: topology.yaml, topology.conf's kinds, slurm.conf's Topology=).
FUZZ_HW_SRCS := $(wildcard placement/*.c) $(wildcard conf/*.c) $(wildcard affinity/*.c) $(wildcard profile/*.c) \
                profiler/mpiabi.c profiler/launch.c \
                $(wildcard treematch/*.c)
FUZZ_HELPER_BIN  := $(B)/fuzz/fuzz_helper
FUZZ_READERS_BIN := $(B)/fuzz/fuzz_readers
FUZZ_SPECS_BIN   := $(B)/fuzz/fuzz_specs
FUZZ_PLAN_BIN    := $(B)/fuzz/fuzz_plan
FUZZ_PREDICT_BIN := $(B)/fuzz/fuzz_predict
FUZZ_GPU_BIN     := $(B)/fuzz/fuzz_gpu
FUZZ_TOPOLOGY_BIN := $(B)/fuzz/fuzz_topology
REPLAY_HELPER_BIN  := $(B)/fuzz/replay_helper
REPLAY_READERS_BIN := $(B)/fuzz/replay_readers
REPLAY_SPECS_BIN   := $(B)/fuzz/replay_specs
REPLAY_PLAN_BIN    := $(B)/fuzz/replay_plan
REPLAY_PREDICT_BIN := $(B)/fuzz/replay_predict
REPLAY_GPU_BIN     := $(B)/fuzz/replay_gpu
REPLAY_TOPOLOGY_BIN := $(B)/fuzz/replay_topology

$(FUZZ_HELPER_BIN) $(FUZZ_READERS_BIN) $(FUZZ_SPECS_BIN) $(FUZZ_PLAN_BIN) $(FUZZ_PREDICT_BIN) $(FUZZ_GPU_BIN) \
$(FUZZ_TOPOLOGY_BIN): $(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_HW_SRCS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -D_GNU_SOURCE -DTMATCH_VERSION=\"$(VERSION)\" -I. $(HWLOC_CFLAGS) $(YAML_CFLAGS) \
	    -g -O1 -fno-omit-frame-pointer \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -o $@ $< $(FUZZ_HW_SRCS) $(HWLOC_LIBS) $(YAML_LIBS) $(SECCOMP_LIBS) $(STORE_LIBS) $(XXHASH_LIBS) -lmetis -lm

$(REPLAY_HELPER_BIN) $(REPLAY_READERS_BIN) $(REPLAY_SPECS_BIN) $(REPLAY_PLAN_BIN) $(REPLAY_PREDICT_BIN) $(REPLAY_GPU_BIN) \
$(REPLAY_TOPOLOGY_BIN): $(B)/fuzz/replay_%: tests/fuzz/replay.c tests/fuzz/fuzz_%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ tests/fuzz/replay.c tests/fuzz/fuzz_$*.c \
	    $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS)

# hwloc's own leaks on malformed XML (tests/fuzz/lsan.supp says which)
export LSAN_OPTIONS := suppressions=$(CURDIR)/tests/fuzz/lsan.supp

fuzz: $(FUZZ_BIN) $(FUZZ_CONFIG_BIN) $(FUZZ_COMPILED_BIN) $(FUZZ_HELPER_BIN) $(FUZZ_READERS_BIN) \
      $(FUZZ_SPECS_BIN) $(FUZZ_PLAN_BIN) $(FUZZ_PREDICT_BIN) $(FUZZ_GPU_BIN) $(FUZZ_TOPOLOGY_BIN)
	@mkdir -p $(B)/fuzz/corpus $(B)/fuzz/config-corpus
	cp -n tests/fuzz/corpus/* $(B)/fuzz/corpus/ 2>/dev/null || true
	cp -n tests/fuzz/config-corpus/* $(B)/fuzz/config-corpus/ 2>/dev/null || true
	$(FUZZ_BIN) -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=$(B)/fuzz/ -max_total_time=$(if $(filter -1,$(FUZZ_RUNS)),$(FUZZ_TIME),0) \
	    -runs=$(FUZZ_RUNS) $(B)/fuzz/corpus tests/fuzz/regressions
	$(FUZZ_CONFIG_BIN) -max_len=1024 -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=$(B)/fuzz/config- \
	    -max_total_time=$(if $(filter -1,$(FUZZ_RUNS)),$(FUZZ_TIME),0) \
	    -runs=$(FUZZ_RUNS) $(B)/fuzz/config-corpus
	@mkdir -p $(B)/fuzz/compiled-corpus
	cp -n tests/fuzz/compiled-corpus/* $(B)/fuzz/compiled-corpus/ 2>/dev/null || true
	$(FUZZ_COMPILED_BIN) -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=$(B)/fuzz/compiled- \
	    -max_total_time=$(if $(filter -1,$(FUZZ_RUNS)),$(FUZZ_TIME),0) \
	    -runs=$(FUZZ_RUNS) $(B)/fuzz/compiled-corpus
	@set -e; for h in helper readers specs plan predict gpu topology; do \
	    mkdir -p $(B)/fuzz/$$h-corpus; \
	    cp -n tests/fuzz/$$h-corpus/* $(B)/fuzz/$$h-corpus/ 2>/dev/null || true; \
	    $(B)/fuzz/fuzz_$$h -max_len=8192 -timeout=60 -rss_limit_mb=2048 \
	        -artifact_prefix=$(B)/fuzz/$$h- \
	        -max_total_time=$(if $(filter -1,$(FUZZ_RUNS)),$(FUZZ_TIME),0) \
	        -runs=$(FUZZ_RUNS) $(B)/fuzz/$$h-corpus; \
	done

$(REPLAY_BIN): tests/fuzz/replay.c tests/fuzz/fuzz_profile.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ tests/fuzz/replay.c tests/fuzz/fuzz_profile.c \
	    $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS)

$(REPLAY_CONFIG_BIN): tests/fuzz/replay.c tests/fuzz/fuzz_config.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ tests/fuzz/replay.c tests/fuzz/fuzz_config.c \
	    $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS)

fuzz-replay: $(REPLAY_BIN) $(REPLAY_CONFIG_BIN) $(REPLAY_COMPILED_BIN) $(REPLAY_HELPER_BIN) \
             $(REPLAY_READERS_BIN) $(REPLAY_SPECS_BIN) $(REPLAY_PLAN_BIN) $(REPLAY_PREDICT_BIN) \
             $(REPLAY_GPU_BIN) \
             $(REPLAY_TOPOLOGY_BIN)
	@if $(REPLAY_BIN) tests/fuzz/corpus tests/fuzz/regressions tests/fixtures/profile/valid \
	    tests/fixtures/profile/invalid tests/fuzz/compiled-corpus && \
	    $(REPLAY_CONFIG_BIN) tests/fuzz/config-corpus && \
	    $(REPLAY_COMPILED_BIN) tests/fuzz/compiled-corpus && \
	    $(REPLAY_HELPER_BIN) tests/fuzz/helper-corpus && \
	    $(REPLAY_READERS_BIN) tests/fuzz/readers-corpus && \
	    $(REPLAY_SPECS_BIN) tests/fuzz/specs-corpus && \
	    $(REPLAY_PLAN_BIN) tests/fuzz/plan-corpus && \
	    $(REPLAY_PREDICT_BIN) tests/fuzz/predict-corpus && \
	    $(REPLAY_GPU_BIN) tests/fuzz/gpu-corpus && \
	    $(REPLAY_TOPOLOGY_BIN) tests/fuzz/topology-corpus; then \
	    BUILDDIR=$(abspath $(B)) sh tests/summary.sh add fuzz-replay 1 0; \
	else BUILDDIR=$(abspath $(B)) sh tests/summary.sh add fuzz-replay 0 1; fi

.PHONY: fuzz-replay

