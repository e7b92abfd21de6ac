# SPDX-License-Identifier: BSD-3-Clause
# profile/: the comm-profile format (libyaml): loader, writer, the bridge to
# the core's matrix, and the importers of other tools' formats.
LIB_SRCS    += $(wildcard profile/*.c)
LIB_HEADERS += profile/profile.h
MAN_PAGES   += profile/treematch-profile.5
TEST_SRCS   += $(wildcard tests/unit/test_profile_*.c)

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
