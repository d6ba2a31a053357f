/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * systemd's service notification protocol (sd_notify(3)), for a
 * `Type=notify` unit (deploy/systemd/stockade.service): the agent says
 * READY=1 once it has written agent_ready, RELOADING=1 / READY=1 around a
 * reload, STOPPING=1 when it stops, and a STATUS= line.
 *
 * By hand, not libsystemd's sd_notify(): the VM's build links the agent
 * statically (mk/vm.mk, STATIC=1) and Debian ships no static libsystemd.
 * The protocol is one AF_UNIX datagram of newline-separated KEY=VALUE
 * lines to $NOTIFY_SOCKET (a path, or '@' for the abstract namespace),
 * which systemd documents as a stable interface.
 */
#ifndef STOCKADE_NOTIFY_H
#define STOCKADE_NOTIFY_H

/* Send state (e.g. "READY=1\nSTATUS=...") to $NOTIFY_SOCKET. 0 when sent
 * or when there is no $NOTIFY_SOCKET (not started by systemd); -EINVAL
 * for a socket name that is neither a path nor '@'; the send's -errno.
 * The caller says what failed: the agent keeps running either way. */
int notify__send(const char *state);
/* The same, formatted; a state longer than 4 KiB is cut. */
int notify__sendf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
