// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Replace the pinned state of another build, one cgroup at a time, with
 * no moment unconfined (README.md "Lifecycle", include/lifecycle.h).
 *
 * Pinned maps are reused only when they fit this build. When they do not
 * (a key or value changed, a map came or went, PIN_LAYOUT_VERSION moved,
 * another --ring-size), this build loads with fresh maps pinned in a
 * staging directory, DIR/staging-<seq>-<pid>, and fills them as a first start
 * does, carrying over what must continue: the sequence number, the
 * `detached` marks, the limit values found (`lim_saved`), policy ids and
 * the counters where their layout still fits. Then:
 *
 *  - BPF-LSM: the new links are attached at load, beside the old ones; the
 *    old ones go only after the last cgroup. Both judge meanwhile.
 *  - Per cgroup, in the first scan: its new cgroup links are attached and
 *    pinned, and only then are its old links detached. Cgroup links are
 *    multi-attach: for that moment both programs run, and both must allow.
 *  - Once no old program can still run (an RCU grace period), the old
 *    rings are drained, the old pins removed, and the staging pins renamed
 *    into DIR.
 *
 * Crash safety: no link is unpinned before its cgroup is confined by the
 * other state's pinned link, so an agent killed at any step leaves every
 * cgroup confined, by DIR's links (the old state, or the new one partly
 * moved) or the staging directory's, or both. The next agent sees a
 * staging directory and replaces every state it finds (DIR and each
 * staging directory: "generations") the same way, into a staging
 * directory of its own: an interrupted replacement is finished by another
 * one, never by trusting a half-built state.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "cgroup.h"
#include "events_agent.h"
#include "log.h"
#include "names.h"
#include "pin.h"
#include "policy.h"
#include "records.h"
#include "replace.h"
#include "sandbox.h"
#include "stockade.skel.h"

/*
 * The new state's first sequence number is the old one's plus this. The
 * old programs keep numbering their records until their links go (the
 * overlap); a span this large keeps the two ranges apart, and the numbers
 * left unused are reported in the pin_replace record (seq_unused), so the
 * stream has no unexplained gap. The staging directory is named after
 * that first number (staging-<seq>), so that an agent finishing an
 * interrupted replacement knows where each state's numbers began.
 */
#define REPLACE_SEQ_RESERVE	(1ULL << 20)
/* DIR and the staging directories of interrupted replacements. */
#define REPLACE_MAX_GENS	16

/* One link pin of an old state. */
struct old_link {
	uint64_t cg_id;		/* 0: a BPF-LSM link */
	unsigned int gen;
	bool gone;
	char name[128];
};

/* One old state ("generation"): DIR, or DIR/staging-* left by an agent
 * killed while replacing. */
struct gen {
	char dir[PATH_MAX];
	uint64_t start;		/* its first seq (staging-<seq>); 0: DIR, unknown */
	int cnt_fd;		/* its sb_count, when it fits this build's */
	int sb_fd;		/* its sandboxes, when they fit */
};

struct replace {
	char dir[PATH_MAX];		/* --bpffs: where the new state ends up */
	char staging[PATH_MAX];		/* ours, until published */
	char why[256];
	struct gen gens[REPLACE_MAX_GENS];
	size_t n_gens;
	struct old_link *links;		/* sorted by cg_id */
	size_t n_links;
	uint64_t seq_start;		/* 0: the old sequence is unknown */
	uint64_t from_layout;		/* 0: unknown */
	__u32 ring_size;		/* the newest old ring's; 0: none */
	unsigned int cgroups, links_detached, lsm_dropped, records;
	unsigned int cnt_carried, det_carried, saved_carried;
	bool names_carried, counters_fit;
	bool dropped;			/* an old link is gone: no way back */
	bool published;
	struct replace_env env;		/* from replace__carry() on */
};

/* ---- reading maps of another build: by BTF, not by our headers ---- */

/* Are two BTF types the same layout: kinds, sizes, member names and
 * offsets, array lengths? */
