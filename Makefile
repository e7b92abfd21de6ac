# SPDX-License-Identifier: BSD-3-Clause
#
# slurm-treematch top-level build.
#
# Every module contributes through its own fragment, <module>/module.mk, which
# appends to the variables below; this file only holds the common rules.
# Builds are out of tree: BUILDDIR (default build/) holds every object and
# binary, so several builds (plain, SANITIZE=1, a developer's scratch) can live
# side by side.
#
#   make                     library, CLI, plugin, profiler
#   make check               unit tests, fixture replays, end-to-end tests
#   make check SANITIZE=1    the same under AddressSanitizer + UBSan
#   make WERROR=1            warnings are errors (CI)
#   make install DESTDIR=... PREFIX=... LIBDIR=... SLURM_PLUGINDIR=...
#   make SLURM_PREFIX=/opt/slurm  build against a Slurm that is not the
#                            distribution's (its include/slurm/*.h); else
#                            pkg-config's `slurm` module, else /usr/include

VERSION      := 0.1.0
SOVERSION    := 0

PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
MANDIR       ?= $(PREFIX)/share/man
DATADIR      ?= $(PREFIX)/share
SYSCONFDIR   ?= /etc
SLURM_PLUGINDIR ?= $(LIBDIR)/slurm
LIBEXECDIR   ?= $(PREFIX)/libexec
DESTDIR      ?=

BUILDDIR     ?= build
B            := $(BUILDDIR)

CC           ?= cc
PKG_CONFIG   ?= pkg-config
CFLAGS       ?= -O2 -g
WARN         := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes \
                -Wmissing-prototypes -Wformat=2
ifeq ($(WERROR),1)
WARN         += -Werror
endif
ifeq ($(SANITIZE),1)
SAN_FLAGS    := -fsanitize=address,undefined -fno-omit-frame-pointer \
                -fno-sanitize-recover=undefined
endif

HWLOC_CFLAGS := $(shell $(PKG_CONFIG) --cflags hwloc 2>/dev/null)
HWLOC_LIBS   := $(shell $(PKG_CONFIG) --libs hwloc 2>/dev/null || echo -lhwloc)
YAML_CFLAGS  := $(shell $(PKG_CONFIG) --cflags yaml-0.1 2>/dev/null)
YAML_LIBS    := $(shell $(PKG_CONFIG) --libs yaml-0.1 2>/dev/null || echo -lyaml)
# The learn store's keys (profile/store.c): the ELF build id read through
# libelf (elfutils), SHA-256 from nettle.
ELF_CFLAGS   := $(shell $(PKG_CONFIG) --cflags libelf 2>/dev/null)
ELF_LIBS     := $(shell $(PKG_CONFIG) --libs libelf 2>/dev/null || echo -lelf)
NETTLE_CFLAGS := $(shell $(PKG_CONFIG) --cflags nettle 2>/dev/null)
NETTLE_LIBS  := $(shell $(PKG_CONFIG) --libs nettle 2>/dev/null || echo -lnettle)
STORE_LIBS    = $(ELF_LIBS) $(NETTLE_LIBS)
# The corruption checksums of the binary files (the compiled profile, the step
# plan, the store's entries; treematch/checksum.c): XXH3 from libxxhash.
XXHASH_CFLAGS := $(shell $(PKG_CONFIG) --cflags libxxhash 2>/dev/null)
XXHASH_LIBS  := $(shell $(PKG_CONFIG) --libs libxxhash 2>/dev/null || echo -lxxhash)
# The helper's system-call filter (placement/sandbox.c), for every architecture.
SECCOMP_CFLAGS := $(shell $(PKG_CONFIG) --cflags libseccomp 2>/dev/null)
SECCOMP_LIBS := $(shell $(PKG_CONFIG) --libs libseccomp 2>/dev/null || echo -lseccomp)
# The Slurm the plugin is built against, and so the only one that will load
# it (slurmd and srun refuse a plugin of another release): SchedMD's
# packages and source installs ship slurm.pc; SLURM_PREFIX overrides.
ifneq ($(SLURM_PREFIX),)
SLURM_CFLAGS := -I$(SLURM_PREFIX)/include
else
SLURM_CFLAGS := $(shell $(PKG_CONFIG) --cflags slurm 2>/dev/null)
endif
CRIT_CFLAGS  := $(shell $(PKG_CONFIG) --cflags criterion 2>/dev/null)
CRIT_LIBS    := $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null || echo -lcriterion)

