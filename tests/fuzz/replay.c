/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay.c - run the fuzz harness over files, without libFuzzer: every file
 * named on the command line (directories are walked one level) is fed to
 * LLVMFuzzerTestOneInput. Built by `make check` with the ordinary compiler,
 * so crashes found once stay fixed.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* A harness's setup, when it has one (libFuzzer calls it before any input). */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, bad = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: cannot stat %s\n", argv[i]);
			bad++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad += run_file(argv[i]) != 0;
			files++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char path[4096];
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			bad += run_file(path) != 0;
			files++;
		}
		if (d)
			closedir(d);
	}
	printf("replay: %d inputs, %d unreadable\n", files, bad);
	return bad ? 1 : 0;
}
