/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpiabi.c - tell the MPI ABI of a program from its ELF DT_NEEDED entries
 * (see mpiabi.h). Reads only the ELF header, the program headers, the
 * dynamic segment and its string table, with pread; nothing is executed.
 */
#include "profiler/mpiabi.h"
#include "treematch/internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Breadth-first search limits: libraries examined, DT_NEEDED kept per file. */
#define MAX_LIBS   64
#define MAX_NEEDED 64
#define MAX_DIRS   64
#define MAX_STRTAB (4u << 20)

const char *tmatch_mpiabi_name(tmatch_mpiabi_t abi)
{
	switch (abi) {
	case TMATCH_MPIABI_OPENMPI:
		return "openmpi";
	case TMATCH_MPIABI_MPICH:
		return "mpich";
	default:
		return "none";
	}
}

int tmatch_mpiabi_parse(const char *name, tmatch_mpiabi_t *abi, tmatch_error_t *err)
{
	if (name && !strcmp(name, "openmpi"))
		*abi = TMATCH_MPIABI_OPENMPI;
	else if (name && !strcmp(name, "mpich"))
		*abi = TMATCH_MPIABI_MPICH;
	else
		return tmatch_error_set(err, EINVAL, NULL, 0, 0,
		                        "unknown MPI '%s': valid values are openmpi, mpich",
		                        name ? name : "(null)");
	return 0;
}

static tmatch_mpiabi_t abi_of_soname(const char *so)
{
	if (!strcmp(so, "libmpi.so.40"))
		return TMATCH_MPIABI_OPENMPI;
	if (!strcmp(so, "libmpich.so.12") || !strcmp(so, "libmpi.so.12"))
		return TMATCH_MPIABI_MPICH;
	return TMATCH_MPIABI_NONE;
}

/* What one ELF file says about itself. */
struct elfinfo {
	int is_static;
	int nneeded;
	char *needed[MAX_NEEDED];
	char *runpath; /* DT_RUNPATH, else DT_RPATH, or NULL */
};

static void elfinfo_free(struct elfinfo *e)
{
	for (int i = 0; i < e->nneeded; i++)
		free(e->needed[i]);
	free(e->runpath);
	memset(e, 0, sizeof *e);
}

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

/* vaddr -> file offset through the PT_LOAD segments; -1 if not mapped. */
static off_t vaddr_to_off(const Elf64_Phdr *ph, int n, uint64_t vaddr)
{
	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr < ph[i].p_vaddr + ph[i].p_filesz)
			return (off_t)(vaddr - ph[i].p_vaddr + ph[i].p_offset);
	return -1;
}