static bool btf_same(const struct btf *a, __s32 ia, const struct btf *b, __s32 ib,
		     int depth)
{
	const struct btf_type *ta, *tb;
	__u16 i, n;

	if (depth > 8)
		return false;
	ia = btf__resolve_type(a, (__u32)ia);
	ib = btf__resolve_type(b, (__u32)ib);
	if (ia < 0 || ib < 0)
		return false;
	ta = btf__type_by_id(a, (__u32)ia);
	tb = btf__type_by_id(b, (__u32)ib);
	if (!ta || !tb || btf_kind(ta) != btf_kind(tb))
		return false;
	n = btf_vlen(ta);
	switch (btf_kind(ta)) {
	case BTF_KIND_INT:
		return ta->size == tb->size && btf_int_encoding(ta) == btf_int_encoding(tb) &&
		       btf_int_bits(ta) == btf_int_bits(tb);
	case BTF_KIND_PTR:
		return true;
	case BTF_KIND_ARRAY:
		return btf_array(ta)->nelems == btf_array(tb)->nelems &&
		       btf_same(a, (__s32)btf_array(ta)->type, b,
				(__s32)btf_array(tb)->type, depth + 1);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		if (ta->size != tb->size || n != btf_vlen(tb))
			return false;
		for (i = 0; i < n; i++) {
			const struct btf_member *ma = btf_members(ta) + i;
			const struct btf_member *mb = btf_members(tb) + i;

			if (ma->offset != mb->offset ||
			    strcmp(btf__name_by_offset(a, ma->name_off),
				   btf__name_by_offset(b, mb->name_off)) ||
			    !btf_same(a, (__s32)ma->type, b, (__s32)mb->type, depth + 1))
				return false;
		}
		return true;
	default:
		return ta->size == tb->size && n == btf_vlen(tb);
	}
}

static int map_info(int fd, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, len);
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

/*
 * Does the old map behind fd hold what this build's map holds: same type,
 * key and value sizes, and the same key and value types by BTF? The
 * number of entries may differ: entries are copied, not the map.
 */
static bool map_fits(int fd, const struct bpf_map *map, const struct btf *nbtf)
{
	struct bpf_map_info info;
	struct btf *obtf;
	bool ok;

	if (map_info(fd, &info) || info.type != bpf_map__type(map) ||
	    info.key_size != bpf_map__key_size(map) ||
	    info.value_size != bpf_map__value_size(map) || !info.btf_id ||
	    !info.btf_value_type_id || !nbtf)
		return false;
	obtf = btf__load_from_kernel_by_id(info.btf_id);
	if (!obtf)
		return false;
	ok = btf_same(obtf, (__s32)info.btf_value_type_id, nbtf,
		      (__s32)bpf_map__btf_value_type_id(map), 0) &&
	     (!info.btf_key_type_id || !bpf_map__btf_key_type_id(map) ||
	      btf_same(obtf, (__s32)info.btf_key_type_id, nbtf,
		       (__s32)bpf_map__btf_key_type_id(map), 0));
	btf__free(obtf);
	return ok;
}

/*
 * A 4- or 8-byte field of entry 0 of an old array map, found by name in
 * its BTF: a variable of .data/.bss (ev_seq, ev_lost) or a struct member
 * (agent_meta.layout). Another build may have moved it; the name stays.
 */
static int old_field(int fd, const char *name, uint64_t *out)
{
	const struct btf_type *t = NULL, *v;
	struct bpf_map_info info;
	struct btf *btf;
	unsigned char *buf = NULL;
	__u32 off = 0, zero = 0, v32;
	__s64 size = 0;
	int err, id, i;

	err = map_info(fd, &info);
	if (err)
		return err;
	if (info.type != BPF_MAP_TYPE_ARRAY || !info.btf_id || !info.btf_value_type_id)
		return -ENOENT;
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!btf)
		return -errno;
	err = -ENOENT;
	id = btf__resolve_type(btf, info.btf_value_type_id);
	if (id >= 0)
		t = btf__type_by_id(btf, (__u32)id);
	if (t && btf_is_datasec(t)) {
		const struct btf_var_secinfo *vs = btf_var_secinfos(t);

		for (i = 0; i < btf_vlen(t); i++, vs++) {
			v = btf__type_by_id(btf, vs->type);
			if (v && !strcmp(btf__name_by_offset(btf, v->name_off), name)) {
				off = vs->offset;
				size = vs->size;
				err = 0;
				break;
			}
		}
	} else if (t && btf_is_struct(t)) {
		const struct btf_member *m = btf_members(t);

		for (i = 0; i < btf_vlen(t); i++, m++) {
			if (!strcmp(btf__name_by_offset(btf, m->name_off), name)) {
				off = btf_member_bit_offset(t, (__u32)i) / 8;
				size = btf__resolve_size(btf, m->type);
				err = 0;
				break;
			}
		}
	}
	if (!err && ((size != 4 && size != 8) || off + size > info.value_size))
		err = -EINVAL;
	if (!err) {
		buf = calloc(1, info.value_size);
		if (!buf)
			err = -ENOMEM;
		else if (bpf_map_lookup_elem(fd, &zero, buf))
			err = -errno;
	}
	if (!err && size == 8) {
		memcpy(out, buf + off, 8);
	} else if (!err) {
		memcpy(&v32, buf + off, 4);
		*out = v32;
	}
	free(buf);
	btf__free(btf);
	return err;
}

