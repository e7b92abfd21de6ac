# SPDX-License-Identifier: BSD-3-Clause
# profiler/: the preloadable recorder, built once per MPI ABI
# (libtreematch-record-openmpi.so with mpicc.openmpi, -mpich.so with
# mpicc.mpich), and the ABI selector (mpiabi.c) that `treematch record` and
# the SPANK option --treematch-record use to pick one by DT_NEEDED.
#
# The recorders are MPI programs' guests: they are never built with the
# sanitizers (an ASan library cannot be preloaded into a program without
# the ASan runtime) and link nothing but the MPI library, libdl and pthread.

MPICC_openmpi  ?= mpicc.openmpi
MPICC_mpich    ?= mpicc.mpich
MPIF90_openmpi ?= mpif90.openmpi
MPIF90_mpich   ?= mpif90.mpich
RECORD_LIBDIR  ?= $(LIBDIR)/treematch

RECORD_ABIS  := openmpi mpich
RECORD_SRCS  := profiler/record_core.c profiler/record_coll.c profiler/record_compute.c \
                profiler/record_trace.c profiler/record_profile.c profiler/record_wrap.c \
                profiler/record_fortran.c
RECORD_LIBS  := $(RECORD_ABIS:%=$(B)/profiler/libtreematch-record-%.so)
RECORD_TESTS := $(foreach a,$(RECORD_ABIS),$(B)/tests/mpi/pattern.$(a) \
                  $(B)/tests/mpi/pattern_f.$(a) $(B)/tests/mpi/pattern_f08.$(a) \
                  $(B)/tests/mpi/pattern_mt.$(a))

BIN_TARGETS  += $(RECORD_LIBS)
# The Slurm-free launch side (ABI selector, recorder lookup, environment) is
# in the library, shared by `treematch record` and --treematch-record.
LIB_SRCS     += profiler/mpiabi.c profiler/launch.c
TEST_SRCS    += tests/unit/test_profiler_mpiabi.c tests/unit/test_profiler_launch.c
CHECK_TARGETS += check-record check-record-srun e2e-nohang
INSTALL_TARGETS += install-profiler
UNINSTALL_TARGETS += uninstall-profiler
BENCH_TARGETS += bench-record bench-learn

# Where the CLI and the plugin look for the recorders once installed
# (profiler/launch.c); the stamp changes (and it is rebuilt) whenever
# RECORD_LIBDIR does.
RECORD_STAMP := $(B)/profiler/libdir.stamp
$(B)/profiler/launch.o: ALL_CPPFLAGS += -DTMATCH_RECORD_LIBDIR=\"$(RECORD_LIBDIR)\"
$(B)/profiler/launch.o: $(RECORD_STAMP)
$(RECORD_STAMP): record-libdir-force
	@mkdir -p $(dir $@)
	@echo '$(RECORD_LIBDIR)' | cmp -s - $@ || echo '$(RECORD_LIBDIR)' >$@

$(B)/profiler/libtreematch-record-%.so: $(RECORD_SRCS) profiler/record_private.h
	@mkdir -p $(dir $@)
	$(MPICC_$*) -D_GNU_SOURCE -DTMATCH_VERSION=\"$(VERSION)\" -I. $(CPPFLAGS) $(WARN) $(CFLAGS) \
	    -fPIC -fvisibility=hidden -shared -Wl,-z,defs $(LDFLAGS) -o $@.tmp $(RECORD_SRCS) \
	    -ldl -lpthread
	mv -f $@.tmp $@

# MPI test programs with exactly known patterns (tests/mpi/pattern*.expected).
$(B)/tests/mpi/pattern.%: tests/mpi/pattern.c
	@mkdir -p $(dir $@)
	$(MPICC_$*) $(WARN) $(CFLAGS) -o $@ $<

$(B)/tests/mpi/pattern_mt.%: tests/mpi/pattern_mt.c
	@mkdir -p $(dir $@)
	$(MPICC_$*) $(WARN) $(CFLAGS) -pthread -o $@ $<