static int elf_read(const char *path, struct elfinfo *out, tmatch_error_t *err)
{
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	Elf64_Dyn *dyn = NULL;
	char *strtab = NULL;
	int fd, rc = -1, ndyn = 0;
	const Elf64_Phdr *dynph = NULL;
	struct stat sb;
	uint64_t strtab_va = 0, strsz = 0;
	long runpath = -1, rpath = -1;

	memset(out, 0, sizeof *out);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tmatch_error_set(err, errno, path, 0, 0, "cannot open %s: %s", path,
		                        strerror(errno));
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		tmatch_error_set(err, ENOEXEC, path, 0, 0, "%s is not a regular file", path);
		goto out;
	}
	if (read_at(fd, &eh, sizeof eh, 0) != 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		tmatch_error_set(
		    err, ENOEXEC, path, 0, 0,
		    "%s is not an ELF program (a script?): name the MPI with --mpi=openmpi|mpich",
		    path);
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 4096) {
		tmatch_error_set(err, EINVAL, path, 0, 0,
		                 "%s is not a 64-bit little-endian ELF file this tool can read",
		                 path);
		goto out;
	}
	ph = calloc(eh.e_phnum, sizeof *ph);
	if (!ph) {
		tmatch_error_set(err, ENOMEM, path, 0, 0, "out of memory");
		goto out;
	}
	if (read_at(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff) != 0) {
		tmatch_error_set(err, EINVAL, path, 0, 0, "%s: truncated ELF program headers",
		                 path);
		goto out;
	}
	for (int i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dynph = &ph[i];
	if (!dynph) {
		out->is_static = 1;
		rc = 0;
		goto out;
	}
	ndyn = (int)(dynph->p_filesz / sizeof *dyn);
	if (ndyn <= 0 || ndyn > 65536 || !(dyn = calloc((size_t)ndyn, sizeof *dyn)) ||
	    read_at(fd, dyn, (size_t)ndyn * sizeof *dyn, (off_t)dynph->p_offset) != 0) {
		tmatch_error_set(err, EINVAL, path, 0, 0, "%s: unreadable dynamic section", path);
		goto out;
	}
	for (int i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			strtab_va = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_STRSZ)
			strsz = dyn[i].d_un.d_val;
		else if (dyn[i].d_tag == DT_RUNPATH)
			runpath = (long)dyn[i].d_un.d_val;
		else if (dyn[i].d_tag == DT_RPATH)
			rpath = (long)dyn[i].d_un.d_val;
	}
	off_t stroff = vaddr_to_off(ph, eh.e_phnum, strtab_va);
	if (stroff < 0 || strsz == 0 || strsz > MAX_STRTAB || !(strtab = malloc(strsz + 1)) ||
	    read_at(fd, strtab, strsz, stroff) != 0) {
		tmatch_error_set(err, EINVAL, path, 0, 0, "%s: unreadable dynamic string table",
		                 path);
		goto out;
	}
	strtab[strsz] = '\0';
	for (int i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_NEEDED && dyn[i].d_un.d_val < strsz &&
		    out->nneeded < MAX_NEEDED)
			out->needed[out->nneeded++] = strdup(strtab + dyn[i].d_un.d_val);
	if (runpath >= 0 && (uint64_t)runpath < strsz)
		out->runpath = strdup(strtab + runpath);
	else if (rpath >= 0 && (uint64_t)rpath < strsz)
		out->runpath = strdup(strtab + rpath);
	rc = 0;
out:
	if (rc != 0)
		elfinfo_free(out);
	free(strtab);
	free(dyn);
	free(ph);
	close(fd);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Library search directories                                                */

struct dirs {
	int n;
	char *d[MAX_DIRS];
};

static void dirs_add(struct dirs *ds, const char *d, size_t len)
{
	char *copy;

	if (len == 0 || ds->n < 0 || ds->n >= MAX_DIRS)
		return;
	for (int i = 0; i < ds->n; i++)
		if (strlen(ds->d[i]) == len && !strncmp(ds->d[i], d, len))
			return;
	copy = strndup(d, len);
	if (copy)
		ds->d[ds->n++] = copy;
}

/* A ':'-separated list; $ORIGIN replaced by `origin`. */
static void dirs_add_list(struct dirs *ds, const char *list, const char *origin)
{
	while (list && *list) {
		size_t len = strcspn(list, ":");
		char buf[PATH_MAX];
		if (origin && !strncmp(list, "$ORIGIN", 7)) {
			if (snprintf(buf, sizeof buf, "%s%.*s", origin, (int)(len - 7), list + 7) <
			    (int)sizeof buf)
				dirs_add(ds, buf, strlen(buf));
		} else if (origin && !strncmp(list, "${ORIGIN}", 9)) {
			if (snprintf(buf, sizeof buf, "%s%.*s", origin, (int)(len - 9), list + 9) <
			    (int)sizeof buf)
				dirs_add(ds, buf, strlen(buf));
		} else {
			dirs_add(ds, list, len);
		}
		list += len;
		// list + strcspn stays in the string
		// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
		if (*list == ':')
			list++;
	}
}

