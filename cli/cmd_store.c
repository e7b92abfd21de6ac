/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_store.c - `treematch store`: the store of learned profiles
 * (profile/store.c), one entry per application and rank count.
 *
 *   store list                         entries, least recently used first
 *   store show ENTRY                   one entry (its stem, a prefix or name)
 *   store find EXE --ntasks N [--name]  the profile a run of EXE would use
 *   store put EXE PROFILE [--name]     store a profile by hand
 *   store forget ENTRY                 remove entries
 *   store gc [--max-size SIZE]         evict down to SIZE, remove damage
 * Every command takes --site DIR (the admin's site store) instead of the
 * user's own ($XDG_CACHE_HOME/treematch/store).
 */
#include "cli/cli.h"
#include "cli/json.h"
#include "placement/site.h"
#include "profile/profile.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out)
{
	fputs("usage: treematch store <list|show|find|put|forget|gc> [ARGS] [--site DIR]\n"
	      "\n"
	      "The store of learned profiles: one per application (its ELF build id, or a\n"
	      "hash of its content) and rank count, in $XDG_CACHE_HOME/treematch/store\n"
	      "(~/.cache/treematch/store), readable by its user only. --treematch=learn\n"
	      "fills it; later runs of the same program at the same scale are placed from\n"
	      "it. ENTRY is an entry's 16 hex digits (or their start) or its name.\n"
	      "treematch store COMMAND --help for each.\n",
	      out);
}

#define SITE_HELP "      --site DIR       the site store the admin set up (store=DIR)\n"
#define HELP_HELP "  -h, --help           this help\n"

static const struct {
	const char *name, *help;
} commands[] = {
    {"list",
     "usage: treematch store list [--json] [--site DIR]\n\n"
     "Every entry, least recently used first: its 16 hex digits, ranks, size,\n"
     "last use, name and executable; then the total.\n\n"
     "      --json           the same as one JSON document (treematch(1))\n" SITE_HELP HELP_HELP},
    {"show", "usage: treematch store show ENTRY [--site DIR]\n\n"
             "The entries ENTRY names (hex digits or their start, or a name): key,\n"
             "executable, profile file, when recorded and last used.\n\n" SITE_HELP HELP_HELP},
    {"find",
     "usage: treematch store find EXE --ntasks N [--name NAME] [--site DIR]\n\n"
     "The stored profile a run of EXE at N ranks would be placed from (its path),\n"
     "checked; exit status 1 when there is none.\n\n"
     "  -n, --ntasks N       rank count of the run\n"
     "      --name NAME      the application's name, part of the key\n" SITE_HELP HELP_HELP},
    {"put",
     "usage: treematch store put EXE PROFILE [--name NAME] [--max-size SIZE] [--site DIR]\n\n"
     "Store PROFILE (YAML or compiled; its rank count is the run's) for EXE, as a\n"
     "learning run would.\n\n"
     "      --name NAME      the application's name, part of the key\n"
     "      --max-size SIZE  keep the store under SIZE (K, M, G; default 256M):\n"
     "                       least recently used entries go first\n" SITE_HELP HELP_HELP},
    {"forget", "usage: treematch store forget ENTRY [--site DIR]\n\n"
               "Remove the entries ENTRY names; exit status 1 when none.\n\n" SITE_HELP HELP_HELP},
    {"gc", "usage: treematch store gc [--max-size SIZE] [--site DIR]\n\n"
           "Evict least recently used entries until the store holds at most SIZE, and\n"
           "remove damaged entries and what interrupted writes left.\n\n"
           "      --max-size SIZE  at most SIZE (K, M, G; default 256M)\n" SITE_HELP HELP_HELP},
};

struct args {
	const char *name, *site;
	uint64_t ranks, max_size;
	int json;
};

static int parse(int argc, char **argv, struct args *a, const char *help, const char *command)
{
	enum { O_NAME = 256, O_MAX_SIZE, O_SITE, O_JSON, O_RANKS = TMATCH_CLI_OLD_NAME };
	/* list takes --json; find --ntasks */
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, O_JSON},
	    {"ntasks", required_argument, NULL, 'n'},
	    {"name", required_argument, NULL, O_NAME},
	    {"max-size", required_argument, NULL, O_MAX_SIZE},
	    {"site", required_argument, NULL, O_SITE},
	    {"ranks", required_argument, NULL, O_RANKS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const struct option *lo = longopts + (strcmp(command, "store list") != 0);
	int c;

	memset(a, 0, sizeof(*a));
	a->max_size = TMATCH_STORE_DEFAULT_MAX;
	optind = 1;
	opterr = 0;
	while ((c = tmatch_cli_getopt(argc, argv, "n:h", lo)) != -1) {
		switch (c) {
		case O_JSON:
			a->json = 1;
			break;
		case O_RANKS:
			tmatch_cli_renamed(command, "--ranks", "--ntasks (-n)");
			/* fall through */
		case 'n':
			if (tmatch_cli_number(optarg, 1 << 24, &a->ranks) < 0 || a->ranks == 0) {
				tmatch_cli_error("--ntasks wants a rank count from 1, not '%s'",
				                 optarg);
				return 2;
			}
			break;
		case O_NAME:
			a->name = optarg;
			break;
		case O_MAX_SIZE:
			if (tmatch_parse_size(optarg, strlen(optarg), UINT64_MAX / 2,
			                      &a->max_size)) {
				tmatch_cli_error("--max-size wants a size such as 256M, not '%s'",
				                 optarg);
				return 2;
			}
			break;
		case O_SITE:
			a->site = optarg;
			break;
		case 'h':
			fputs(help, stdout);
			return -1;
		default:
			return tmatch_cli_bad_option(command, argv, "n:h", lo);
		}
	}
	return 0;
}

/* A CLOCK_REALTIME time in nanoseconds as local time, to the minute or second. */
static const char *local_time(int64_t ns, int seconds, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	localtime_r(&t, &tm);
	if (seconds)
		strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	else
		strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
	return buf;
}

static void print_entry(const tmatch_profile_store_entry_t *e, const char *dir)
{
	char key[256], when[64];

	tmatch_profile_store_key_format(&e->key, key, sizeof(key));
	printf("entry: %s\nkey: %s\nexecutable: %s\nprofile: %s/%s.compiled (%llu bytes)\n",
	       e->stem, key, e->exe[0] ? e->exe : "-", dir, e->stem, (unsigned long long)e->size);
	printf("recorded: %s\n", local_time(e->created_ns, 1, when, sizeof(when)));
	printf("last used: %s\n", local_time(e->used_ns, 1, when, sizeof(when)));
}

/* A CLOCK_REALTIME time in nanoseconds as UTC, ISO 8601 ("...Z"). */
static const char *utc_time(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "-");
	return buf;
}

