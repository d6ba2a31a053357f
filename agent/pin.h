/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The pin directory (include/lifecycle.h): where it is, who holds it, what
 * a pinned map or link is. Shared by the agent (agent/daemon.c) and the
 * commands that read the pins alone (agent/ctl.c).
 */
#ifndef STOCKADE_PIN_H
#define STOCKADE_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "lifecycle.h"

#define PIN_DIR_DEFAULT	"/sys/fs/bpf/stockade"
/* DIR/staging-<seq>-<pid>: a replacement's new state until it is published
 * (agent/replace.c). */
#define PIN_STAGING_PREFIX	"staging-"

struct stockade;
struct bpf_link;
struct bpf_map;
struct bpf_program;

/* "DIR/maps/NAME", "DIR/links/NAME"; -ENAMETOOLONG when it does not fit. */
int pin__map_path(char *out, size_t len, const char *dir, const char *name);
int pin__link_path(char *out, size_t len, const char *dir, const char *name);

/* The pin name of one of the skeleton's maps, or NULL for a map that stays
 * private to one load (.rodata, per-CPU scratch). */
const char *pin__map_name(const struct stockade *skel, const struct bpf_map *map);

/*
 * Check that bpffs is mounted where dir lives, create dir, dir/maps and
 * dir/links (0700), and open dir. Returns the directory's fd or a negative
 * errno, with a message naming the fix.
 */
int pin__dir_open(const char *dir, bool create);
/* Its first check alone, silent: dir a valid pin directory name, on a
 * bpffs mount (its parent); 0, or -EINVAL/-ENOENT with the fix in why. */
int pin__bpffs_check(const char *dir, char *why, size_t why_len);

/*
 * Take the directory's lock: exclusive for an agent and `detach --all`,
 * shared for a probe (`status`). 0, or -EWOULDBLOCK when an agent holds it.
 */
int pin__lock(int dir_fd, bool exclusive);

/* Is an agent holding dir (its pid from agent_meta in *pid, 0 unknown)? */
bool pin__agent_running(const char *dir, int dir_fd, uint32_t *pid);

/* The pinned map NAME under dir (an fd), or a negative errno. */
int pin__map_get(const char *dir, const char *name);
/* Whether dir holds any pinned map (an agent ran before). */
bool pin__has_maps(const char *dir);
/* agent_meta from the pins; -ENOENT when there is none. */
int pin__meta_read(const char *dir, struct agent_meta *m);

/*
 * Before load: point every shared map of skel at its pin, after checking
 * that a pinned one fits this build (type, sizes, flags, layout version),
 * so libbpf reuses it. ring_size 0 takes the pinned ring buffer's size.
 * -ESTALE when the pins come from an incompatible build (or another
 * --ring-size), with what differs in why: the caller replaces that state
 * (agent/replace.c).
 */
int pin__maps_prepare(struct stockade *skel, const char *dir,
		      unsigned int ring_size, char *why, size_t why_len);

/* The tag (8 bytes) and id of a loaded program. */
int pin__prog_tag(int prog_fd, __u8 tag[8], __u32 *prog_id);
/* Is the program behind link the one prog holds: the same tag, and the
 * same constants in its .rodata maps (which the tag leaves out)? */
bool pin__same_prog(struct bpf_link *link, const struct bpf_program *prog);

/* Parse a link pin's name "cg-<id>-<prog>": 0 and the parts, or -EINVAL. */
int pin__parse_cg_link(const char *name, uint64_t *id, const char **prog);

/* Remove every pin and the directories, the staging states of interrupted
 * replacements included (detach --all). */
int pin__remove_all(const char *dir);

#endif
