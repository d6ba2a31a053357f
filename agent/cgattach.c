// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The cgroup links of one cgroup: attached (adopting or replacing what
 * is pinned), pinned, detached (agent/agent_int.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "containers.h"
#include "daemon.h"
#include "bpfutil.h"
#include "cgroup.h"
#include "limits_agent.h"
#include "log.h"
#include "loop.h"
#include "lsm.h"
#include "file_rules.h"
#include "net_rules.h"
#include "pin.h"
#include "replace.h"
#include "sandbox.h"
#include "records.h"
#include "rules_check.h"
#include "setup_agent.h"
#include "stockade_limits.h"
#include "stockade.skel.h"

/* ---- confine cgroups ---- */

void cg_progs(struct agent *a, struct bpf_program *progs[SANDBOX_N_LINKS])
{
	progs[0] = a->skel->progs.stk_connect4;
	progs[1] = a->skel->progs.stk_connect6;
	progs[2] = a->skel->progs.stk_sendmsg4;
	progs[3] = a->skel->progs.stk_sendmsg6;
	progs[4] = a->skel->progs.stk_sock_create;
	progs[5] = a->skel->progs.stk_egress;
	progs[6] = a->skel->progs.stk_bind4;
	progs[7] = a->skel->progs.stk_bind6;
}

int cg_link_path(struct agent *a, uint64_t id, const struct bpf_program *prog,
			char *path, size_t len)
{
	char name[128];

	snprintf(name, sizeof(name), "cg-%llu-%s", (unsigned long long)id,
		 bpf_program__name(prog));
	return pin__link_path(path, len, a->pin_dir, name);
}

/*
 * Is the pinned link still attached to cgroup id with prog's attach type?
 * A link whose cgroup went away is "defunct" (cgroup id 0).
 */
static bool cg_link_fits(struct bpf_link *link, uint64_t id,
			 const struct bpf_program *prog)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_link__fd(link), &info, &len))
		return false;
	return info.type == BPF_LINK_TYPE_CGROUP && info.cgroup.cgroup_id == id &&
	       info.cgroup.attach_type == bpf_program__expected_attach_type(prog);
}

/*
 * Confine cg with the cgroup programs, each attached exactly once: a pinned
 * link of the same program is adopted, one of another build is switched to
 * this build's program in place (BPF_LINK_UPDATE: atomic, no window), and
 * only a missing one is attached (and pinned). *how says which happened.
 * fds non-NULL: what the caller keeps is each link's fd there (a copy),
 * and links[] is only scratch, destroyed on return: libbpf's struct
 * bpf_link also holds its pin path, about 100 bytes a link with the
 * allocations, 0.8 MiB for the 8 links of each of 1,000 cgroups.
 */
int attach_links(struct agent *a, uint64_t id, const char *rel,
			struct bpf_program **progs, int n, struct bpf_link **links,
			int *fds, const char **how)
{
	bool is_new[SANDBOX_N_LINKS > WATCH_N_LINKS ? SANDBOX_N_LINKS :
		    WATCH_N_LINKS] = { false };
	char path[PATH_MAX], pin[PATH_MAX];
	unsigned int adopted = 0, replaced = 0;
	struct bpf_link *link;
	int fd, i, k, err = 0;

	snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		err = cg_link_path(a, id, progs[i], pin, sizeof(pin));
		if (err)
			break;
		link = access(pin, F_OK) ? NULL : bpf_link__open(pin);
		if (link && !cg_link_fits(link, id, progs[i])) {
			/* Not what its name says: drop the pin, attach anew. */
			unlink(pin);
			bpf_link__destroy(link);
			link = NULL;
		}
		if (link) {
			if (pin__same_prog(link, progs[i])) {
				adopted++;
			} else if ((err = bpf_link__update_program(link, progs[i]))) {
				pr_err("cgroup", "switching %s of %s to this build's program failed: %s; the old program stays",
				       bpf_program__name(progs[i]), path, strerror(-err));
				bpf_link__destroy(link);
				break;
			} else {
				replaced++;
			}
			links[i] = link;
			continue;
		}
		links[i] = bpf_program__attach_cgroup(progs[i], fd);
		if (!links[i]) {
			err = -errno;
			pr_err("cgroup", "attaching %s to %s failed: %s",
			       bpf_program__name(progs[i]), path, strerror(errno));
			break;
		}
		is_new[i] = true;
		err = bpf_link__pin(links[i], pin);
		if (err) {
			pr_err("pin", "pinning %s failed: %s", pin, strerror(-err));
			i++;
			break;
		}
	}
	close(fd);
	for (k = 0; !err && fds && k < n; k++) {
		fds[k] = fcntl(bpf_link__fd(links[k]), F_DUPFD_CLOEXEC, 3);
		if (fds[k] < 0) {
			err = -errno;
			pr_err("cgroup", "keeping the link fds of %s failed: %s; raise the agent's open-file limit (LimitNOFILE)",
			       path, strerror(errno));
			while (k-- > 0) {
				close(fds[k]);
				fds[k] = -1;
			}
			break;
		}
	}
	for (k = 0; !err && fds && k < n; k++) {
		/* Closes libbpf's fd: ours and the pin hold the link. */
		bpf_link__destroy(links[k]);
		links[k] = NULL;
	}
	if (err) {
		/* Nothing half-applied: drop what this call attached; adopted
		 * links stay pinned, and keep confining. */
		while (i-- > 0) {
			if (is_new[i]) {
				bpf_link__unpin(links[i]);
				bpf_link_detach(bpf_link__fd(links[i]));
			}
			bpf_link__destroy(links[i]);
			links[i] = NULL;
		}
		return err;
	}
	*how = replaced ? "replaced" : adopted == (unsigned int)n ? "adopted" :
	       "attached";
	return 0;
}