# Flags every object gets. Library objects are position independent so the
# same archive serves the shared library, the plugin and the CLI.
ALL_CPPFLAGS := -D_GNU_SOURCE -DTMATCH_VERSION=\"$(VERSION)\" -I. \
                $(HWLOC_CFLAGS) $(YAML_CFLAGS) $(ELF_CFLAGS) $(NETTLE_CFLAGS) $(XXHASH_CFLAGS) $(SECCOMP_CFLAGS) $(SLURM_CFLAGS) \
                $(CPPFLAGS)
ALL_CFLAGS   := $(WARN) $(CFLAGS) $(SAN_FLAGS) -fPIC -fvisibility=hidden
ALL_LDFLAGS  := $(SAN_FLAGS) $(LDFLAGS)
LIB_DEPLIBS  := $(HWLOC_LIBS) $(YAML_LIBS) $(STORE_LIBS) $(XXHASH_LIBS) $(SECCOMP_LIBS) -lm

# Filled in by the module fragments.
LIB_SRCS     :=    # sources of libtreematch (treematch/, profile/, affinity/, conf/, placement/)
LIB_HEADERS  :=    # public headers installed for the -dev package
CLI_SRCS     :=    # sources of the treematch executable
BIN_TARGETS  :=    # further executables to build with `all`
TEST_SRCS    :=    # Criterion unit tests: one binary per file
CHECK_TARGETS :=   # extra check steps (fixture replays, e2e), run in order
INSTALL_TARGETS :=
UNINSTALL_TARGETS :=
MAN_PAGES    :=
BENCH_TARGETS :=
CLEAN_FILES  :=

# What the build produces, named before the module fragments are read: a
# fragment's rules may name any of them as a prerequisite, and make expands
# a rule's prerequisites when it reads the rule (a name defined later would
# be empty there, and a parallel build would race past it). The lists the
# fragments fill in are expanded late (=), when the rules below use them.
LIB_A        := $(B)/libtreematch.a
LIB_SO       := $(B)/libtreematch.so.$(VERSION)
LIB_SONAME   := libtreematch.so.$(SOVERSION)
# In bin/: $(B)/treematch/ already holds the core's objects.
CLI_BIN      := $(B)/bin/treematch
LIB_OBJS      = $(LIB_SRCS:%.c=$(B)/%.o)
CLI_OBJS      = $(CLI_SRCS:%.c=$(B)/%.o)
TEST_BINS     = $(TEST_SRCS:%.c=$(B)/%)

.PHONY: all check check-unit install uninstall clean format format-check lint \
        bench fuzz demo deps
all:

include treematch/module.mk
include profile/module.mk
include affinity/module.mk
include conf/module.mk
include placement/module.mk
include cli/module.mk
-include spank/module.mk
-include profiler/module.mk
-include bench/module.mk
-include tests/module.mk
-include packaging/module.mk

# ---------------------------------------------------------------------------
# The library: a static PIC archive (linked into the plugin, the CLI and the
# tests) and a versioned shared library exporting only TMATCH_API symbols.