/* store list --json: the entries (v, n of them; NULL, 0: none yet). */
static int list_json(const char *dir, const tmatch_profile_store_entry_t *v, int n, int damaged)
{
	tmatch_cli_json_t j;
	uint64_t total = 0;
	char when[64];

	tmatch_cli_json_init(&j, stdout);
	tmatch_cli_json_object(&j, NULL);
	tmatch_cli_json_string(&j, "store", dir);
	tmatch_cli_json_array(&j, "entries");
	for (int i = 0; i < n; i++) {
		total += v[i].size;
		tmatch_cli_json_object(&j, NULL);
		tmatch_cli_json_string(&j, "entry", v[i].stem);
		tmatch_cli_json_int(&j, "ranks", v[i].key.ranks);
		tmatch_cli_json_int(&j, "bytes", (long long)v[i].size);
		tmatch_cli_json_string(&j, "recorded",
		                       utc_time(v[i].created_ns, when, sizeof(when)));
		tmatch_cli_json_string(&j, "last_used", utc_time(v[i].used_ns, when, sizeof(when)));
		tmatch_cli_json_string(&j, "name", v[i].key.name[0] ? v[i].key.name : NULL);
		tmatch_cli_json_string(&j, "executable", v[i].exe[0] ? v[i].exe : NULL);
		tmatch_cli_json_end(&j);
	}
	tmatch_cli_json_end(&j);
	tmatch_cli_json_int(&j, "total_bytes", (long long)total);
	tmatch_cli_json_int(&j, "damaged", damaged);
	tmatch_cli_json_end(&j);
	return tmatch_cli_output_close(stdout, "-") < 0;
}