int attach_cg(struct agent *a, struct sandbox_cg *cg, const char **how)
{
	struct bpf_program *progs[SANDBOX_N_LINKS];
	struct bpf_link *links[SANDBOX_N_LINKS] = { NULL };

	cg_progs(a, progs);
	return attach_links(a, cg->id, cg->path, progs, SANDBOX_N_LINKS,
			    links, cg->link_fd, how);
}

/* Close our handles on cg's links; the pins keep them attached. */
void close_cg(struct sandbox_cg *cg)
{
	int i;

	for (i = 0; i < SANDBOX_N_LINKS; i++) {
		if (cg->link_fd[i] >= 0)
			close(cg->link_fd[i]);
		cg->link_fd[i] = -1;
	}
}

/*
 * Remove cg's enforcement: its links (detached even if someone else holds
 * them open, and unpinned), then its entries; log a detach record unless
 * why is NULL (`stockade detach` logged it already).
 */
/* Detach and unpin cg's links (detached even if someone else holds them
 * open). */
void detach_cg_links(struct agent *a, struct sandbox_cg *cg)
{
	struct bpf_program *progs[SANDBOX_N_LINKS];
	char pin[PATH_MAX];
	int i;

	cg_progs(a, progs);
	for (i = 0; cg->direct && i < SANDBOX_N_LINKS; i++) {
		if (cg->link_fd[i] >= 0)
			bpf_link_detach(cg->link_fd[i]);
		if (!cg_link_path(a, cg->id, progs[i], pin, sizeof(pin)))
			unlink(pin);
	}
	close_cg(cg);
}

void detach_cg(struct agent *a, struct sandbox_cg *cg, const char *why)
{
	detach_cg_links(a, cg);
	/* Links first: a program must never run without its entry. */
	sandbox_entry_delete(a, cg->id);
	/* Its counters, and the limit values found put back: enforcement
	 * is removed, limits are enforcement too. */
	limits__detach(a->lim, cg, why ?: "detach_command");
	if (!why)
		return;
	events__begin(&a->ev, "detach");
	records__detach(&a->ev.j, agent__policy_name(a, cg->policy_id), cg->path,
			cg->id, why);
	records__container(&a->ev.j, cg->ctr);
	events__emit(&a->ev);
}

/* Forget a->cgt.v[i] (its links and entries are handled by the caller). */
void untrack(struct agent *a, size_t i)
{
	if (a->cgt.v[i].file_scope)
		a->scope_stale = true;
	if (a->cgt.v[i].wd >= 0 && a->cg_ino_fd >= 0) {
		char path[2 * PATH_MAX];
		int wd;

		/* Its directory's discovery watch is this one too: a
		 * directory that stays (released, detached) keeps one. */
		disc_forget(a, a->cgt.v[i].wd);
		inotify_rm_watch(a->cg_ino_fd, a->cgt.v[i].wd);
		snprintf(path, sizeof(path), "%s%s", a->cgroot, a->cgt.v[i].path);
		wd = inotify_add_watch(a->cg_ino_fd, path, IN_CREATE | IN_ONLYDIR);
		if (wd >= 0)
			disc_seen(a, wd);
	}
	setup__revoke(&a->setup, a->cgt.v[i].id);
	sandbox_table__remove(&a->cgt, i);
	}
