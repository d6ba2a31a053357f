/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `stockade status` and `stockade detach` (agent/ctl.c): they read, and
 * detach changes, the pinned state alone (include/lifecycle.h), so they
 * work whether an agent runs or not. argv[0] is the command's name.
 * Return the exit status: 0, 1 on an error, 2 on a usage error.
 */
#ifndef STOCKADE_CTL_H
#define STOCKADE_CTL_H

int ctl__status(int argc, char **argv);
int ctl__detach(int argc, char **argv);
/* Make the running agent reload its policy files and wait for the result:
 * 0 applied or unchanged, 1 rejected (the old set stays) or no agent. */
int ctl__reload(int argc, char **argv);
/* SIGUSR1 to the running agent: reopen its --log FILE (log rotation).
 * 0 signalled, 1 no agent or the signal failed, 2 a usage error. */
int ctl__reopen_logs(int argc, char **argv);
/* The configuration in force per sandbox, judged against the five
 * verification points (agent/ctl_manifest.c): 0 all pass, 3 one fails,
 * 1 an error, 2 a usage error. */
int ctl__manifest(int argc, char **argv);
/* The live escape test (agent/ctl_probe.c): 0 every attempt refused and
 * recorded, 3 one not, 1 an error, 2 a usage error. */
int ctl__probe(int argc, char **argv);
/* `register check`: the log against the code register
 * (agent/ctl_register.c): 0 pass, 3 a failure, 1 an error, 2 usage. */
int ctl__register(int argc, char **argv);
/* The three pieces of evidence in one bundle, and its check
 * (agent/ctl_report.c): 0 every point passes, 3 one fails, 1 an error. */
int ctl__report(int argc, char **argv);
/* The running agent's records, live (agent/ctl_watch.c): 0 on Ctrl-C or
 * the end of the stream (--no-reconnect), 1 an error, 2 a usage error. */
int ctl__watch(int argc, char **argv);

#endif