static int list(const tmatch_profile_store_t *s, const struct args *a, const char *match)
{
	tmatch_profile_store_entry_t *v;
	tmatch_error_t err;
	const char *dir = tmatch_profile_store_path(s);
	int n, damaged, i, shown = 0;
	uint64_t total = 0;

	tmatch_error_clear(&err);
	if (tmatch_profile_store_list(s, &v, &n, &damaged, &err) < 0)
		return tmatch_cli_report(&err);
	if (!match && a->json) {
		int rc = list_json(dir, v, n, damaged);

		free(v);
		return rc;
	}
	if (!match && n > 0)
		printf("%-16s  %7s  %10s  %-16s  %-16s  %s\n", "ENTRY", "RANKS", "BYTES",
		       "LAST USED", "NAME", "EXECUTABLE");
	for (i = 0; i < n; i++) {
		total += v[i].size;
		if (match) {
			if (strncmp(v[i].stem, match, strlen(match)) != 0 &&
			    strcmp(v[i].key.name, match) != 0)
				continue;
			print_entry(&v[i], dir);
		} else {
			char when[32];

			local_time(v[i].used_ns, 0, when, sizeof(when));
			printf("%-16s  %7d  %10llu  %-16s  %-16s  %s\n", v[i].stem, v[i].key.ranks,
			       (unsigned long long)v[i].size, when,
			       v[i].key.name[0] ? v[i].key.name : "-",
			       v[i].exe[0] ? v[i].exe : "-");
		}
		shown++;
	}
	free(v);
	if (!match)
		printf("%d entries, %llu bytes in %s\n", n, (unsigned long long)total, dir);
	if (damaged)
		tmatch_cli_error("%d damaged entries: treematch store gc removes them", damaged);
	if (match && !shown) {
		tmatch_cli_error("no entry '%s' in %s", match, dir);
		return 1;
	}
	return 0;
}

