/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpiabi.h - which MPI ABI a program is linked with, so that the right
 * recorder (libtreematch-record-openmpi.so or -mpich.so) is preloaded.
 * Preloading the wrong one crashes the program, so this reads the ELF
 * DT_NEEDED entries of the program (and, breadth first, of the libraries it
 * needs, found through DT_RUNPATH/DT_RPATH, LD_LIBRARY_PATH, /etc/ld.so.conf
 * and the default directories): libmpi.so.40 is Open MPI, libmpich.so.12 or
 * libmpi.so.12 is MPICH. Statically linked programs cannot be interposed and
 * are refused.
 *
 * Used by `treematch record` (cli/cmd_record.c) and by the SPANK option
 * --treematch-record (spank/record.c). Conventions of treematch/treematch.h:
 * 0/-1 + errno + optional tmatch_error_t; no global state; no printing.
 */
#ifndef TMATCH_PROFILER_MPIABI_H
#define TMATCH_PROFILER_MPIABI_H

#include "treematch/treematch.h"

#include <stddef.h>

typedef enum tmatch_mpiabi {
	TMATCH_MPIABI_NONE = 0,    /* dynamically linked, no MPI library found */
	TMATCH_MPIABI_OPENMPI = 1, /* libmpi.so.40 */
	TMATCH_MPIABI_MPICH = 2,   /* libmpich.so.12 (or libmpi.so.12) */
} tmatch_mpiabi_t;

/* "openmpi", "mpich" or "none". */
const char *tmatch_mpiabi_name(tmatch_mpiabi_t abi);

/* "openmpi" / "mpich" -> abi; -1/EINVAL naming the valid values otherwise. */
int tmatch_mpiabi_parse(const char *name, tmatch_mpiabi_t *abi, tmatch_error_t *err);

/*
 * The ABI of the ELF file `path`. -1 with errno ENOENT/EACCES (cannot open),
 * ENOEXEC (not an ELF file: a script?), ENOTSUP (statically linked: cannot be
 * recorded) or EINVAL (a malformed ELF file); err says which and what to do.
 */
int tmatch_mpiabi_of_file(const char *path, tmatch_mpiabi_t *abi, tmatch_error_t *err);

/*
 * The ABI of a command line such as `mpirun -np 4 ./app arg` or `./app`:
 * each word that names an executable file (as a path, or found in `path_env`,
 * a PATH-style list; NULL = getenv("PATH")) is examined in order, and the
 * first that links an MPI library decides. Launchers (mpirun, mpiexec, srun)
 * link none and are skipped. `which` (may be NULL) receives the file that
 * decided. Fails with ENOENT when no word links an MPI library (the message
 * says to name the MPI with --mpi), ENOTSUP when the program is static.
 */
int tmatch_mpiabi_of_command(char *const argv[], const char *path_env, tmatch_mpiabi_t *abi,
                             char *which, size_t which_len, tmatch_error_t *err);

/*
 * tmatch_mpiabi_of_command without the ABI: the program that decided in
 * `exe`. The shape of placement's tmatch_place_mpi_program_fn (learn mode's
 * key), which the front ends hand to placement.
 */
int tmatch_mpiabi_program(char *const argv[], const char *path_env, char *exe, size_t len,
                          tmatch_error_t *err);

/*
 * The recorder library for `abi` in `libdir`: writes
 * "<libdir>/libtreematch-record-<name>.so" to buf. -1/ENAMETOOLONG, or
 * ENOENT when the file does not exist (message names the path).
 */
int tmatch_mpiabi_recorder(const char *libdir, tmatch_mpiabi_t abi, char *buf, size_t len,
                           tmatch_error_t *err);

#endif /* TMATCH_PROFILER_MPIABI_H */