/* old_field() of the old map pinned as dir/maps/map. */
static int gen_field(const char *dir, const char *map, const char *name, uint64_t *out)
{
	int fd = pin__map_get(dir, map), err;

	if (fd < 0)
		return fd;
	err = old_field(fd, name, out);
	close(fd);
	return err;
}

/*
 * Tests only (tests/live/lifecycle.sh): STOCKADE_TEST_KILL_AT=cgroup dies
 * by SIGKILL right after the first cgroup's switch, =publish once the old
 * pins are gone and before ours move, to prove that the next agent finds
 * every cgroup confined and finishes. Killing oneself opens no gap.
 */
static void test_kill(const char *step)
{
	const char *at = getenv("STOCKADE_TEST_KILL_AT");

	if (at && !strcmp(at, step)) {
		pr_warn("replace", "STOCKADE_TEST_KILL_AT=%s: dying here", step);
		raise(SIGKILL);
	}
}

/* ---- the old states and their links ---- */

/* out (PATH_MAX) = dir/name, or -ENAMETOOLONG. */
static int join(char *out, const char *dir, const char *name)
{
	char tmp[PATH_MAX];
	int n = snprintf(tmp, sizeof(tmp), "%s/%s", dir, name);

	if (n < 0 || n >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(out, tmp, (size_t)n + 1);
	return 0;
}

bool replace__interrupted(const char *dir)
{
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(dir);

	while (d && !found && (de = readdir(d)))
		found = !strncmp(de->d_name, PIN_STAGING_PREFIX, strlen(PIN_STAGING_PREFIX));
	if (d)
		closedir(d);
	return found;
}

static int gen_cmp(const void *x, const void *y)
{
	const struct gen *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* DIR and every staging directory, oldest first: a later replacement
 * started its sequence past the earlier ones' (their names say where). */
static int find_gens(struct replace *r)
{
	struct dirent *de;
	DIR *d;
	size_t i;

	snprintf(r->gens[0].dir, sizeof(r->gens[0].dir), "%s", r->dir);
	r->n_gens = 1;
	d = opendir(r->dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, PIN_STAGING_PREFIX, strlen(PIN_STAGING_PREFIX)))
			continue;
		if (r->n_gens == REPLACE_MAX_GENS) {
			closedir(d);
			pr_err("replace", "more than %d staging directories under %s: stop every agent and run `stockade detach --all --bpffs %s`",
			       REPLACE_MAX_GENS - 1, r->dir, r->dir);
			return -E2BIG;
		}
		if (join(r->gens[r->n_gens].dir, r->dir, de->d_name))
			continue;
		r->n_gens++;
	}
	closedir(d);
	for (i = 1; i < r->n_gens; i++)
		r->gens[i].start = strtoull(strrchr(r->gens[i].dir, '/') + 1 +
					    strlen(PIN_STAGING_PREFIX), NULL, 10);
	qsort(r->gens, r->n_gens, sizeof(r->gens[0]), gen_cmp);
	return 0;
}

static int link_cmp(const void *x, const void *y)
{
	const struct old_link *a = x, *b = y;

	return a->cg_id < b->cg_id ? -1 : a->cg_id > b->cg_id;
}

/* Every link pin of every old state: cg-<id>-<prog> (any program name:
 * the other build may have others) and lsm-<prog>. */
static int list_links(struct replace *r)
{
	char dir[PATH_MAX];
	struct old_link *l;
	struct dirent *de;
	const char *prog;
	uint64_t id;
	size_t g;
	DIR *d;

	for (g = 0; g < r->n_gens; g++) {
		snprintf(dir, sizeof(dir), "%s/links", r->gens[g].dir);
		d = opendir(dir);
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(l->name))
				continue;
			if (pin__parse_cg_link(de->d_name, &id, &prog)) {
				if (strncmp(de->d_name, "lsm-", 4))
					continue;	/* not ours */
				id = 0;
			}
			if (r->n_links % 256 == 0) {
				l = realloc(r->links, (r->n_links + 256) * sizeof(*l));
				if (!l) {
					closedir(d);
					return -ENOMEM;
				}
				r->links = l;
			}
			l = &r->links[r->n_links++];
			memset(l, 0, sizeof(*l));
			l->cg_id = id;
			l->gen = (unsigned int)g;
			snprintf(l->name, sizeof(l->name), "%s", de->d_name);
		}
		if (d)
			closedir(d);
	}
	if (r->n_links)
		qsort(r->links, r->n_links, sizeof(*r->links), link_cmp);
	return 0;
}

