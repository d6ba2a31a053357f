// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The pin directory: layout in include/lifecycle.h, lifecycle in
 * README.md ("Lifecycle").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "pin.h"
#include "stockade.skel.h"

int pin__map_path(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/maps/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pin__link_path(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/links/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *pin__map_name(const struct stockade *skel, const struct bpf_map *map)
{
	if (map == skel->maps.data)
		return "data";
	if (map == skel->maps.bss)
		return "bss";
	/* .rodata is constant, the scratch maps hold nothing between two
	 * runs of a program, and rcu_sync is only ever written (a reload's
	 * grace period): each load keeps its own. */
	if (bpf_map__is_internal(map) || map == skel->maps.lsm_scratch ||
	    map == skel->maps.exec_scratch ||
	    map == skel->maps.rcu_sync || map == skel->maps.rcu_inner)
		return NULL;
	return bpf_map__name(map);
}

static int mkdir_0700(const char *path)
{
	if (mkdir(path, 0700) && errno != EEXIST) {
		int err = -errno;

		pr_err("pin", "cannot create %s: %s", path, strerror(errno));
		return err;
	}
	return 0;
}

int pin__bpffs_check(const char *dir, char *why, size_t why_len)
{
	char parent[PATH_MAX], *slash;
	struct statfs sf;

	if (strlen(dir) + sizeof("/links/") + 64 > PATH_MAX || dir[0] != '/' ||
	    strchr(strrchr(dir, '/'), '.')) {
		/* bpffs refuses '.' in the names it holds. */
		snprintf(why, why_len, "--bpffs %s: expected an absolute path, without '.', of a directory on bpffs",
			 dir);
		return -EINVAL;
	}
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (statfs(parent, &sf) || sf.f_type != BPF_FS_MAGIC) {
		snprintf(why, why_len, "bpffs is not mounted at %s; mount it (mount -t bpf bpf %s) or pass --bpffs DIR on a bpffs mount",
			 parent, parent);
		return -ENOENT;
	}
	return 0;
}

int pin__dir_open(const char *dir, bool create)
{
	char why[2 * PATH_MAX + 128], sub[PATH_MAX];
	int fd, err;

	err = pin__bpffs_check(dir, why, sizeof(why));
	if (err) {
		pr_err("pin", "%s", why);
		return err;
	}
	if (create) {
		err = mkdir_0700(dir);
		snprintf(sub, sizeof(sub), "%s/maps", dir);
		err = err ?: mkdir_0700(sub);
		snprintf(sub, sizeof(sub), "%s/links", dir);
		err = err ?: mkdir_0700(sub);
		if (err)
			return err;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return fd;
}

int pin__lock(int dir_fd, bool exclusive)
{
	if (flock(dir_fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB))
		return errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;
	return 0;
}

int pin__map_get(const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (pin__map_path(path, sizeof(path), dir, name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

bool pin__has_maps(const char *dir)
{
	int fd = pin__map_get(dir, "sandboxes");

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int pin__meta_read(const char *dir, struct agent_meta *m)
{
	__u32 zero = 0;
	int fd = pin__map_get(dir, "agent_meta"), err = 0;

	if (fd < 0)
		return fd;
	if (bpf_map_lookup_elem(fd, &zero, m))
		err = -errno;
	close(fd);
	return err;
}

bool pin__agent_running(const char *dir, int dir_fd, uint32_t *pid)
{
	struct agent_meta m = { 0 };

	*pid = 0;
	if (pin__lock(dir_fd, false) == 0) {
		flock(dir_fd, LOCK_UN);
		return false;
	}
	if (!pin__meta_read(dir, &m))
		*pid = m.pid;
	return true;
}

/* Why the pins do not fit this build, for the caller (agent/replace.c). */
static int stale(char *why, size_t len, const char *what)
{
	snprintf(why, len, "%s", what);
	return -ESTALE;
}

int pin__maps_prepare(struct stockade *skel, const char *dir,
		      unsigned int ring_size, char *why, size_t why_len)
{
	char path[PATH_MAX], what[256];
	struct bpf_map_info info;
	struct agent_meta meta;
	struct bpf_map *map;
	const char *name;
	__u32 len;
	int fd, err;

	bpf_object__for_each_map(map, skel->obj) {
		name = pin__map_name(skel, map);
		if (!name)
			continue;
		err = pin__map_path(path, sizeof(path), dir, name);
		if (err)
			return err;
		fd = bpf_obj_get(path);
		if (fd < 0 && errno != ENOENT) {
			err = -errno;
			pr_err("pin", "cannot open the pinned map %s: %s", path, strerror(errno));
			return err;
		}
		if (fd >= 0) {
			memset(&info, 0, sizeof(info));
			len = sizeof(info);
			err = bpf_obj_get_info_by_fd(fd, &info, &len);
			close(fd);
			if (err) {
				err = -errno;
				pr_err("pin", "cannot read the pinned map %s: %s", path,
				       strerror(errno));
				return err;
			}
			if (map == skel->maps.rb) {
				if (!ring_size) {
					/* Keep the ring: it may hold records. */
					bpf_map__set_max_entries(map, info.max_entries);
				} else if (ring_size != info.max_entries) {
					/* A ring cannot be resized: a new one,
					 * after the old one is drained. */
					snprintf(what, sizeof(what),
						 "ring buffer of %u bytes, --ring-size %u",
						 info.max_entries, ring_size);
					return stale(why, why_len, what);
				}
			}
			if (info.type != bpf_map__type(map) ||
			    info.key_size != bpf_map__key_size(map) ||
			    info.value_size != bpf_map__value_size(map) ||
			    info.max_entries != bpf_map__max_entries(map) ||
			    info.map_flags != bpf_map__map_flags(map)) {
				snprintf(what, sizeof(what),
					 "map %s: type %u key %u value %u entries %u flags %#x, this build: %u %u %u %u %#x",
					 name, info.type, info.key_size, info.value_size,
					 info.max_entries, info.map_flags,
					 bpf_map__type(map), bpf_map__key_size(map),
					 bpf_map__value_size(map), bpf_map__max_entries(map),
					 bpf_map__map_flags(map));
				return stale(why, why_len, what);
			}
		}
		err = bpf_map__set_pin_path(map, path);
		if (err)
			return err;
	}
	if (!pin__meta_read(dir, &meta) && meta.layout &&
	    meta.layout != PIN_LAYOUT_VERSION) {
		snprintf(what, sizeof(what), "layout version %u, this build: %u",
			 meta.layout, PIN_LAYOUT_VERSION);
		return stale(why, why_len, what);
	}
	return 0;
}

int pin__prog_tag(int prog_fd, __u8 tag[8], __u32 *prog_id)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	memcpy(tag, info.tag, 8);
	if (prog_id)
		*prog_id = info.id;
	return 0;
}

/* The ids of the maps program prog_fd uses, up to *n; *n set to their
 * number. */
static int prog_maps(int prog_fd, __u32 *ids, __u32 *n)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	info.nr_map_ids = *n;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	if (info.nr_map_ids > *n)
		return -E2BIG;
	*n = info.nr_map_ids;
	return 0;
}

/* Map id's name and, for libbpf's constants (a name with ".rodata"), its
 * value: malloc'd into *val (the caller frees), *size its bytes. *val
 * NULL for any other map. */
static int map_rodata(__u32 id, char name[BPF_OBJ_NAME_LEN], void **val, __u32 *size)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info), key = 0;
	int fd, err = 0;

	*val = NULL;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	memcpy(name, info.name, BPF_OBJ_NAME_LEN);
	name[BPF_OBJ_NAME_LEN - 1] = '\0';
	if (!strstr(name, ".rodata") || info.type != BPF_MAP_TYPE_ARRAY)
		goto out;
	*size = info.value_size;
	*val = calloc(1, info.value_size ? info.value_size : 1);
	if (!*val) {
		err = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(fd, &key, *val)) {
		err = -errno;
		free(*val);
		*val = NULL;
	}
out:
	close(fd);
	return err;
}

#define SAME_PROG_MAPS	256

/*
 * Do programs a and b hold the same constants? The kernel's tag leaves
 * the values of the maps an instruction points to out, and libbpf's
 * .rodata maps hold what the agent set before load (dcache_on): each of
 * a's must have a map of b's of the same name with the same bytes. Any
 * doubt is "no": the caller then replaces the link, which is safe.
 */
static bool same_rodata(int a_fd, int b_fd)
{
	__u32 a_ids[SAME_PROG_MAPS], b_ids[SAME_PROG_MAPS];
	__u32 na = SAME_PROG_MAPS, nb = SAME_PROG_MAPS, i, j, sa, sb;
	char a_name[BPF_OBJ_NAME_LEN], b_name[BPF_OBJ_NAME_LEN];
	void *va, *vb;
	bool same = true, found;

	if (prog_maps(a_fd, a_ids, &na) || prog_maps(b_fd, b_ids, &nb))
		return false;
	for (i = 0; same && i < na; i++) {
		if (map_rodata(a_ids[i], a_name, &va, &sa))
			return false;
		if (!va)
			continue;
		for (found = false, j = 0; !found && j < nb; j++) {
			if (map_rodata(b_ids[j], b_name, &vb, &sb)) {
				same = false;
				break;
			}
			if (vb && !strcmp(a_name, b_name)) {
				found = true;
				same = sa == sb && !memcmp(va, vb, sa);
			}
			free(vb);
		}
		same = same && found;
		free(va);
	}
	return same;
}

/* Answers of pin__same_prog() by (pinned program, this program) id: a
 * thousand cgroups' links share a handful of programs, and comparing
 * their maps costs some syscalls each. Ids are never reused while
 * the pinned program is alive, and the link being asked about holds it. */
#define SAME_PROG_MEMO	64
static struct {
	__u32 old_id, new_id;
	bool same;
} same_memo[SAME_PROG_MEMO];
static unsigned int same_memo_n;

bool pin__same_prog(struct bpf_link *link, const struct bpf_program *prog)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info), new_id = 0;
	__u8 have[8], want[8];
	unsigned int i;
	int old_fd;
	bool same;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_link__fd(link), &info, &len) ||
	    pin__prog_tag(bpf_program__fd(prog), want, &new_id))
		return false;
	for (i = 0; i < same_memo_n && i < SAME_PROG_MEMO; i++)
		if (same_memo[i].old_id == info.prog_id && same_memo[i].new_id == new_id)
			return same_memo[i].same;
	old_fd = bpf_prog_get_fd_by_id(info.prog_id);
	if (old_fd < 0)
		return false;
	same = !pin__prog_tag(old_fd, have, NULL) &&
	       !memcmp(have, want, sizeof(have)) &&
	       same_rodata(old_fd, bpf_program__fd(prog));
	close(old_fd);
	i = same_memo_n++ % SAME_PROG_MEMO;
	same_memo[i].old_id = info.prog_id;
	same_memo[i].new_id = new_id;
	same_memo[i].same = same;
	return same;
}

