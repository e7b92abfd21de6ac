# SPDX-License-Identifier: BSD-3-Clause
# packaging/: pkg-config file, man pages, the plugstack.conf example, Debian
# and RPM packages.
#
#   make deb [DEB_OUT=dir]     .deb files (packaging/build-deb.sh)
#   make rpm [RPM_OUT=dir]     .rpm files (packaging/build-rpm.sh)

PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# Slurm's configuration directory: the plugin's plugstack line is installed
# in its treematch/ (disabled until the admin links it into plugstack.conf.d)
SLURM_SYSCONFDIR ?= $(SYSCONFDIR)/slurm
DEB_OUT      ?= $(B)/deb
RPM_OUT      ?= $(B)/rpm

MAN_PAGES    += cli/treematch.1

# Tests of this module (before any rule that lists TEST_SRCS): treematch(1)
# documents every option of every subcommand (test_cli_manpages), `treematch
# draw` writes well-formed, complete SVG (test_cli_draw). Both run the CLI
# built by `all`.
TEST_SRCS += tests/unit/test_cli_manpages.c tests/unit/test_cli_draw.c
PKG_PC       := $(B)/packaging/treematch.pc
PKG_PLUGSTACK := $(B)/packaging/treematch.conf

INSTALL_TARGETS   += install-packaging
UNINSTALL_TARGETS += uninstall-packaging
CHECK_TARGETS     += check-install
.PHONY: install-packaging uninstall-packaging check-install deb rpm

# Both generated files depend on the paths they embed: rebuild on every
# install so `make install PREFIX=x` after `make install PREFIX=y` is right.
.PHONY: $(PKG_PC) $(PKG_PLUGSTACK)
$(PKG_PC): packaging/treematch.pc.in
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' $< >$@

$(PKG_PLUGSTACK): packaging/treematch.conf.in
	@mkdir -p $(dir $@)
	sed -e 's|@SLURM_PLUGINDIR@|$(SLURM_PLUGINDIR)|g' \
	    -e 's|@SLURM_SYSCONFDIR@|$(SLURM_SYSCONFDIR)|g' $< >$@

install-packaging: $(PKG_PC) $(PKG_PLUGSTACK)
	install -d $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(SLURM_SYSCONFDIR)/treematch
	install -m 0644 $(PKG_PC) $(DESTDIR)$(PKGCONFIGDIR)/treematch.pc
	install -m 0644 $(PKG_PLUGSTACK) $(DESTDIR)$(SLURM_SYSCONFDIR)/treematch/plugstack.conf
	@set -e; for p in $(sort $(MAN_PAGES)); do \
	    s=$${p##*.}; \
	    echo "install -m 0644 $$p $(DESTDIR)$(MANDIR)/man$$s/"; \
	    install -d $(DESTDIR)$(MANDIR)/man$$s; \
	    install -m 0644 $$p $(DESTDIR)$(MANDIR)/man$$s/; \
	done

uninstall-packaging:
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/treematch.pc
	rm -f $(DESTDIR)$(SLURM_SYSCONFDIR)/treematch/plugstack.conf
	-rmdir $(DESTDIR)$(SLURM_SYSCONFDIR)/treematch 2>/dev/null
	@for p in $(sort $(MAN_PAGES)); do \
	    f=$$(basename $$p); s=$${p##*.}; \
	    echo "rm -f $(DESTDIR)$(MANDIR)/man$$s/$$f"; \
	    rm -f $(DESTDIR)$(MANDIR)/man$$s/$$f; \
	done

# make install/uninstall into a scratch DESTDIR with other paths: every file
# where it belongs, nothing left after uninstall (a few seconds).
check-install: all
	@REPORTED=1 BUILDDIR=$(abspath $(B)) sh packaging/check-install.sh

# What the Debian and RPM builds run: `make check` without the steps that
# need root, munge/Slurm daemons, network namespaces or MPI jobs (e2e,
# e2e-layout, check-record, check-record-srun), which a package build cannot
# do; CI runs those against the installed packages (ci-deb-e2e.sh).
PACKAGE_CHECK_STEPS ?= fuzz-replay check-install
.PHONY: check-package
check-package: all $(TEST_BINS)
	@BUILDDIR=$(abspath $(B)) sh tests/summary.sh begin
	@for t in $(TEST_BINS); do \
	    BUILDDIR=$(abspath $(B)) sh tests/summary.sh unit $$t || true; \
	done
	@for s in $(filter $(PACKAGE_CHECK_STEPS),$(CHECK_TARGETS)); do \
	    $(MAKE) --no-print-directory $$s || BUILDDIR=$(abspath $(B)) sh tests/summary.sh fail-step $$s; \
	done
	@BUILDDIR=$(abspath $(B)) sh tests/summary.sh end

deb:
	sh packaging/build-deb.sh $(DEB_OUT)

rpm:
	sh packaging/build-rpm.sh $(RPM_OUT)

# The picture in the README: an example profile drawn by `treematch draw`.
DOCS_DRAW_ARGS = --profile docs/examples/stencil32.mtx --topology "tleaf 3 2 100 2 10 8 1" \
    --title "8 x 4 stencil, 32 ranks in scrambled order, on 2 nodes x 2 packages x 8 cores"
.PHONY: docs-images
docs-images: $(CLI_BIN)
	$(CLI_BIN) draw $(DOCS_DRAW_ARGS) -o docs/draw-example.svg