/* One command on the opened store. */
static int run(tmatch_profile_store_t *s, const struct args *a, const char *cmd, int npos,
               char **argv, const char *command)
{
	tmatch_profile_store_key_t key;
	tmatch_error_t err;
	char path[PATH_MAX], exe[PATH_MAX];
	int rc, removed = 0;

	tmatch_error_clear(&err);
	if (!strcmp(cmd, "list") && npos == 0)
		return list(s, a, NULL);
	if (!strcmp(cmd, "show") && npos == 1)
		return list(s, a, argv[0]);
	if (!strcmp(cmd, "forget") && npos == 1) {
		if (tmatch_profile_store_forget(s, argv[0], &removed, &err) < 0)
			return tmatch_cli_report(&err);
		printf("removed %d entries\n", removed);
		return removed ? 0 : 1;
	}
	if (!strcmp(cmd, "gc") && npos == 0) {
		if (tmatch_profile_store_gc(s, a->max_size, &removed, &err) < 0)
			return tmatch_cli_report(&err);
		printf("evicted %d entries\n", removed);
		return 0;
	}
	if ((!strcmp(cmd, "find") && npos == 1) || (!strcmp(cmd, "put") && npos == 2)) {
		int put = cmd[0] == 'p';
		uint64_t ranks = a->ranks;
		const char *profile = NULL;
		FILE *f = NULL;

		if (!realpath(argv[0], exe)) {
			tmatch_cli_error("%s: %s", argv[0], strerror(errno));
			return 1;
		}
		if (put) {
			tmatch_profile_t *p;

			if (!(profile = tmatch_cli_input(argv[1], "PROFILE")))
				return 1;
			p = tmatch_profile_load(profile, NULL, NULL, NULL, &err);
			if (!p)
				return tmatch_cli_report(&err);
			ranks = (uint64_t)tmatch_profile_ranks(p);
			tmatch_profile_destroy(p);
		} else if (!ranks) {
			tmatch_cli_error("store find: give the run's --ntasks");
			return 2;
		}
		if (tmatch_profile_store_key(exe, (int)ranks, a->name, &key, &err) < 0)
			return tmatch_cli_report(&err);
		if (put) {
			if (!(f = tmatch_file_open(profile, NULL, &err)))
				return tmatch_cli_report(&err);
			rc = tmatch_profile_store_put(s, &key, fileno(f), profile, exe, a->max_size,
			                              &err);
			fclose(f);
			if (rc < 0)
				return tmatch_cli_report(&err);
			tmatch_profile_store_stem(&key, path, sizeof(path));
			printf("stored %s\n", path);
			return 0;
		}
		rc = tmatch_profile_store_get(s, &key, 0, path, sizeof(path), NULL, &err);
		if (rc < 0)
			return tmatch_cli_report(&err);
		if (rc == 0) {
			tmatch_profile_store_key_format(&key, exe, sizeof(exe));
			tmatch_cli_error("no stored profile for %s (%s)", argv[0], exe);
			return 1;
		}
		printf("%s\n", path);
		return 0;
	}
	tmatch_cli_error("%s: wrong arguments", command);
	tmatch_cli_usage_hint(command);
	return 2;
}

int tmatch_cli_store(int argc, char **argv)
{
	struct args a;
	tmatch_profile_store_t *s;
	tmatch_error_t err;
	const char *cmd, *help = NULL;
	char command[32];
	tmatch_config_t site;
	int rc, npos;
	size_t c;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (argc < 2) {
			tmatch_cli_error("store: give a command");
			tmatch_cli_usage_hint("store");
			return 2;
		}
		usage(stdout);
		return 0;
	}
	cmd = argv[1];
	for (c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
		if (!strcmp(cmd, commands[c].name))
			help = commands[c].help;
	if (!help) {
		tmatch_cli_error("store: unknown command '%s'", cmd);
		tmatch_cli_usage_hint("store");
		return 2;
	}
	snprintf(command, sizeof(command), "store %s", cmd);
	if ((rc = parse(argc - 1, argv + 1, &a, help, command)))
		return rc < 0 ? 0 : rc;
	npos = argc - 1 - optind;
	argv += 1 + optind;
	tmatch_error_clear(&err);
	/* the store the plugin uses: the site's (store= of the plugin's line)
	   unless --site says another; only put creates the user's directory */
	if (!a.site && tmatch_place_site_policy(getenv("SLURM_CONF"), &site, NULL) == 0 &&
	    site.store[0])
		a.site = site.store;
	if (!(s = tmatch_profile_store_open(a.site, NULL, NULL,
	                                    !strcmp(cmd, "put") ? TMATCH_STORE_CREATE : 0, &err))) {
		/* nothing stored yet: an empty store, except for what needs an entry */
		if (errno == ENOENT && (!strcmp(cmd, "list") || !strcmp(cmd, "gc"))) {
			const char *dir = err.file[0] ? err.file : NULL;

			if (!strcmp(cmd, "list") && a.json)
				return list_json(dir, NULL, 0, 0);
			if (!strcmp(cmd, "list"))
				printf("0 entries, 0 bytes in %s (none yet)\n",
				       dir ? dir : "the store");
			return 0;
		}
		return tmatch_cli_report(&err);
	}
	rc = run(s, &a, cmd, npos, argv, command);
	tmatch_profile_store_close(s);
	return rc;
}