/* /etc/ld.so.conf and its include globs, one level deep. */
static void dirs_add_ldconf(struct dirs *ds, const char *file, int depth)
{
	tmatch__lines_t in;
	char *line;

	if (tmatch__lines_open(&in, file, PATH_MAX, NULL, NULL) < 0)
		return;
	while ((line = tmatch__lines_next(&in))) {
		char *s = line + strspn(line, " \t");
		s[strcspn(s, "#\r\n")] = '\0';
		size_t len = strlen(s);
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			s[--len] = '\0';
		if (!len)
			continue;
		if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
			glob_t g;
			char *pat = s + 8 + strspn(s + 8, " \t");
			if (depth < 2 && glob(pat, 0, NULL, &g) == 0) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					dirs_add_ldconf(ds, g.gl_pathv[i], depth + 1);
				globfree(&g);
			}
			// s + strspn stays in the line
			// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
		} else if (*s == '/') {
			dirs_add(ds, s, len);
		}
	}
	tmatch__lines_close(&in);
}

static void dirs_free(struct dirs *ds)
{
	for (int i = 0; i < ds->n; i++)
		free(ds->d[i]);
	ds->n = 0;
}

/* ------------------------------------------------------------------------ */

int tmatch_mpiabi_of_file(const char *path, tmatch_mpiabi_t *abi, tmatch_error_t *err)
{
	struct elfinfo e;
	struct dirs ds = {0};
	char *queue[MAX_LIBS] = {0};
	int nq = 0, rc = -1;
	tmatch_mpiabi_t found = TMATCH_MPIABI_NONE;

	if (!path || !abi)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "no program given");
	if (elf_read(path, &e, err) != 0)
		return -1;
	if (e.is_static) {
		elfinfo_free(&e);
		return tmatch_error_set(
		    err, ENOTSUP, path, 0, 0,
		    "%s is statically linked: its MPI calls cannot be intercepted; "
		    "relink it against a shared MPI library to record it",
		    path);
	}
	/* breadth first over DT_NEEDED; the program's own RUNPATH applies first */
	{
		char origin[PATH_MAX];
		snprintf(origin, sizeof origin, "%s", path);
		char *slash = strrchr(origin, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(origin, sizeof origin, ".");
		dirs_add_list(&ds, e.runpath, origin);
	}
	dirs_add_list(&ds, getenv("LD_LIBRARY_PATH"), NULL);
	dirs_add_ldconf(&ds, "/etc/ld.so.conf", 0);
	dirs_add_list(&ds,
	              "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:"
	              "/lib:/usr/lib",
	              NULL);
	for (;;) {
		for (int i = 0; i < e.nneeded && !found; i++)
			found = abi_of_soname(e.needed[i]);
		for (int i = 0; i < e.nneeded && !found && nq < MAX_LIBS; i++) {
			int seen = 0;
			for (int j = 0; j < nq; j++)
				seen |= !strcmp(queue[j], e.needed[i]);
			if (!seen && (queue[nq] = strdup(e.needed[i])))
				nq++;
		}
		elfinfo_free(&e);
		if (found)
			break;
		/* next queued library that we have not opened yet */
		int next = -1;
		for (int j = 0; j < nq && next < 0; j++)
			if (queue[j][0] != '\0')
				next = j;
		if (next < 0)
			break;
		char lib[PATH_MAX] = "";
		for (int d = 0; d < ds.n; d++) {
			snprintf(lib, sizeof lib, "%s/%s", ds.d[d], queue[next]);
			if (access(lib, R_OK) == 0)
				break;
			lib[0] = '\0';
		}
		queue[next][0] = '\0'; /* opened (or not found): never again */
		if (lib[0] == '\0' || elf_read(lib, &e, NULL) != 0 || e.is_static)
			memset(&e, 0, sizeof e);
	}
	*abi = found;
	rc = 0;
	for (int j = 0; j < nq; j++)
		free(queue[j]);
	dirs_free(&ds);
	return rc;
}