/* Let go of an old link: a cgroup link is detached (it ends even if
 * someone holds it open), a BPF-LSM link ends with its last reference,
 * its pin. */
static void link_drop(struct replace *r, struct old_link *l)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/links/%s", r->gens[l->gen].dir, l->name);
	if (l->cg_id) {
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			if (bpf_link_detach(fd) && errno != EINVAL && errno != ENOLINK)
				pr_warn("replace", "detaching the old link %s failed: %s",
					path, strerror(errno));
			close(fd);
		}
	}
	if (unlink(path) && errno != ENOENT)
		pr_warn("replace", "removing the old pin %s failed: %s", path,
			strerror(errno));
	l->gone = true;
	r->dropped = true;
}

/* ---- before load ---- */

int replace__prepare(struct replace **out, const char *dir, const char *why)
{
	struct replace *r = calloc(1, sizeof(*r));
	uint64_t v;
	size_t g;
	int fd, n, err;

	*out = r;
	if (!r)
		return -ENOMEM;
	for (g = 0; g < REPLACE_MAX_GENS; g++)
		r->gens[g].cnt_fd = r->gens[g].sb_fd = -1;
	snprintf(r->dir, sizeof(r->dir), "%s", dir);
	snprintf(r->why, sizeof(r->why), "%s", why);
	err = find_gens(r);
	if (!err)
		err = list_links(r);
	if (err) {
		pr_err("replace", "reading the state pinned under %s failed: %s",
		       r->dir, strerror(-err));
		return err;
	}
	for (g = 0; g < r->n_gens; g++) {
		struct bpf_map_info info;

		if (!gen_field(r->gens[g].dir, "data", "ev_seq", &v) && v > r->seq_start)
			r->seq_start = v;
		fd = pin__map_get(r->gens[g].dir, "rb");
		if (fd >= 0 && !map_info(fd, &info) && info.type == BPF_MAP_TYPE_RINGBUF)
			r->ring_size = info.max_entries;
		if (fd >= 0)
			close(fd);
		if (!gen_field(r->gens[g].dir, "agent_meta", "layout", &v) && v)
			r->from_layout = v;
	}
	if (r->seq_start)
		r->seq_start += REPLACE_SEQ_RESERVE;
	/* staging-<first seq>-<pid>: the seq is past every existing state's
	 * numbers, so no interrupted replacement holds that name. */
	for (n = 0; n < 1000; n++) {
		char name[64];

		snprintf(name, sizeof(name), "%s%llu-%d", PIN_STAGING_PREFIX,
			 (unsigned long long)r->seq_start, (int)getpid() + n);
		err = join(r->staging, r->dir, name);
		if (err)
			return err;
		if (access(r->staging, F_OK))
			break;
	}
	fd = pin__dir_open(r->staging, true);
	if (fd < 0)
		return fd;
	close(fd);
	pr_warn("replace", "the state pinned under %s comes from another stockade build (%s): replacing it one cgroup at a time, never leaving one unconfined; the new state is built in %s",
		r->dir, why, r->staging);
	return 0;
}

const char *replace__staging(const struct replace *r)
{
	return r->staging;
}

void replace__configure(struct replace *r, struct stockade *skel,
			unsigned int ring_size)
{
	/* Values of a fresh map; a reused one (a retry of this same load,
	 * from our staging directory) keeps its own. */
	if (r->seq_start)
		skel->data->ev_seq = r->seq_start;
	/* Without --ring-size, the size the old ring had. */
	if (!ring_size && r->ring_size)
		bpf_map__set_max_entries(skel->maps.rb, r->ring_size);
}

/* ---- after load ---- */

/* What every old ring buffer holds, written out. */
static unsigned int drain_rings(struct replace *r)
{
	struct bpf_map_info info;
	unsigned int total = 0;
	size_t g;
	int fd, n;

	for (g = 0; g < r->n_gens; g++) {
		fd = pin__map_get(r->gens[g].dir, "rb");
		if (fd < 0)
			continue;
		/* Read in this build's record format (include/events.h),
		 * each record's length checked. */
		if (!map_info(fd, &info) && info.type == BPF_MAP_TYPE_RINGBUF) {
			n = events__drain_map(r->env.ev, fd);
			if (n < 0)
				pr_warn("replace", "reading the old ring buffer of %s failed: %s; its records are lost",
					r->gens[g].dir, strerror(-n));
			else
				total += (unsigned int)n;
		}
		close(fd);
	}
	return total;
}

/* Copy the entries of the old map dir/maps/name into map, if it fits
 * (BPF_NOEXIST: an older state's value wins). Returns how many. */
