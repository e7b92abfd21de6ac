# SPDX-License-Identifier: BSD-3-Clause
# conf/: profile format (libyaml) and the configuration grammar.
LIB_SRCS    += $(wildcard conf/*.c)
LIB_HEADERS += conf/profile.h conf/config.h
MAN_PAGES   += conf/treematch-profile.5
TEST_SRCS   += $(wildcard tests/unit/test_conf_*.c)
CHECK_TARGETS += conf-fuzz-replay

# ---------------------------------------------------------------------------
# Fuzzing the profile loader.
#
#   make fuzz                       build the libFuzzer harness (clang) and run it
#                                   for FUZZ_TIME seconds over conf/fuzz/corpus
#   make fuzz FUZZ_RUNS=10000000    run that many inputs instead
#   make conf-fuzz-replay           replay corpus + regressions with $(CC), no
#                                   libFuzzer (part of `make check`)
# New inputs go to $(B)/fuzz/corpus (seeded from the committed corpus); a crash
# is written as $(B)/fuzz/crash-*: copy it into conf/fuzz/regressions/.

FUZZ_CC     ?= clang
FUZZ_TIME   ?= 60
FUZZ_RUNS   ?= -1
FUZZ_SRCS   := conf/fuzz/fuzz_profile.c conf/edges.c conf/profile.c conf/profile_load.c \
               treematch/comm.c treematch/error.c
FUZZ_BIN    := $(B)/fuzz/fuzz_profile
REPLAY_BIN  := $(B)/fuzz/replay_profile
FUZZ_CONFIG_SRCS := conf/fuzz/fuzz_config.c $(wildcard conf/*.c) $(wildcard treematch/*.c)
FUZZ_CONFIG_BIN  := $(B)/fuzz/fuzz_config
REPLAY_CONFIG_BIN := $(B)/fuzz/replay_config

$(FUZZ_BIN): $(FUZZ_SRCS) $(wildcard conf/*.h) treematch/treematch.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -D_GNU_SOURCE -I. $(YAML_CFLAGS) -g -O1 -fno-omit-frame-pointer \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -o $@ $(FUZZ_SRCS) $(YAML_LIBS) -lm

$(FUZZ_CONFIG_BIN): $(FUZZ_CONFIG_SRCS) $(wildcard conf/*.h) treematch/treematch.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -D_GNU_SOURCE -I. $(YAML_CFLAGS) -g -O1 -fno-omit-frame-pointer \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -o $@ $(FUZZ_CONFIG_SRCS) $(YAML_LIBS) -lmetis -lm

fuzz: $(FUZZ_BIN) $(FUZZ_CONFIG_BIN)
	@mkdir -p $(B)/fuzz/corpus $(B)/fuzz/config-corpus
	cp -n conf/fuzz/corpus/* $(B)/fuzz/corpus/ 2>/dev/null || true
	cp -n conf/fuzz/config-corpus/* $(B)/fuzz/config-corpus/ 2>/dev/null || true
	$(FUZZ_BIN) -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=$(B)/fuzz/ -max_total_time=$(if $(filter -1,$(FUZZ_RUNS)),$(FUZZ_TIME),0) \
	    -runs=$(FUZZ_RUNS) $(B)/fuzz/corpus conf/fuzz/regressions
	$(FUZZ_CONFIG_BIN) -max_len=1024 -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=$(B)/fuzz/config- \
	    -max_total_time=$(if $(filter -1,$(FUZZ_RUNS)),$(FUZZ_TIME),0) \
	    -runs=$(FUZZ_RUNS) $(B)/fuzz/config-corpus

$(REPLAY_BIN): conf/fuzz/replay.c conf/fuzz/fuzz_profile.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ conf/fuzz/replay.c conf/fuzz/fuzz_profile.c \
	    $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS)

$(REPLAY_CONFIG_BIN): conf/fuzz/replay.c conf/fuzz/fuzz_config.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ conf/fuzz/replay.c conf/fuzz/fuzz_config.c \
	    $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS)

conf-fuzz-replay: $(REPLAY_BIN) $(REPLAY_CONFIG_BIN)
	@if $(REPLAY_BIN) conf/fuzz/corpus conf/fuzz/regressions tests/fixtures/conf/valid \
	    tests/fixtures/conf/invalid && $(REPLAY_CONFIG_BIN) conf/fuzz/config-corpus; then \
	    BUILDDIR=$(abspath $(B)) sh tests/summary.sh add conf-fuzz-replay 1 0; \
	else BUILDDIR=$(abspath $(B)) sh tests/summary.sh add conf-fuzz-replay 0 1; fi

.PHONY: conf-fuzz-replay

# ---------------------------------------------------------------------------
# Benchmark: loading a 1,048,576-rank stencil profile (bench/profile_load.sh).

PROFILE_LOAD_BIN := $(B)/bench/profile_load

$(PROFILE_LOAD_BIN): bench/profile_load.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS)

bench-profile-load: $(PROFILE_LOAD_BIN)
	sh bench/profile_load.sh $(abspath $(B))

BENCH_TARGETS += bench-profile-load
.PHONY: bench-profile-load