/* Resolve a command word to an executable file, as execvp would. */
static int resolve(const char *word, const char *path_env, char *buf, size_t len)
{
	if (!*word || *word == '-')
		return -1;
	if (strchr(word, '/')) {
		if (access(word, X_OK) != 0)
			return -1;
		snprintf(buf, len, "%s", word);
		return 0;
	}
	for (const char *p = path_env; p && *p;) {
		size_t n = strcspn(p, ":");
		if (n && (size_t)snprintf(buf, len, "%.*s/%s", (int)n, p, word) < len) {
			struct stat sb;
			if (access(buf, X_OK) == 0 && stat(buf, &sb) == 0 && S_ISREG(sb.st_mode))
				return 0;
		}
		p += n;
		// p + strcspn stays in the string
		// NOLINTNEXTLINE(clang-analyzer-security.ArrayBound)
		if (*p == ':')
			p++;
	}
	return -1;
}

int tmatch_mpiabi_of_command(char *const argv[], const char *path_env, tmatch_mpiabi_t *abi,
                             char *which, size_t which_len, tmatch_error_t *err)
{
	char file[PATH_MAX], first_static[PATH_MAX] = "";
	int examined = 0;

	if (!argv || !argv[0] || !abi)
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "no command given");
	if (!path_env)
		path_env = getenv("PATH");
	for (int i = 0; argv[i]; i++) {
		tmatch_mpiabi_t a = TMATCH_MPIABI_NONE;
		tmatch_error_t e;
		if (resolve(argv[i], path_env, file, sizeof file) != 0)
			continue;
		errno = 0;
		if (tmatch_mpiabi_of_file(file, &a, &e) != 0) {
			/* set to 0 above; tmatch_error_set sets it on every failure */
			// NOLINTNEXTLINE(clang-analyzer-unix.Errno)
			if (errno == ENOTSUP && !first_static[0])
				snprintf(first_static, sizeof first_static, "%s", file);
			continue;
		}
		examined++;
		if (a != TMATCH_MPIABI_NONE) {
			if (which)
				snprintf(which, which_len, "%s", file);
			*abi = a;
			return 0;
		}
	}
	if (first_static[0])
		return tmatch_error_set(
		    err, ENOTSUP, first_static, 0, 0,
		    "%s is statically linked: its MPI calls cannot be intercepted; "
		    "relink it against a shared MPI library to record it",
		    first_static);
	return tmatch_error_set(
	    err, ENOENT, NULL, 0, 0,
	    "cannot tell which MPI the command uses: none of its %d program(s) links "
	    "libmpi.so.40 (Open MPI) or libmpich.so.12 (MPICH); name it with "
	    "--mpi=openmpi or --mpi=mpich",
	    examined);
}

int tmatch_mpiabi_program(char *const argv[], const char *path_env, char *exe, size_t len,
                          tmatch_error_t *err)
{
	tmatch_mpiabi_t abi;

	return tmatch_mpiabi_of_command(argv, path_env, &abi, exe, len, err);
}

int tmatch_mpiabi_recorder(const char *libdir, tmatch_mpiabi_t abi, char *buf, size_t len,
                           tmatch_error_t *err)
{
	char tmp[PATH_MAX];

	if (!libdir || !buf || (abi != TMATCH_MPIABI_OPENMPI && abi != TMATCH_MPIABI_MPICH))
		return tmatch_error_set(err, EINVAL, NULL, 0, 0, "no recorder for MPI '%s'",
		                        tmatch_mpiabi_name(abi));
	if ((size_t)snprintf(tmp, sizeof tmp, "%s/libtreematch-record-%s.so", libdir,
	                     tmatch_mpiabi_name(abi)) >= sizeof tmp ||
	    strlen(tmp) >= len)
		return tmatch_error_set(err, ENAMETOOLONG, NULL, 0, 0, "recorder path too long");
	if (access(tmp, R_OK) != 0)
		return tmatch_error_set(
		    err, ENOENT, tmp, 0, 0,
		    "the %s recorder %s is not installed (build it with mpicc.%s)",
		    tmatch_mpiabi_name(abi), tmp, tmatch_mpiabi_name(abi));
	snprintf(buf, len, "%s", tmp);
	return 0;
}