static unsigned int carry_map(struct replace *r, const char *dir, const char *name,
			      struct bpf_map *map, __u64 flags)
{
	const struct btf *nbtf = bpf_object__btf(r->env.skel->obj);
	unsigned char key[64], next[64], *val;
	unsigned int n = 0;
	int fd = pin__map_get(dir, name), nfd = bpf_map__fd(map), err;

	if (fd < 0)
		return 0;
	if (bpf_map__key_size(map) > sizeof(key) || !map_fits(fd, map, nbtf)) {
		pr_warn("replace", "%s/maps/%s does not fit this build's %s: its entries are not carried over",
			dir, name, name);
		close(fd);
		return 0;
	}
	val = calloc(1, bpf_map__value_size(map));
	err = val ? bpf_map_get_next_key(fd, NULL, next) : -1;
	while (!err) {
		if (!bpf_map_lookup_elem(fd, next, val)) {
			if (!bpf_map_update_elem(nfd, next, val, flags))
				n++;
			else if (errno != EEXIST)
				pr_warn("replace", "carrying an entry of %s over failed: %s",
					name, strerror(errno));
		}
		memcpy(key, next, bpf_map__key_size(map));
		err = bpf_map_get_next_key(fd, key, next);
	}
	free(val);
	close(fd);
	return n;
}

int replace__carry(struct replace *r, const struct replace_env *env,
		   struct policy_info **old)
{
	struct stockade *skel = env->skel;
	const struct btf *nbtf = bpf_object__btf(skel->obj);
	struct policy_info pi;
	size_t g;
	__u32 id;
	int fd;

	r->env = *env;
	/* Policy ids first: a policy of the same name and content keeps its
	 * id (assign_ids()), so old records keep their names. The newest
	 * state's names win. */
	*old = calloc(POLICY_MAX, sizeof(**old));
	if (!*old)
		return -ENOMEM;
	for (g = 0; g < r->n_gens; g++) {
		fd = pin__map_get(r->gens[g].dir, "policy_names");
		if (fd < 0)
			continue;
		if (map_fits(fd, skel->maps.policy_names, nbtf)) {
			r->names_carried = true;
			for (id = 0; id < POLICY_MAX; id++) {
				if (bpf_map_lookup_elem(fd, &id, &pi) || !pi.name[0])
					continue;
				pi.name[PIN_POLICY_NAME_LEN - 1] = '\0';
				(*old)[id] = pi;
			}
		}
		close(fd);
	}
	/* The downtime's records, before anything this agent numbers. */
	r->records += drain_rings(r);
	for (g = 0; g < r->n_gens; g++) {
		/* A cgroup detached on purpose stays so; a mark that does not
		 * fit would confine it again (the safe side). */
		r->det_carried += carry_map(r, r->gens[g].dir, "detached",
					    skel->maps.detached, BPF_ANY);
		/* The values found before any agent limited a cgroup: the
		 * oldest state's are the originals. */
		r->saved_carried += carry_map(r, r->gens[g].dir, "lim_saved",
					      skel->maps.lim_saved, BPF_NOEXIST);
		/* Counters move per cgroup, just before its new links
		 * (replace__cg_before()); old entries name policies. */
		fd = pin__map_get(r->gens[g].dir, "sb_count");
		if (fd >= 0 && map_fits(fd, skel->maps.sb_count, nbtf)) {
			r->gens[g].cnt_fd = fd;
			r->counters_fit = true;
		} else if (fd >= 0) {
			close(fd);
		}
		fd = pin__map_get(r->gens[g].dir, "sandboxes");
		if (fd >= 0 && map_fits(fd, skel->maps.sandboxes, nbtf))
			r->gens[g].sb_fd = fd;
		else if (fd >= 0)
			close(fd);
	}
	return 0;
}

/* ---- per cgroup ---- */

void replace__cg_before(struct replace *r, const struct sandbox_cg *cg)
{
	size_t g;

	if (!r->counters_fit)
		return;
	/* From the newest state that counts it. Taken right before the new
	 * programs attach: from then on they count every decision, and the
	 * old programs' counts of the overlap would be the same ones again. */
	for (g = r->n_gens; g-- > 0;) {
		int err;

		if (r->gens[g].cnt_fd < 0)
			continue;
		err = r->env.counters_carry(r->env.ctx, cg->id, r->gens[g].cnt_fd);
		if (err == -ENOENT)
			continue;
		if (!err)
			r->cnt_carried++;
		break;
	}
}

