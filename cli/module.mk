# SPDX-License-Identifier: BSD-3-Clause
# cli/: the `treematch` command-line tool.
CLI_SRCS += $(wildcard cli/*.c)

# `treematch predict` runs SimGrid's smpirun and replay program when the
# build finds them (libsimgrid-dev); without, it says so.
SIMGRID_LIBDIR := $(shell pkg-config --variable=libdir simgrid 2>/dev/null)
SMPIRUN        := $(shell command -v smpirun 2>/dev/null)
ifneq ($(and $(SIMGRID_LIBDIR),$(SMPIRUN)),)
SIMGRID_FLAGS  := -DTMATCH_SMPIRUN=\"$(SMPIRUN)\" \
    -DTMATCH_SMPI_REPLAY=\"$(SIMGRID_LIBDIR)/simgrid/smpireplaymain\"
$(B)/cli/cmd_predict.o: ALL_CPPFLAGS += $(SIMGRID_FLAGS)
# its test expects what this build does: predictions, or the message
$(B)/tests/unit/test_placement_predict: ALL_CPPFLAGS += $(SIMGRID_FLAGS)
endif

# `treematch config check` on sites' configurations (runs the CLI `all` built).
TEST_SRCS += tests/unit/test_cli_config.c
TEST_SRCS += tests/unit/test_cli_completion.c tests/unit/test_cli_usage.c
TEST_SRCS += tests/unit/test_cli_grammar.c

# Bash completion (cli/treematch.bash), read by bash-completion on demand
# under the command's name: treematch-srun's is the same file.
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
INSTALL_TARGETS   += install-completion
UNINSTALL_TARGETS += uninstall-completion
.PHONY: install-completion uninstall-completion
install-completion:
	install -d $(DESTDIR)$(COMPLETIONDIR)
	install -m 0644 cli/treematch.bash $(DESTDIR)$(COMPLETIONDIR)/treematch
	ln -sf treematch $(DESTDIR)$(COMPLETIONDIR)/treematch-srun

uninstall-completion:
	rm -f $(DESTDIR)$(COMPLETIONDIR)/treematch $(DESTDIR)$(COMPLETIONDIR)/treematch-srun
	-rmdir $(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(DATADIR)/bash-completion 2>/dev/null
