# SPDX-License-Identifier: BSD-3-Clause
# spank/: the SPANK plugin treematch.so (--treematch for srun/sbatch/salloc),
# its man page, the end-to-end tests on a real throwaway Slurm, `make demo`
# and the launch-overhead benchmark.
#
# The plugin links the static archive (hidden symbols) and hwloc/libyaml
# dynamically, never -lslurm (spank_* live in slurmstepd/srun). A version
# script keeps every symbol but Slurm's entry points local.

SPANK_SRCS   := spank/treematch.c spank/stop.c spank/record.c spank/learn.c
SPANK_OBJS   := $(SPANK_SRCS:%.c=$(B)/%.o)

# Slurm 25.05 and later read slurm_spank_init_failure_mode (spank.h declares
# it, slurm_errno.h has ESPANK_JOB_FAILURE): found in the headers the plugin
# is built against, as a compiler would see them.
SPANK_FAILURE_MODE := $(shell printf '\043include <stdint.h>\n\043include <slurm/spank.h>\nint slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;\n' | \
    $(CC) -D_GNU_SOURCE $(SLURM_CFLAGS) $(CPPFLAGS) -x c -fsyntax-only - 2>/dev/null && echo 1)
$(B)/spank/stop.o: ALL_CPPFLAGS += $(if $(SPANK_FAILURE_MODE),-DTMATCH_HAVE_SPANK_FAILURE_MODE)
SPANK_SO     := $(B)/spank/treematch.so

# The helper the plugin's root side starts for each step (placement/helper.c),
# and its path, compiled into the plugin: rewritten only when it changes, so
# that `make install PREFIX=x` builds the plugin that names x's helper.
HELPER_BIN    := $(B)/spank/treematch-helper
HELPER_PATH   := $(LIBEXECDIR)/treematch/treematch-helper
HELPER_STAMP  := $(B)/spank/helper-path

BIN_TARGETS  += $(SPANK_SO) $(HELPER_BIN) $(B)/tests/e2e/whereami
MAN_PAGES    += spank/treematch.8
TEST_SRCS    += tests/unit/test_spank_glue.c
# `treematch map --ranks` against the plugin's node plan (runs the CLI).
TEST_SRCS    += tests/unit/test_cli_map_ranks.c
CHECK_TARGETS += e2e
INSTALL_TARGETS += install-spank
UNINSTALL_TARGETS += uninstall-spank
BENCH_TARGETS += bench-launch

# Entry points must stay visible for Slurm's dlsym; the map hides the rest.
$(SPANK_OBJS): ALL_CFLAGS += -fvisibility=default

$(SPANK_SO): $(SPANK_OBJS) $(LIB_A) spank/treematch.map
	@mkdir -p $(dir $@)
	$(CC) -shared $(ALL_LDFLAGS) -Wl,--version-script=spank/treematch.map \
	    -o $@.tmp $(SPANK_OBJS) $(LIB_A) $(LIB_DEPLIBS)
	@# Slurm's spank_* are the host's; any other symbol left undefined (a
	@# hook renamed on one side) fails the build here, not in slurmstepd.
	@u=$$(nm -D -u $@.tmp | awk '$$2 ~ /^tmatch/ {print $$2}'); \
	if [ -n "$$u" ]; then echo "$@: undefined: $$u" >&2; rm -f $@.tmp; exit 1; fi
	mv -f $@.tmp $@

-include $(SPANK_OBJS:.o=.d) $(B)/spank/helper_main.d

.PHONY: helper-path-force
$(HELPER_STAMP): helper-path-force
	@mkdir -p $(dir $@)
	@echo '$(HELPER_PATH)' >$@.tmp; if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
$(B)/spank/treematch.o: $(HELPER_STAMP)
$(B)/spank/treematch.o: ALL_CPPFLAGS += -DTMATCH_HELPER_PATH=\"$(HELPER_PATH)\"

$(HELPER_BIN): $(B)/spank/helper_main.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(B)/spank/helper_main.o $(LIB_A) $(LIB_DEPLIBS)

# The tests start the build tree's helper (helper=), and a stand-in for a
# helper whose parser runs hostile code.
$(B)/tests/unit/test_placement_helper $(B)/tests/unit/test_spank_glue: $(HELPER_BIN)
$(B)/tests/unit/test_placement_helper: $(B)/tests/unit/hostile_helper
$(B)/tests/unit/hostile_helper: tests/unit/hostile_helper.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB_A) $(ALL_LDFLAGS) $(LIB_DEPLIBS)