unsigned int replace__cg_after(struct replace *r, const struct sandbox_cg *cg)
{
	struct old_link key = { .cg_id = cg->id };
	struct old_link *l;
	unsigned int n = 0;

	l = r->n_links ? bsearch(&key, r->links, r->n_links, sizeof(*l), link_cmp) : NULL;
	if (!l)
		return 0;
	while (l > r->links && l[-1].cg_id == cg->id)
		l--;
	/* Its new links are attached and pinned: the old ones may go. */
	for (; l < r->links + r->n_links && l->cg_id == cg->id; l++) {
		if (l->gone)
			continue;
		link_drop(r, l);
		n++;
	}
	r->links_detached += n;
	r->cgroups += n > 0;
	if (n)
		test_kill("cgroup");
	return n;
}

/* ---- after the first scan ---- */

/* Unlink every entry of dir; remove dir too if rm. */
static int clear_dir(const char *dir, bool rm)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && errno != ENOENT && !err) {
			err = -errno;
			pr_err("replace", "removing the old pin %s failed: %s", path,
			       strerror(errno));
		}
	}
	closedir(d);
	if (!err && rm && rmdir(dir) && errno != ENOENT) {
		err = -errno;
		pr_err("replace", "removing %s failed: %s", dir, strerror(errno));
	}
	return err;
}

/* Rename every pin of from/sub into to/sub: each one atomic, so a pin is
 * always in one place or the other. */
static int move_pins(const char *from, const char *to, const char *sub)
{
	char src[PATH_MAX], dst[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(src, sizeof(src), "%s/%s", from, sub);
	d = opendir(src);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(src, sizeof(src), "%s/%s/%s", from, sub, de->d_name);
		snprintf(dst, sizeof(dst), "%s/%s/%s", to, sub, de->d_name);
		if (rename(src, dst)) {
			err = -errno;
			pr_err("replace", "moving %s to %s failed: %s", src, dst,
			       strerror(errno));
		}
	}
	closedir(d);
	if (!err) {
		snprintf(src, sizeof(src), "%s/%s", from, sub);
		if (rmdir(src))
			err = -errno;
	}
	return err;
}

/* The old pins go: links before the maps they use. */
static int remove_old(struct replace *r)
{
	char sub[PATH_MAX];
	size_t g;
	int err = 0;

	for (g = 0; !err && g < r->n_gens; g++) {
		bool staging = strcmp(r->gens[g].dir, r->dir) != 0;

		snprintf(sub, sizeof(sub), "%s/links", r->gens[g].dir);
		err = clear_dir(sub, staging);
		snprintf(sub, sizeof(sub), "%s/maps", r->gens[g].dir);
		err = err ?: clear_dir(sub, staging);
		if (!err && staging && rmdir(r->gens[g].dir) && errno != ENOENT)
			err = -errno;
	}
	return err;
}

/* Ours move into DIR. A kill before the end leaves our staging directory,
 * whose links confine every cgroup: the next agent replaces it. */
static int move_new(struct replace *r)
{
	int err;

	err = move_pins(r->staging, r->dir, "maps");
	err = err ?: move_pins(r->staging, r->dir, "links");
	if (!err && rmdir(r->staging))
		err = -errno;
	if (!err)
		r->published = true;
	return err;
}

/*
 * Numbers no state handed out. Each state's numbers run from its start
 * (staging-<seq>; DIR's from before) to its ev_seq now; ours from
 * seq_start. A gap after a state whose end is unknown (its maps were gone:
 * an agent killed while publishing, which had reported it) is not counted.
 */
static void seq_account(struct replace *r, uint64_t *old_end, uint64_t *unused,
			uint64_t *overlap)
{
	uint64_t end = 0, v;
	size_t g;

	*unused = *overlap = 0;
	for (g = 0; g <= r->n_gens; g++) {
		uint64_t start = g < r->n_gens ? r->gens[g].start : r->seq_start;

		if (start && end && start > end)
			*unused += start - end;
		else if (start && end && start < end)
			*overlap += end - start;
		if (g < r->n_gens && !gen_field(r->gens[g].dir, "data", "ev_seq", &v) &&
		    v > end)
			end = v;
	}
	*old_end = end;
}

/*
 * Old cgroup links still pinned: of cgroups that this policy set does not
 * confine with links of their own (no longer selected, removed, detached
 * on purpose, or now confined through an ancestor, whose new programs
 * cover them already). Each such cgroup gets its detach record.
 */
