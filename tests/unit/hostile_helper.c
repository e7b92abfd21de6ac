/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hostile_helper.c - a stand-in for treematch-helper as code execution in
 * one of its parsers would make it: the root side starts it as it starts
 * the helper (test_placement_helper.c gives its descriptor), and it writes
 * on fd 3 what the step's --treematch value (from its input, fd 4, once fd 5
 * says it is written) names:
 *   "count"  a hello, then a placed head announcing 65,536 tasks;
 *   "flood"  a hello, a placed head, a valid record per task, then 100 MB.
 * It checks nothing and confines nothing: the root side must hold anyway.
 */
#include "placement/placement_private.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	const struct tmatch__helper_input *h;
	struct tmatch__helper_hello hello;
	struct tmatch__helper_head head;
	struct stat st;
	const char *p, *value = "", *end;
	const int32_t *ranks;
	static char junk[1 << 20];

	if (read(5, &st, 1) != 1 || fstat(4, &st) < 0 ||
	    (p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, 4, 0)) == MAP_FAILED)
		return 1;
	end = p + st.st_size;
	h = (const void *)p;
	ranks =
	    (const int32_t *)(const void *)(p + sizeof(*h) + (size_t)h->ngroups * sizeof(gid_t));
	for (p = (const char *)(ranks + h->nlocal); p + 8 <= end;) {
		uint32_t tag[2];

		memcpy(tag, p, sizeof(tag));
		if (tag[0] == TMATCH__HIN_END)
			break;
		if (tag[0] == TMATCH__HIN_USER_VALUE)
			value = p + 8;
		p += 8 + tag[1];
	}
	memset(&hello, 0, sizeof(hello));
	hello.magic = TMATCH__HELPER_HELLO_MAGIC;
	hello.version = TMATCH__HELPER_WIRE_VERSION;
	strcpy(hello.node_name, "n0");
	tmatch__write_all(3, &hello, sizeof(hello));
	memset(&head, 0, sizeof(head));
	head.magic = TMATCH__HELPER_HEAD_MAGIC;
	head.version = TMATCH__HELPER_WIRE_VERSION;
	head.status = TMATCH__HELPER_OUT_PLACED;
	head.task_size = sizeof(struct tmatch__helper_task);
	strcpy(head.mapper, "auto");
	head.ntasks = strcmp(value, "count") == 0 ? 65536 : h->nlocal;
	tmatch__write_all(3, &head, sizeof(head));
	for (int i = 0; i < h->nlocal && strcmp(value, "flood") == 0; i++) {
		struct tmatch__helper_task t;

		memset(&t, 0, sizeof(t));
		t.size = sizeof(t);
		t.version = TMATCH__HELPER_TASK_VERSION;
		t.rank = ranks[i];
		t.leaf = i;
		tmatch__write_all(3, &t, sizeof(t));
	}
	for (int i = 0; i < 100; i++)
		if (tmatch__write_all(3, junk, sizeof(junk)) < 0)
			break;
	return 0;
}