# The glue test dlopens the plugin from a binary defining mock spank_*.
$(B)/tests/unit/test_spank_glue: $(SPANK_SO)
$(B)/tests/unit/test_spank_glue: ALL_LDFLAGS += -rdynamic -ldl

# The plugin built so that its init fails in slurmstepd, through the path a
# refused option takes (tests/e2e/run.sh, t_failed_init): what Slurm does
# with the node then, with and without slurm_spank_init_failure_mode.
FAILINIT_SO := $(B)/tests/e2e/failinit.so
$(B)/tests/e2e/failinit.o: spank/treematch.c $(HELPER_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) -DTMATCH_HELPER_PATH=\"$(HELPER_PATH)\" -DTMATCH_TEST_FAIL_INIT \
	    $(ALL_CFLAGS) -fvisibility=default -MMD -MP -MF $(@:.o=.d) -c -o $@ $<
$(FAILINIT_SO): $(B)/tests/e2e/failinit.o $(filter-out $(B)/spank/treematch.o,$(SPANK_OBJS)) \
    $(LIB_A) spank/treematch.map
	$(CC) -shared $(ALL_LDFLAGS) -Wl,--version-script=spank/treematch.map -o $@ \
	    $(filter-out spank/treematch.map,$^) $(LIB_DEPLIBS)
-include $(B)/tests/e2e/failinit.d

# A task that reports where it runs (read back from /proc), and MPI hellos.
$(B)/tests/e2e/whereami: tests/e2e/whereami.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(WARN) $(CFLAGS) -o $@ $<

E2E_ENV = BUILDDIR=$(abspath $(B)) SRCDIR=$(CURDIR)

.PHONY: e2e e2e-cgroup e2e-gpu demo bench-launch install-spank uninstall-spank
e2e: all $(FAILINIT_SO)
	$(E2E_ENV) sh tests/e2e/run.sh

# The plugin under task/cgroup + proctrack/cgroup, where the host allows it.
CHECK_TARGETS += e2e-cgroup
e2e-cgroup: all
	$(E2E_ENV) sh tests/e2e/test_cgroup.sh

# GPU steps (issue 36): a GPU GRES on stand-in devices, with and without
# ConstrainDevices; each task's GPU variables and CPUs read from inside it.
CHECK_TARGETS += e2e-gpu
e2e-gpu: all
	$(E2E_ENV) sh tests/e2e/test_gpu.sh

demo:
	sh tests/install-deps.sh
	$(MAKE) --no-print-directory all
	$(E2E_ENV) sh tests/e2e/demo.sh

bench-launch: all
	$(E2E_ENV) sh bench/launch_overhead.sh

install-spank: $(SPANK_SO) $(HELPER_BIN)
	install -d $(DESTDIR)$(SLURM_PLUGINDIR) $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(LIBEXECDIR)/treematch
	install -m 0755 $(SPANK_SO) $(DESTDIR)$(SLURM_PLUGINDIR)/treematch.so
	install -m 0755 $(HELPER_BIN) $(DESTDIR)$(LIBEXECDIR)/treematch/treematch-helper
	install -m 0644 spank/treematch.8 $(DESTDIR)$(MANDIR)/man8/treematch.8

uninstall-spank:
	rm -f $(DESTDIR)$(SLURM_PLUGINDIR)/treematch.so $(DESTDIR)$(MANDIR)/man8/treematch.8
	rm -f $(DESTDIR)$(LIBEXECDIR)/treematch/treematch-helper
	-rmdir $(DESTDIR)$(LIBEXECDIR)/treematch 2>/dev/null

# The SPANK item types the plugin compiles against (spank_private.h's
# TM_ITEM table) are the ones the spank.h found by the compiler documents.
CHECK_TARGETS += check-spank-items
.PHONY: check-spank-items
check-spank-items:
	@h=$$(printf '#include <slurm/spank.h>\n' | $(CC) $(ALL_CPPFLAGS) -M -E - 2>/dev/null | \
	    tr ' \\' '\n\n' | grep '/slurm/spank\.h$$' | head -n 1); \
	if sh spank/check_items.sh "$$h"; then \
	    BUILDDIR=$(abspath $(B)) sh tests/summary.sh add check-spank-items 1 0; \
	else BUILDDIR=$(abspath $(B)) sh tests/summary.sh add check-spank-items 0 1; fi