all: $(LIB_A) $(LIB_SO) $(CLI_BIN) $(BIN_TARGETS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--no-undefined $(ALL_LDFLAGS) \
	    -o $@ $^ $(LIB_DEPLIBS)
	ln -sf $(notdir $@) $(B)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(B)/libtreematch.so

$(CLI_BIN): $(CLI_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJS) $(LIB_A) $(LIB_DEPLIBS)

# Unit tests see the private headers and link the static archive. They
# format paths of their own temporary directories into fixed buffers and
# assert on what they read back, so gcc 12's guesses of truncation (up to 255
# bytes of a d_name or a path) are not errors there.
$(B)/tests/unit/%: tests/unit/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(CRIT_CFLAGS) $(ALL_CFLAGS) -Wno-format-truncation -fvisibility=default \
	    -DTMATCH_SRCDIR=\"$(CURDIR)\" -DTMATCH_BUILDDIR=\"$(abspath $(B))\" \
	    -MMD -MP -MF $@.d -o $@ $< $(LIB_A) $(ALL_LDFLAGS) $(CRIT_LIBS) $(LIB_DEPLIBS)

# Every test step prints its own result; tests/summary.sh adds them up and
# prints the closing "N passed, N failed" line. The unit tests make their
# files in $(B)/tmp (TMPDIR); tests/tmp_check.sh fails the run when it left
# anything there or in /tmp.
check: all $(TEST_BINS)
	@BUILDDIR=$(abspath $(B)) sh tests/summary.sh begin
	@BUILDDIR=$(abspath $(B)) sh tests/tmp_check.sh begin
	@for t in $(TEST_BINS); do \
	    TMPDIR=$(abspath $(B))/tmp BUILDDIR=$(abspath $(B)) sh tests/summary.sh unit $$t || true; \
	done
	@for s in $(CHECK_TARGETS); do \
	    $(MAKE) --no-print-directory $$s || BUILDDIR=$(abspath $(B)) sh tests/summary.sh fail-step $$s; \
	done
	@BUILDDIR=$(abspath $(B)) sh tests/tmp_check.sh end || true
	@BUILDDIR=$(abspath $(B)) sh tests/summary.sh end

check-unit: all $(TEST_BINS)
	@BUILDDIR=$(abspath $(B)) sh tests/summary.sh begin
	@BUILDDIR=$(abspath $(B)) sh tests/tmp_check.sh begin
	@for t in $(TEST_BINS); do \
	    TMPDIR=$(abspath $(B))/tmp BUILDDIR=$(abspath $(B)) sh tests/summary.sh unit $$t || true; \
	done
	@BUILDDIR=$(abspath $(B)) sh tests/tmp_check.sh end || true
	@BUILDDIR=$(abspath $(B)) sh tests/summary.sh end

install: all $(INSTALL_TARGETS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/treematch
	install -m 0755 $(CLI_BIN) $(DESTDIR)$(BINDIR)/treematch
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIB_SO)) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libtreematch.so
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(LIB_HEADERS) $(DESTDIR)$(INCLUDEDIR)/treematch/

uninstall: $(UNINSTALL_TARGETS)
	rm -f $(DESTDIR)$(BINDIR)/treematch
	rm -f $(DESTDIR)$(LIBDIR)/$(notdir $(LIB_SO)) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	rm -f $(DESTDIR)$(LIBDIR)/libtreematch.so $(DESTDIR)$(LIBDIR)/libtreematch.a
	rm -rf $(DESTDIR)$(INCLUDEDIR)/treematch

# ---------------------------------------------------------------------------
# Housekeeping.

C_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

format:
	clang-format -i $(C_FILES)

format-check:
	clang-format --dry-run --Werror $(C_FILES)

# Every C source the build compiles: library, CLI, plugin and, when an Open
# MPI compiler wrapper gives mpi.h, the recorders. clang-tidy runs one file
# per process, two at a time (2-core CI); xargs fails if any file does.
lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
	    --std=c11 --inline-suppr -D__GNUC__ -I. -j 2 \
	    --suppress=missingIncludeSystem --suppress=normalCheckLevelMaxBranches $(LIB_SRCS) $(CLI_SRCS) $(SPANK_SRCS) \
	    $(RECORD_SRCS)
	mpi=$$($(MPICC_openmpi) --showme:compile 2>/dev/null); \
	srcs="$(LIB_SRCS) $(CLI_SRCS) $(SPANK_SRCS)"; \
	if [ -n "$$mpi" ]; then srcs="$$srcs $(RECORD_SRCS)"; \
	else echo "lint: no $(MPICC_openmpi): $(RECORD_SRCS) not analysed" >&2; fi; \
	printf '%s\n' $$srcs | xargs -P 2 -I{} \
	    clang-tidy --quiet {} -- $(ALL_CPPFLAGS) $$mpi -std=c11

bench: all $(BENCH_TARGETS)

deps:
	sh tests/install-deps.sh

clean:
	rm -rf $(B) $(CLEAN_FILES)

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_BINS:=.d)
