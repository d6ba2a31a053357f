#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The test VM's demo mode (tests/vm/init, stockade.demo=1 on the kernel
# command line; tests/vm/run.sh demo boots it, for `make demo` and
# `make vm-demo`): the file part of the demo, tools/demo-files.sh, on a
# kernel with BPF-LSM. Every line meant for the terminal starts with
# `@@DEMO `; the host prints only those, so kernel messages and stray
# output stay in the console log. The last line is `@@DEMO-END rc=N`.

cd /opt/stockade || exit 1

timeout_s=120
for arg in $(cat /proc/cmdline); do
	case $arg in
	stockade.timeout=*) timeout_s=${arg#stockade.timeout=} ;;
	esac
done
# Finish, with a summary or a reason, before the host kills the guest.
budget=$((timeout_s - $(cut -d. -f1 /proc/uptime) - 10))
[ "$budget" -ge 20 ] || budget=20

echo "@@DEMO == in the VM: kernel $(uname -r), LSMs $(cat /sys/kernel/security/lsm 2>/dev/null)"
STOCKADE=/opt/stockade/stockade TOOLS=/opt/stockade/tools \
	CGROUP_ROOT=/sys/fs/cgroup TASK=/task DEMO_MARK='@@DEMO ' \
	DEMO_FAKE_SECRETS=1 \
	timeout -s KILL "$budget" sh tools/demo-files.sh
rc=$?
[ $rc != 137 ] || echo "@@DEMO demo: killed after ${budget}s (stockade.timeout=$timeout_s)"
echo "@@DEMO-END rc=$rc"