static void drop_old_cg_links(struct replace *r, const struct cgroup_paths *paths)
{
	struct events *ev = r->env.ev;
	unsigned int left = 0;
	uint64_t last = 0;
	struct sandbox sb;
	size_t i;

	for (i = 0; i < r->n_links; i++) {
		struct old_link *l = &r->links[i];
		uint32_t policy_id = POLICY_MAX;	/* "(unknown)" */
		const char *path;

		if (l->gone || !l->cg_id)
			continue;
		link_drop(r, l);
		left++;
		/* A watched directory's old watch links: its new ones are
		 * attached (zero window), and it was never confined. */
		if (names__cg(r->env.names, l->cg_id) ||
		    r->env.watched(r->env.ctx, l->cg_id) ||
		    l->cg_id == last)
			continue;
		last = l->cg_id;
		path = cgroup_paths__find(paths, l->cg_id);
		if (r->gens[l->gen].sb_fd >= 0 &&
		    !bpf_map_lookup_elem(r->gens[l->gen].sb_fd, &l->cg_id, &sb))
			policy_id = sb.policy_id;
		events__begin(ev, "detach");
		records__detach(&ev->j, names__policy_name(r->env.names, policy_id),
				path ?: "", l->cg_id,
				path ? "not_selected" : "cgroup_removed");
		events__emit(ev);
	}
	r->links_detached += left;
}

/* BPF-LSM: ours judge since the load; the old ones go now. */
/* The kernel id of a pinned link's program, 0 when it cannot tell. */
static __u32 link_id_of(struct replace *r, const struct old_link *l)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	__u32 id = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/links/%s", r->gens[l->gen].dir, l->name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		id = info.prog_id;
	close(fd);
	return id;
}

static void drop_old_lsm_links(struct replace *r, bool lsm_none)
{
	bool degraded_warned = false;
	__u32 *ids = calloc(r->n_links + 1, sizeof(*ids));
	size_t i, n_ids = 0, k;
	int tries;

	for (i = 0; i < r->n_links; i++) {
		if (r->links[i].gone || r->links[i].cg_id)
			continue;
		if (lsm_none && !degraded_warned) {
			pr_warn("replace", "dropping the old state's BPF-LSM links: this agent runs degraded and cannot attach its own (the guarantees lost are listed above)");
			degraded_warned = true;
		}
		if (ids && (ids[n_ids] = link_id_of(r, &r->links[i])))
			n_ids++;
		link_drop(r, &r->links[i]);
		r->lsm_dropped++;
	}
	/*
	 * A BPF-LSM or tracing link cannot be detached: it ends with its last
	 * reference, and the kernel frees it from a workqueue, so its program
	 * may still run a moment after the pin went (the link's id is gone
	 * before its program is unhooked). Until each old program is gone
	 * from the kernel's program table (put only once unhooked), an old
	 * program could take an old sequence number and write to an old ring
	 * after the last drain: a number neither logged nor lost. At most 5 s.
	 */
	for (tries = 0; tries < 500 && n_ids; tries++) {
		for (k = 0; k < n_ids;) {
			int fd = bpf_prog_get_fd_by_id(ids[k]);

			if (fd >= 0) {
				close(fd);
				k++;
			} else {
				ids[k] = ids[--n_ids];
			}
		}
		if (n_ids)
			usleep(10000);
	}
	if (n_ids)
		pr_warn("replace", "%zu old BPF-LSM program(s) still exist 5 s after their links' pins went; a record they write now may be lost unreported",
			n_ids);
	free(ids);
}

/* The losses of the old states no agent reported, in one lost record;
 * returns how many. Without a readable agent_meta, all of them: a loss
 * may be reported twice, never not at all. */
static uint64_t old_losses(struct replace *r)
{
	uint64_t v, ev_lost, lost = 0, lost_total = 0;
	size_t g;

	for (g = 0; g < r->n_gens; g++) {
		const char *dir = r->gens[g].dir;

		if (gen_field(dir, "bss", "ev_lost", &ev_lost))
			continue;
		lost_total += ev_lost;
		if (!gen_field(dir, "agent_meta", "lost_reported", &v))
			lost += v < ev_lost ? ev_lost - v : 0;
		else
			lost += ev_lost;
	}
	if (lost) {
		events__begin(r->env.ev, "lost");
		records__lost(&r->env.ev->j, lost, lost_total, "replaced");
		events__emit_counting(r->env.ev, lost);
	}
	return lost;
}

