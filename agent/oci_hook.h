/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `stockade oci-hook`: an OCI hook (createRuntime, prestart or
 * createContainer; --remove for poststop) that records a container's
 * names, cgroup and bundle in <dir>/<id>.json for container_meta__load()
 * (agent/container_meta.h). README "Container names".
 */
#ifndef STOCKADE_OCI_HOOK_H
#define STOCKADE_OCI_HOOK_H

#include <stdbool.h>

struct oci_hook_opts {
	const char *dir;	/* the records; CONTAINER_HOOK_DIR_DEFAULT */
	const char *proc;	/* "/proc": where /proc/<pid>/cgroup is read */
	bool remove;		/* poststop: delete the record */
};

/*
 * Read the OCI state from in_fd and write (or, with remove, delete) the
 * record. 0 when done, and also when the record could not be written
 * (a warning on stderr: the hook never stops a container for a failure
 * of its own); 1 with a one-line error on stderr when the input is not a
 * valid state (the runtime then fails the start: the safe direction).
 */
int oci_hook__run(const struct oci_hook_opts *o, int in_fd);

/* stockade oci-hook [--dir DIR] [--remove]: argv[0] is "oci-hook". */
int oci_hook__main(int argc, char **argv);

#endif /* STOCKADE_OCI_HOOK_H */
