// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade reload`: signal the running agent and wait for its result;
 * `stockade reopen-logs`: signal it to reopen --log (logrotate).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "ctl.h"
#include "limits_agent.h"
#include "limits_util.h"
#include "log.h"
#include "lsm.h"
#include "pin.h"
#include "replace.h"
#include "sandbox.h"
#include "stockade.skel.h"
#include "ctl_int.h"

/* Is pid a stockade agent (its comm, as the kernel holds it)? */
static bool is_stockade(uint32_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "stockade", 8);
}

/*
 * Print the problems of the reload m reports, as the agent found them
 * (`reload_msgs`, include/lifecycle.h): one `check`-style line each on
 * stderr. Why the agent's answer, not a validation of our own: only the
 * agent knows its policy paths (relative to its working directory), the
 * cgroups its limits would land on and the room left in its maps, so a
 * second check here could pass what the agent refused, or the reverse.
 * An entry numbered for another reload (one that started since) is not
 * ours: we say so rather than print another reload's problems.
 */
static void print_problems(const char *bpffs, const struct agent_meta *m)
{
	struct reload_msg msg;
	int fd = pin__map_get(bpffs, "reload_msgs");
	__u32 k;

	if (fd < 0) {
		pr_err("reload", "cannot read %s/maps/reload_msgs: %s; the agent's policy_error records list the problems",
		       bpffs, strerror(-fd));
		return;
	}
	for (k = 0; k < m->reload_problems && k < RELOAD_MSGS_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, &msg) || msg.reload != m->reloads) {
			pr_err("reload", "another reload ran meanwhile; the agent's policy_error records list the problems");
			break;
		}
		msg.text[sizeof(msg.text) - 1] = '\0';
		fprintf(stderr, "%s\n", msg.text);
	}
	close(fd);
}

int ctl__reload(int argc, char **argv)
{
	struct agent_meta before = { 0 }, m = { 0 };
	uint32_t pid = 0;
	int dir_fd, i, rc = 1;
	const char *bpffs = PIN_DIR_DEFAULT;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bpffs") && i + 1 < argc) {
			bpffs = argv[++i];
		} else {
			fprintf(stderr, "usage: stockade reload [--bpffs DIR]\n");
			return 2;
		}
	}
	dir_fd = pin__dir_open(bpffs, false);
	if (dir_fd < 0) {
		pr_err("reload", "nothing is pinned at %s: no agent to reload", bpffs);
		return 1;
	}
	if (!pin__agent_running(bpffs, dir_fd, &pid) || !pid || !is_stockade(pid)) {
		pr_err("reload", "no agent is running on %s; start one (stockade agent --bpffs %s ...): it reads the policy files when it starts",
		       bpffs, bpffs);
		goto out;
	}
	if (pin__meta_read(bpffs, &before)) {
		pr_err("reload", "cannot read %s/maps/agent_meta", bpffs);
		goto out;
	}
	if (kill((pid_t)pid, SIGHUP)) {
		pr_err("reload", "signalling the agent (pid %u) failed: %s", pid, strerror(errno));
		goto out;
	}
	/* The agent counts each reload it finished; wait for ours (loading
	 * and compiling a large set takes a while, verifying nothing). */
	for (i = 0; i < 3000; i++) {
		if (!pin__meta_read(bpffs, &m) && m.reloads > before.reloads)
			break;
		if (!pin__agent_running(bpffs, dir_fd, &pid)) {
			pr_err("reload", "the agent stopped before it reloaded");
			goto out;
		}
		usleep(10000);
	}
	if (i == 3000) {
		pr_err("reload", "the agent (pid %u) did not reload within 30 s", pid);
		goto out;
	}
	switch (m.reload_result) {
	case RELOAD_APPLIED:
		printf("reload: applied; the new policy set is in force\n");
		rc = 0;
		break;
	case RELOAD_UNCHANGED:
		printf("reload: unchanged; the policy files hold what is in force\n");
		rc = 0;
		break;
	default:
		print_problems(bpffs, &m);
		pr_err("reload", "rejected: the policy set is invalid, and the agent (pid %u) keeps enforcing the previous one; fix the problems above (its policy_error records say the same) and reload again",
		       pid);
		break;
	}
out:
	close(dir_fd);
	return rc;
}

/*
 * The agent reopens --log on SIGUSR1, in its main loop, within
 * milliseconds. Found as `reload` finds it (the pin directory's lock and
 * agent_meta's pid, checked to be a stockade), so that a stale pid never
 * sends SIGUSR1, whose default action kills, to another program. The
 * result is the agent's to say: a `log_reopen` record at the top of the
 * new file, or, when it could not open one, in the old file and on its
 * stderr (the journal under systemd).
 */
int ctl__reopen_logs(int argc, char **argv)
{
	const char *bpffs = PIN_DIR_DEFAULT;
	uint32_t pid = 0;
	int dir_fd, i, rc = 1;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bpffs") && i + 1 < argc) {
			bpffs = argv[++i];
		} else {
			fprintf(stderr, "usage: stockade reopen-logs [--bpffs DIR]\n");
			return 2;
		}
	}
	dir_fd = pin__dir_open(bpffs, false);
	if (dir_fd < 0) {
		pr_err("reopen-logs", "nothing is pinned at %s: no agent to signal", bpffs);
		return 1;
	}
	if (!pin__agent_running(bpffs, dir_fd, &pid) || !pid || !is_stockade(pid)) {
		pr_err("reopen-logs", "no agent is running on %s; the next one opens its --log FILE when it starts",
		       bpffs);
		goto out;
	}
	if (kill((pid_t)pid, SIGUSR1)) {
		pr_err("reopen-logs", "signalling the agent (pid %u) failed: %s", pid, strerror(errno));
		goto out;
	}
	printf("reopen-logs: signalled the agent (pid %u); its log_reopen record says the result\n", pid);
	rc = 0;
out:
	close(dir_fd);
	return rc;
}