/* The pin_replace record: what the replacement did (README, "Lifecycle"). */
static void emit_pin_replace(struct replace *r, unsigned int lsm_attached,
			     uint64_t lost, uint64_t old_end, uint64_t unused,
			     uint64_t overlap)
{
	struct events *ev = r->env.ev;
	struct json *j = &ev->j;

	events__begin(ev, "pin_replace");
	json_str(j, "bpffs", r->dir);
	json_str(j, "cause", r->why);
	if (r->from_layout)
		json_u64(j, "layout_from", r->from_layout);
	json_u64(j, "layout_to", PIN_LAYOUT_VERSION);
	json_u64(j, "states", r->n_gens);
	json_u64(j, "cgroups", r->cgroups);
	json_u64(j, "links_detached", r->links_detached);
	json_u64(j, "lsm_links_attached", lsm_attached);
	json_u64(j, "lsm_links_dropped", r->lsm_dropped);
	json_u64(j, "records_drained", r->records);
	json_u64(j, "lost", lost);
	if (r->seq_start) {
		json_u64(j, "seq_old_end", old_end);
		json_u64(j, "seq_new_start", r->seq_start);
		json_u64(j, "seq_unused", unused);
		/* The old programs took more numbers than reserved: some
		 * appear twice. Said, never hidden. */
		if (overlap) {
			json_u64(j, "seq_overlap", overlap);
			pr_warn("replace", "the old programs took %llu sequence numbers more than reserved: some numbers appear twice",
				(unsigned long long)overlap);
		}
	} else {
		json_str(j, "seq", "restarted");
	}
	json_str(j, "policy_ids", r->names_carried ? "carried" : "new");
	json_str(j, "counters", r->counters_fit ? "carried" : "restarted");
	json_u64(j, "counters_carried", r->cnt_carried);
	json_u64(j, "detached_carried", r->det_carried);
	json_u64(j, "limits_carried", r->saved_carried);
	events__emit_counting(ev, r->seq_start ? unused : 0);
}

int replace__finish(struct replace *r, unsigned int lsm_attached, bool lsm_none)
{
	struct cgroup_paths paths = { 0 };
	uint64_t old_end, unused, overlap, lost;
	size_t g;
	int err;

	cgroup_paths__load(r->env.cgroot, &paths);
	/* 1. Old cgroup links of cgroups we do not confine with our own. */
	drop_old_cg_links(r, &paths);
	/* 2. BPF-LSM: ours judge since the load; the old ones go now. */
	drop_old_lsm_links(r, lsm_none);
	/* 3. Wait until no old program is still running (a write to a
	 * map-in-map waits for an RCU grace period): the old sequence
	 * counters and rings take nothing more. */
	bpf_rcu_sync(bpf_map__fd(r->env.skel->maps.rcu_sync),
		     bpf_map__fd(r->env.skel->maps.rcu_inner));
	/* 4. The old rings' last records, and the losses no agent reported. */
	r->records += drain_rings(r);
	lost = old_losses(r);
	seq_account(r, &old_end, &unused, &overlap);
	/* 5. Limits of cgroups no longer confined: the values found go back. */
	r->env.limits_sweep(r->env.ctx, &paths);
	cgroup_paths__free(&paths);
	for (g = 0; g < r->n_gens; g++) {
		if (r->gens[g].cnt_fd >= 0)
			close(r->gens[g].cnt_fd);
		if (r->gens[g].sb_fd >= 0)
			close(r->gens[g].sb_fd);
		r->gens[g].cnt_fd = r->gens[g].sb_fd = -1;
	}

	/* 6. The old pins go, the record says what happened (before our pins
	 * move: an agent killed while moving them leaves it said), then
	 * ours take the old ones' place. */
	err = remove_old(r);
	if (err) {
		pr_err("replace", "removing the old pins under %s failed: %s; every cgroup stays confined by the new programs (pinned in %s): start the agent again to finish",
		       r->dir, strerror(-err), r->staging);
		return err;
	}
	emit_pin_replace(r, lsm_attached, lost, old_end, unused, overlap);
	test_kill("publish");
	err = move_new(r);
	if (err) {
		pr_err("replace", "moving the new state from %s into %s failed: %s; every cgroup stays confined: start the agent again to finish",
		       r->staging, r->dir, strerror(-err));
		return err;
	}
	pr_info("replace", "replaced the state of another build under %s: %u cgroups switched, %u old links detached, %u BPF-LSM links dropped, %u old records drained",
		r->dir, r->cgroups, r->links_detached, r->lsm_dropped, r->records);
	return 0;
}

void replace__free(struct replace *r)
{
	size_t g;

	if (!r)
		return;
	/* Failed before any old link went: the old state confines alone, as
	 * before; ours goes (our handles are closed: unpinned, our links
	 * end). After that, ours stays for the next agent to finish. */
	if (!r->published && !r->dropped && r->staging[0]) {
		char sub[PATH_MAX];

		if (!join(sub, r->staging, "links") && !clear_dir(sub, true) &&
		    !join(sub, r->staging, "maps") && !clear_dir(sub, true))
			rmdir(r->staging);
	}
	for (g = 0; g < r->n_gens; g++) {
		if (r->gens[g].cnt_fd >= 0)
			close(r->gens[g].cnt_fd);
		if (r->gens[g].sb_fd >= 0)
			close(r->gens[g].sb_fd);
	}
	free(r->links);
	free(r);
}