int pin__parse_cg_link(const char *name, uint64_t *id, const char **prog)
{
	unsigned long long v;
	char *end;

	if (strncmp(name, "cg-", 3) || name[3] < '0' || name[3] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(name + 3, &end, 10);
	if (errno || *end != '-' || !end[1])
		return -EINVAL;
	*id = v;
	*prog = end + 1;
	return 0;
}

static int empty_dir(const char *path)
{
	struct dirent *de;
	DIR *d = opendir(path);
	int err = 0, dfd;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dfd, de->d_name, 0) && errno != ENOENT && !err) {
			err = -errno;
			pr_err("pin", "cannot remove %s/%s: %s", path, de->d_name,
			       strerror(errno));
		}
	}
	closedir(d);
	if (!err && rmdir(path) && errno != ENOENT) {
		err = -errno;
		pr_err("pin", "cannot remove %s: %s", path, strerror(errno));
	}
	return err;
}

/* Remove one state's pins: links first, the programs go before anything
 * they use; then the maps and the directories. */
static int remove_state(const char *dir)
{
	char sub[PATH_MAX];
	int err;

	snprintf(sub, sizeof(sub), "%s/links", dir);
	err = empty_dir(sub);
	snprintf(sub, sizeof(sub), "%s/maps", dir);
	err = err ?: empty_dir(sub);
	return err;
}

int pin__remove_all(const char *dir)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err;

	err = remove_state(dir);
	/* The staging states of replacements that were interrupted. */
	d = opendir(dir);
	while (!err && d && (de = readdir(d))) {
		if (strncmp(de->d_name, PIN_STAGING_PREFIX, strlen(PIN_STAGING_PREFIX)))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		err = remove_state(sub);
		if (!err && rmdir(sub) && errno != ENOENT) {
			err = -errno;
			pr_err("pin", "cannot remove %s: %s", sub, strerror(errno));
		}
	}
	if (d)
		closedir(d);
	if (!err && rmdir(dir) && errno != ENOENT) {
		err = -errno;
		pr_err("pin", "cannot remove %s: %s", dir, strerror(errno));
	}
	return err;
}