# one source, `use mpi` and `use mpi_f08` (-DF08)
PATTERN_FFLAGS = -cpp -ffree-line-length-none -O1 -fallow-argument-mismatch -w

$(B)/tests/mpi/pattern_f.%: tests/mpi/pattern_f.F90
	@mkdir -p $(dir $@)
	$(MPIF90_$*) $(PATTERN_FFLAGS) -J $(dir $@) -o $@ $<

$(B)/tests/mpi/pattern_f08.%: tests/mpi/pattern_f.F90
	@mkdir -p $(dir $@)
	$(MPIF90_$*) $(PATTERN_FFLAGS) -DF08 -J $(dir $@) -o $@ $<

# A statically linked program: the selector must refuse it.
$(B)/tests/mpi/static_prog: tests/mpi/static_prog.c
	@mkdir -p $(dir $@)
	$(CC) -static $(WARN) $(CFLAGS) -o $@ $<

# The selector's unit test reads those binaries.
$(B)/tests/unit/test_profiler_mpiabi: $(RECORD_TESTS) $(B)/tests/mpi/static_prog
# Learn mode's helper test keys the store by a real MPI program (placement/
# is read before this file: the list is not known there).
$(B)/tests/unit/test_placement_helper $(B)/tests/unit/test_placement_learn: $(RECORD_TESTS)
$(B)/tests/unit/test_spank_glue: $(RECORD_TESTS) $(RECORD_LIBS)
$(B)/tests/unit/test_profiler_launch: $(RECORD_LIBS)

RECORD_ENV = BUILDDIR=$(abspath $(B)) SRCDIR=$(CURDIR)

.PHONY: record-libdir-force check-record check-record-srun e2e-nohang bench-record bench-learn \
        bench-learn-soak install-profiler uninstall-profiler
check-record: all $(RECORD_TESTS) $(B)/tests/mpi/static_prog
	$(RECORD_ENV) sh tests/e2e/test_record.sh

# srun --treematch-record on a throwaway Slurm (tests/e2e/cluster.sh), then
# replay with --treematch; needs root, like the plugin's e2e step.
check-record-srun: all $(RECORD_TESTS) $(B)/tests/mpi/static_prog
	$(RECORD_ENV) sh tests/e2e/test_record_srun.sh

# No step hangs (issue 34): learn steps under store churn and damage,
# failure=fail with a failing node, --chdir; 4 nodes, MPICH over pmi2.
e2e-nohang: all $(RECORD_LIBS)
	$(RECORD_ENV) sh tests/e2e/test_nohang.sh

# Issue 34's figure: hung steps among 500 learn steps under store churn and
# damage (the first part of e2e-nohang, run longer).
bench-learn-soak: all $(RECORD_LIBS)
	$(RECORD_ENV) sh bench/learn_soak.sh

bench-record: all $(B)/bench/record_overhead.openmpi $(B)/bench/record_overhead.mpich
	$(RECORD_ENV) sh bench/record_overhead.sh

# Learn mode's first run: whole applications plain and recorded (issue 20).
bench-learn: all
	@mkdir -p $(B)/bench
	BUILDDIR=$(abspath $(B)) SRCDIR=$(CURDIR) sh bench/learn_overhead.sh | tee $(B)/bench/learn_overhead.md

$(B)/bench/record_overhead.%: bench/record_overhead.c
	@mkdir -p $(dir $@)
	$(MPICC_$*) $(WARN) $(CFLAGS) -o $@ $<

install-profiler: $(RECORD_LIBS)
	install -d $(DESTDIR)$(RECORD_LIBDIR)
	install -m 0755 $(RECORD_LIBS) $(DESTDIR)$(RECORD_LIBDIR)/

uninstall-profiler:
	rm -f $(RECORD_ABIS:%=$(DESTDIR)$(RECORD_LIBDIR)/libtreematch-record-%.so)
	-rmdir $(DESTDIR)$(RECORD_LIBDIR) 2>/dev/null
