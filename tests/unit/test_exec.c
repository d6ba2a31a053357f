// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Exec and exit records into JSON (agent/exec.c): ids, the parent chain,
 * scripts, argv split and escaped as every string is, its cap.
 */
#include <stdlib.h>

#include "test.h"
#include "exec.h"
#include "exec_agent.h"
#include "policy.h"
#include "sandbox.h"

static struct policy pol = { .name = "p", .hash = 0xa6f034c60b1ae1c2ULL,
			     .category = "model-generated-code" };
static struct sandbox_table cgt;

static const char *pname(const void *ctx, uint32_t id)
{
	(void)ctx;
	return id == 3 ? "p" : "(unknown)";
}

static const struct policy *ppol(const void *ctx, uint32_t id)
{
	(void)ctx;
	return id == 3 ? &pol : NULL;
}

static uint32_t slot_id(const void *ctx, uint32_t slot)
{
	(void)ctx;
	return slot;
}

static const struct names names = { .cgt = &cgt, .policy_name = pname,
				    .policy = ppol, .slot_id = slot_id };

static struct exec_event x;
static struct json j;

static const char *fmt(const void *rec, size_t size)
{
	json_begin(&j);
	if (exec__json(&j, rec, size, &names, "/sb"))
		return NULL;
	json_end(&j);
	return j.buf;
}

static void base(void)
{
	memset(&x, 0, sizeof(x));
	x.e.type = EV_EXEC;
	x.e.policy_id = 3;
	x.e.cgroup_id = 77;
	x.e.pid = 100;
	x.e.uid = 1000;
	strcpy(x.e.comm, "busybox");
	x.self = (struct exec_ref){ 5000, 100, 0 };
	x.parent = (struct exec_ref){ 4000, 90, 0 };
	x.ppid = 90;
	x.euid = 0;
	x.dev = (8ULL << 20) | 1;
	x.ino = 1234;
	x.nlink = 1;
	strcpy(x.filename, "/bin/busybox");
	strcpy(x.binary, "/usr/bin/busybox");
	strcpy(x.cwd, "/task");
}

static size_t with_argv(const char *a, size_t n)
{
	memcpy(x.argv, a, n);
	x.argv_len = (uint16_t)n;
	return offsetof(struct exec_event, argv) + n;
}

static void test_exec(void **state)
{
	static const char argv[] = "/bin/busybox\0say \"hi\"\0two\nlines\0";
	const char *out;

	(void)state;
	exec__set_boot_id("0f3e9a1c-5b7d-4e2a-9c11-22aa33bb44cc\n");
	json_init(&j);
	base();
	out = fmt(&x, with_argv(argv, sizeof(argv) - 1));
	EXPECT_STR(out, "{\"policy\":\"p\",\"policy_hash\":\"a6f034c60b1ae1c2\","
		   "\"category\":\"model-generated-code\",\"cgroup\":\"/sb\",\"cgroup_id\":77,"
		   "\"pid\":100,\"ppid\":90,\"uid\":1000,\"euid\":0,\"comm\":\"busybox\","
		   "\"exec_id\":\"0f3e9a1c5b7d4e2a9c1122aa33bb44cc-5000-100\","
		   "\"parent_exec_id\":\"0f3e9a1c5b7d4e2a9c1122aa33bb44cc-4000-90\","
		   "\"binary\":\"/usr/bin/busybox\",\"filename\":\"/bin/busybox\","
		   "\"argv\":[\"/bin/busybox\",\"say \\\"hi\\\"\",\"two\\nlines\"],"
		   "\"cwd\":\"/task\",\"dev\":\"8:1\",\"ino\":1234,\"nlink\":1}\n");
	/* A script, cut argv (no NUL at its end), a parent never seen,
	 * a pending cgroup. */
	x.flags = EXEC_F_SCRIPT | EXEC_F_ARGV_TRUNC | EXEC_F_PARENT_UNSEEN;
	x.parent.unseen = 1;
	x.e.type |= EV_TYPE_PENDING;
	strcpy(x.filename, "run.sh");
	strcpy(x.interp, "/bin/sh");
	out = fmt(&x, with_argv("/bin/sh\0run.sh\0abc", 18));
	EXPECT(out && strstr(out, "\"parent_exec_seen\":false"));
	EXPECT(out && strstr(out, "\"binary\":\"/task/run.sh\",\"interpreter\":\"/usr/bin/busybox\","
				  "\"interpreter_line\":\"/bin/sh\",\"filename\":\"run.sh\""));
	EXPECT(out && strstr(out, "\"argv\":[\"/bin/sh\",\"run.sh\",\"abc\"],\"argv_truncated\":true"));
	EXPECT(out && strstr(out, "\"pending\":true}"));
	/* Invalid UTF-8 in argv stays valid JSON. */
	base();
	out = fmt(&x, with_argv("a\xff\0", 3));
	EXPECT(out && strstr(out, "\"argv\":[\"a\\ufffd\"]"));
	/* An empty argv (the read failed): an empty array. */
	out = fmt(&x, with_argv("", 0));
	EXPECT(out && strstr(out, "\"argv\":[]"));
	/* Too short for an exec record. */
	EXPECT(!fmt(&x, offsetof(struct exec_event, argv) - 1));
	json_free(&j);
	DONE();
}

static void test_exit(void **state)
{
	struct exit_event e;
	const char *out;

	(void)state;
	json_init(&j);
	exec__set_boot_id("00000000000000000000000000000001");
	memset(&e, 0, sizeof(e));
	e.e.type = EV_EXIT;
	e.e.policy_id = 9;	/* no policy: no hash, no category */
	e.e.pid = 100;
	strcpy(e.e.comm, "sh");
	e.self = (struct exec_ref){ 5000, 100, 0 };
	e.exit_code = 7 << 8;
	e.run_ns = 2500000;
	e.maxrss_kb = 1024;
	out = fmt(&e, sizeof(e));
	EXPECT_STR(out, "{\"policy\":\"(unknown)\",\"cgroup\":\"/sb\",\"cgroup_id\":0,\"pid\":100,"
		   "\"comm\":\"sh\",\"exec_id\":\"00000000000000000000000000000001-5000-100\","
		   "\"status\":7,\"run_ms\":2,\"run_us\":2500,\"maxrss_kb\":1024}\n");
	e.exit_code = 9;
	out = fmt(&e, sizeof(e));
	EXPECT(out && strstr(out, "\"signal\":9,\"run_ms\""));
	e.exit_code = 11 | 0x80;
	out = fmt(&e, sizeof(e));
	EXPECT(out && strstr(out, "\"signal\":11,\"core_dumped\":true"));
	EXPECT(!fmt(&e, sizeof(e) - 1));
	EXPECT_STR(exec__event(EV_EXIT | EV_TYPE_PENDING), "exit");
	EXPECT(!exec__event(EV_DENY));
	json_free(&j);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_exit),
	};

	return cmocka_run_group_tests_name("exec", tests, NULL, NULL);
}
