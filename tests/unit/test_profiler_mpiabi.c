/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_profiler_mpiabi.c - the recorder's ABI selector: Open MPI and MPICH
 * programs (C and Fortran, built by make in TMATCH_BUILDDIR/tests/mpi) are
 * told apart by DT_NEEDED, through a launcher command line too; static
 * programs, scripts, non-ELF and missing files are refused with errno and a
 * message; the bad-argument paths set EINVAL.
 */
#include "profiler/mpiabi.h"
#include "tmpdir.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <stdio.h>

#define MPIDIR TMATCH_BUILDDIR "/tests/mpi/"

struct abi_case {
	const char *file;
	tmatch_mpiabi_t abi;
};

static const struct abi_case cases[] = {
    {MPIDIR "pattern.openmpi", TMATCH_MPIABI_OPENMPI},
    {MPIDIR "pattern_f.openmpi", TMATCH_MPIABI_OPENMPI},
    {MPIDIR "pattern.mpich", TMATCH_MPIABI_MPICH},
    {MPIDIR "pattern_f.mpich", TMATCH_MPIABI_MPICH},
    {"/bin/sh", TMATCH_MPIABI_NONE},
};

Test(mpiabi, of_file_table)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tmatch_mpiabi_t abi = (tmatch_mpiabi_t)-1;
		tmatch_error_t err;
		cr_assert_eq(tmatch_mpiabi_of_file(cases[i].file, &abi, &err), 0, "%s: %s",
		             cases[i].file, err.msg);
		cr_assert_eq(abi, cases[i].abi, "%s: got %s", cases[i].file,
		             tmatch_mpiabi_name(abi));
	}
}

Test(mpiabi, static_refused)
{
	tmatch_mpiabi_t abi = TMATCH_MPIABI_OPENMPI;
	tmatch_error_t err;

	cr_assert_eq(tmatch_mpiabi_of_file(MPIDIR "static_prog", &abi, &err), -1);
	cr_assert_eq(errno, ENOTSUP);
	cr_assert(strstr(err.msg, "statically linked"), "%s", err.msg);
	cr_assert_eq(abi, TMATCH_MPIABI_OPENMPI, "output touched on failure");

	char *argv[] = {MPIDIR "static_prog", NULL};
	cr_assert_eq(tmatch_mpiabi_of_command(argv, "", &abi, NULL, 0, &err), -1);
	cr_assert_eq(errno, ENOTSUP);
}

Test(mpiabi, not_elf_and_missing)
{
	tmatch_mpiabi_t abi;
	tmatch_error_t err;
	char script[TM_TMP_MAX];
	int fd = mkstemp(tm_tmpname(script, sizeof(script), "tmatch-mpiabi-XXXXXX"));

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	cr_assert_eq(tmatch_mpiabi_of_file(script, &abi, &err), -1);
	cr_assert_eq(errno, ENOEXEC);
	cr_assert(strstr(err.msg, "--mpi="), "%s", err.msg);
	unlink(script);

	cr_assert_eq(tmatch_mpiabi_of_file("/nonexistent/prog", &abi, &err), -1);
	cr_assert_eq(errno, ENOENT);
	cr_assert(strstr(err.msg, "/nonexistent/prog"), "%s", err.msg);
}

Test(mpiabi, command_skips_launcher)
{
	tmatch_mpiabi_t abi = TMATCH_MPIABI_NONE;
	tmatch_error_t err;
	char which[PATH_MAX];
	char *ompi[] = {"mpirun.openmpi",         "-np", "4", "--oversubscribe",
	                MPIDIR "pattern.openmpi", "rma", NULL};
	char *mpich[] = {"mpiexec.mpich", "-n", "2", MPIDIR "pattern_f.mpich", NULL};
	char *none[] = {"sh", "-c", "true", NULL};

	cr_assert_eq(
	    tmatch_mpiabi_of_command(ompi, "/usr/bin:/bin", &abi, which, sizeof which, &err), 0,
	    "%s", err.msg);
	cr_assert_eq(abi, TMATCH_MPIABI_OPENMPI);
	cr_assert_str_eq(which, MPIDIR "pattern.openmpi");
	cr_assert_eq(
	    tmatch_mpiabi_of_command(mpich, "/usr/bin:/bin", &abi, which, sizeof which, &err), 0,
	    "%s", err.msg);
	cr_assert_eq(abi, TMATCH_MPIABI_MPICH);
	cr_assert_eq(tmatch_mpiabi_of_command(none, "/usr/bin:/bin", &abi, NULL, 0, &err), -1);
	cr_assert_eq(errno, ENOENT);
	cr_assert(strstr(err.msg, "--mpi=openmpi"), "%s", err.msg);
}

Test(mpiabi, parse_and_names)
{
	tmatch_mpiabi_t abi = TMATCH_MPIABI_NONE;
	tmatch_error_t err;

	cr_assert_eq(tmatch_mpiabi_parse("mpich", &abi, &err), 0);
	cr_assert_eq(abi, TMATCH_MPIABI_MPICH);
	cr_assert_eq(tmatch_mpiabi_parse("openmpi", &abi, &err), 0);
	cr_assert_eq(abi, TMATCH_MPIABI_OPENMPI);
	cr_assert_eq(tmatch_mpiabi_parse("lam", &abi, &err), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err.msg, "openmpi, mpich"), "%s", err.msg);
	cr_assert_eq(abi, TMATCH_MPIABI_OPENMPI, "output touched on failure");
	cr_assert_eq(tmatch_mpiabi_parse(NULL, &abi, NULL), -1);
	cr_assert_str_eq(tmatch_mpiabi_name(TMATCH_MPIABI_NONE), "none");
}

Test(mpiabi, bad_arguments)
{
	tmatch_mpiabi_t abi;
	char buf[64];
	char *empty[] = {NULL};

	cr_assert_eq(tmatch_mpiabi_of_file(NULL, &abi, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_mpiabi_of_command(NULL, NULL, &abi, NULL, 0, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_mpiabi_of_command(empty, NULL, &abi, NULL, 0, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tmatch_mpiabi_recorder("/x", TMATCH_MPIABI_NONE, buf, sizeof buf, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(
	    tmatch_mpiabi_recorder("/nonexistent", TMATCH_MPIABI_MPICH, buf, sizeof buf, NULL), -1);
	cr_assert_eq(errno, ENOENT);
	cr_assert_eq(
	    tmatch_mpiabi_recorder(TMATCH_BUILDDIR "/profiler", TMATCH_MPIABI_MPICH, buf, 8, NULL),
	    -1);
	cr_assert_eq(errno, ENAMETOOLONG);
}

Test(mpiabi, recorder_in_build_dir)
{
	char buf[PATH_MAX];
	tmatch_error_t err;

	cr_assert_eq(tmatch_mpiabi_recorder(TMATCH_BUILDDIR "/profiler", TMATCH_MPIABI_OPENMPI, buf,
	                                    sizeof buf, &err),
	             0, "%s", err.msg);
	cr_assert_str_eq(buf, TMATCH_BUILDDIR "/profiler/libtreematch-record-openmpi.so");
}
