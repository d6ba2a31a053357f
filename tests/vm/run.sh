#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Boot the test VM and report the suite's results.
#
#   tests/vm/run.sh test     run tests/vm/suite.sh in the guest (make vm-test),
#                            once per kernel in VM_KERNELS (6.1 6.12), the
#                            guests in parallel (one qemu each)
#   tests/vm/run.sh shell    interactive busybox shell (make vm-shell)
#   tests/vm/run.sh demo     the file part of the demo, tests/vm/demo.sh
#                            (make vm-demo; make demo on a host without
#                            BPF-LSM): prints the guest's `@@DEMO ` lines
#   tests/vm/run.sh bench    the file benchmark, tests/vm/bench-files.sh
#                            (tests/bench/files.sh): prints the guest's
#                            `@@BENCH ` lines; BENCH_APPEND passes its
#                            options (stockade.bench_tiny=1,
#                            stockade.bench_rounds=N)
#
# Two kernels (README "Testing"): Debian 12's 6.1 under the system's qemu
# 7.2 (known good there), and bookworm-backports' 6.12 under qemu 10 from
# backports (tests/vm/qemu.sh: qemu 7.2 double-faults 6.12 under TCG
# before init). Each kernel SERIES has its cache VM_DIR/kernel-SERIES
# (tests/vm/kernel.sh), its initramfs VM_DIR/initramfs-SERIES.cpio
# (tests/vm/mkinitramfs.sh) and its console log VM_DIR/console-SERIES.log.
# The guest reports over the serial console, one marker a line
# (tests/vm/lib.sh writes them):
#   @@STOCKADE ok NAME
#   @@STOCKADE fail NAME | DETAIL
#   @@STOCKADE skip NAME | REASON
#   @@STOCKADE done passed=N failed=N skipped=N
# NAME may contain spaces, not " | ". Each result line printed here names
# its kernel (`PASS  [6.12] NAME`), each kernel ends with
# `[SERIES] N passed, N failed, N skipped`, and `test` ends with the total.
# Anything else on the console is only copied to the console log (and to
# the terminal when one kernel runs alone). The exit status is non-zero
# on any failure, on no results at all, and on a guest that did not reach
# `done` (crash, early exit of init, or VM_TIMEOUT), for any kernel.
#
# After the guest of each kernel of VM_RACE_KERNELS, `test` boots one
# more guest of that kernel, with two CPUs, for the sections that need two programs running at
# once: dcache-race (tests/vm/dcache-race.sh, the cache's lockless read
# against writers on the other CPU), cgfast-race (tests/vm/cgfast-race.sh,
# the verdict cache's) and setup-race (tests/vm/setup-race.sh,
# a runtime's move landing during its init's exec). Their results are
# labelled [6.12-2cpu] (and [6.1-2cpu]) and count in the total. VM_RACE=0
# leaves them out (make vm-test VM_ONLY=... without either does);
# VM_RACE_KERNELS (6.12; "6.1 6.12" for both) says which kernels of
# VM_KERNELS get one.
#
# Env: VM_DIR (build/vm), VM_TIMEOUT (2400 s: two guests share the cores, with the host tests beside them in make test), VM_KVM=1 (use /dev/kvm: off by
# default because KVM hangs on some hosts, TCG always works),
# VM_APPEND (more kernel command line), VM_KERNELS (test: "6.1 6.12"),
# VM_KERNEL (shell, demo, bench: 6.1), QEMU (the qemu binary: the
# system's qemu-system-x86_64 for 6.1, VM_DIR/qemu's for others),
# VM_RACE (test: 1, the two-CPU guests; 0 none), VM_RACE_KERNELS (their
# kernels, 6.12; empty: none), VM_RACE_TIMEOUT (each one's hang
# guard, 900 s); for one guest (test-one): VM_SMP (its CPUs, 1),
# VM_LABEL (its name in results and logs: the kernel's).
set -u

mode=${1:-test}
vm_dir=${VM_DIR:-build/vm}
timeout_s=${VM_TIMEOUT:-2400}

# test: one child run (mode test-one) per kernel, in parallel; their
# results are printed whole, one kernel after the other, then the total.
if [ "$mode" = test ]; then
	kernels=${VM_KERNELS:-6.1 6.12}
	set -- $kernels
	n=$#
	start=$(date +%s)
	pids=
	mkdir -p "$vm_dir"
	# The two-CPU guests: each kernel of VM_RACE_KERNELS that VM_KERNELS
	# has, once (an empty VM_RACE_KERNELS: none).
	race_kernels=
	if [ "${VM_RACE:-1}" = 1 ]; then
		for k in ${VM_RACE_KERNELS-6.12}; do
			case " $race_kernels " in *" $k "*) continue ;; esac
			case " $kernels " in
			*" $k "*) race_kernels="$race_kernels $k" ;;
			*) echo "vm-test: no two-CPU guest for $k: VM_KERNELS ($kernels) has no $k (dcache-race, cgfast-race and setup-race not run on it)" ;;
			esac
		done
		[ -n "$race_kernels" ] ||
			echo "vm-test: no two-CPU guest (VM_RACE_KERNELS: ${VM_RACE_KERNELS-6.12}); dcache-race, cgfast-race and setup-race not run"
	fi
	for k in $kernels; do
		race=
		case " $race_kernels " in *" $k "*) race=1 ;; esac
		# A kernel's two-CPU guest boots when its own one-CPU guest
		# has ended, not when both have: by default only 6.12 has one,
		# and 6.12's guest ends first (tests/vm/lib.sh, on_kernel), so
		# it runs beside 6.1's last minutes, idle for about half of
		# its run. Its stockade.only comes last on the command line,
		# so it is the one that holds.
		(
			# A signal to this chain stops the guest it is on ($!:
			# one started just before the signal, before child
			# said so).
			child=
			trap 'if [ -n "$child" ]; then kill -TERM "$child" "$!" 2>/dev/null; wait; fi; exit 130' INT TERM HUP
			if [ "$n" = 1 ]; then
				# Alone: the console on the terminal as it comes.
				VM_KERNEL=$k sh "$0" test-one 2>&1 | tee "$vm_dir/results-$k.txt" &
			else
				echo "vm-test: [$k] booting (console in $vm_dir/console-$k.log)"
				VM_KERNEL=$k VM_QUIET=1 sh "$0" test-one > "$vm_dir/results-$k.txt" 2>&1 &
			fi
			child=$!
			wait $child
			rc=$?
			if [ -n "$race" ]; then
				echo "vm-test: [$k-2cpu] booting (console in $vm_dir/console-$k-2cpu.log)"
				VM_KERNEL=$k VM_SMP=2 VM_LABEL=$k-2cpu VM_QUIET=1 VM_TIMEOUT=${VM_RACE_TIMEOUT:-900} \
					VM_APPEND="${VM_APPEND:-} stockade.race=1 stockade.only=dcache-race,cgfast-race,setup-race" \
					sh "$0" test-one > "$vm_dir/results-$k-2cpu.txt" 2>&1 &
				child=$!
				wait $child || rc=1
			fi
			exit $rc
		) &
		pids="$pids $!"
	done
	trap 'trap - INT TERM HUP; kill -TERM $pids 2>/dev/null; wait
		echo "vm-test: interrupted; guests stopped" >&2; exit 130' INT TERM HUP
	rc=0
	for p in $pids; do
		wait "$p" || rc=1
	done
	labels=$kernels
	for k in $race_kernels; do
		labels="$labels $k-2cpu"
	done
	trap - INT TERM HUP
	tp=0 tf=0 ts=0
	for k in $labels; do
		[ "$n" = 1 ] && [ "$k" = "$kernels" ] || { echo; cat "$vm_dir/results-$k.txt"; }
		# Its closing line; a run that printed none counts as a failure.
		line=$(grep -E "^\[$k\] [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped\$" "$vm_dir/results-$k.txt" | tail -n 1)
		if [ -z "$line" ]; then
			echo "  FAIL  [$k] vm/results: no closing line from its run"
			tf=$((tf + 1))
			rc=1
			continue
		fi
		set -- $line
		tp=$((tp + $2)) tf=$((tf + $4)) ts=$((ts + $6))
	done
	echo
	echo "vm-test: kernels $labels in $(($(date +%s) - start))s"
	echo "$tp passed, $tf failed, $ts skipped"
	[ "$tf" = 0 ] || rc=1
	exit $rc
fi

series=${VM_KERNEL:-6.1}
# VM_SMP: the guest's CPUs (1); VM_LABEL: its name in results and logs.
smp=${VM_SMP:-1}
label=${VM_LABEL:-$series}
kernel=$vm_dir/kernel-$series/vmlinuz
initrd=$vm_dir/initramfs-$series.cpio
log=$vm_dir/console-$label.log
case $series in
6.1)
	qemu=${QEMU:-qemu-system-x86_64}
	roms="/usr/share/qemu /usr/share/qemu/firmware"
	;;
*)
	qemu=${QEMU:-$vm_dir/qemu/qemu-system-x86_64}
	roms=$vm_dir/qemu/share
	[ -x "$qemu" ] || { echo "vm-$mode: no qemu at $qemu: run tests/vm/qemu.sh (make vm-initramfs VM_KERNEL=$series)" >&2; exit 1; }
	;;
esac

die() { echo "vm-$mode: $*" >&2; exit 1; }

[ -r "$kernel" ] || die "no kernel at $kernel: run tests/vm/kernel.sh $vm_dir/kernel-$series $series (make vm-kernel VM_KERNEL=$series)"
[ -r "$initrd" ] || die "no initramfs at $initrd: run make vm-initramfs VM_KERNEL=$series"
command -v "$qemu" >/dev/null 2>&1 || die "$qemu not found: apt-get install qemu-system-x86"

# -nographic puts the serial console on stdio. qboot instead of SeaBIOS:
# it boots a -kernel directly, and prints no screen-clearing escapes into
# the log.
set -- -nographic -no-reboot -nic none -m 1024 -smp "$smp" \
	-kernel "$kernel" -initrd "$initrd"
# qemu 10 unpacked under build/ finds its option ROMs (linuxboot_dma.bin)
# only with -L.
[ "$series" = 6.1 ] || set -- "$@" -L "$roms"
for dir in $roms; do
	if [ -r "$dir/qboot.rom" ]; then
		set -- "$@" -bios "$dir/qboot.rom"
		break
	fi
done
if [ "${VM_KVM:-0}" = 1 ]; then
	accel=kvm
	set -- -accel kvm -cpu host "$@"
else
	accel=tcg
	# Two vCPUs run as two host threads (MTTCG), truly at once.
	if [ "$smp" = 1 ]; then
		set -- -accel tcg "$@"
	else
		set -- -accel tcg,thread=multi "$@"
	fi
fi
# mitigations=off: nothing to protect in a throwaway guest, and page-table
# isolation makes every emulated syscall slower.
# stockade.timeout tells the guest how long it has (tests/vm/suite.sh).
append="console=ttyS0 panic=-1 quiet mitigations=off stockade.timeout=$timeout_s ${VM_APPEND:-}"

if [ "$mode" = shell ]; then
	[ -t 0 ] || die "needs a terminal on stdin (it is interactive)"
	echo "vm-shell: exit the shell to power off; Ctrl-A X kills qemu"
	exec "$qemu" "$@" -append "$append stockade.shell=1"
fi
# demo and bench: the guest's marked lines only, and its exit status.
case $mode in
demo) marker=@@DEMO flag=stockade.demo=1 ;;
bench) marker=@@BENCH flag="stockade.bench=1 ${BENCH_APPEND:-}" ;;
*) marker= ;;
esac
if [ -n "$marker" ]; then
	mlog=$vm_dir/$mode-console.log	# as before for 6.1: tools/demo.sh, tests/bench
	[ "$series" = 6.1 ] || mlog=$vm_dir/$mode-console-$series.log
	: > "$mlog"
	echo "vm-$mode: booting $(cat "$vm_dir/kernel/release" 2>/dev/null) under $accel, timeout ${timeout_s}s (console in $mlog)" >&2
	# timeout puts itself and qemu in a process group of their own, out of
	# reach of the terminal's Ctrl-C: stop it here, on INT or TERM. The
	# filter runs in the background too, so `wait` lets a signal in at
	# once; it ends when timeout (and so qemu) has.
	timeout -k 5 "$timeout_s" "$qemu" "$@" -append "$append $flag" \
		</dev/null > "$mlog" 2>&1 &
	qpid=$!
	fpid=
	trap 'trap - INT TERM HUP; kill -TERM "$qpid" 2>/dev/null; wait "$fpid" 2>/dev/null
		echo "vm-$mode: interrupted; qemu stopped" >&2; exit 130' INT TERM HUP
	# Only the guest's marked lines, without the marker; a marker may
	# follow other output on its line. Exit status: the guest's
	# (`MARKER-END rc=N`), 255 if none.
	tail -s 0.2 --pid="$qpid" -n +1 -f "$mlog" | awk -v m="$marker" '
		{
			gsub(/\r/, "")
			if ((i = index($0, m "-END rc=")))
				grc = substr($0, i + length(m) + 8) + 0
			else if ((i = index($0, m " ")))
				print substr($0, i + length(m) + 1)
			else
				next
			fflush()
		}
		END { exit grc == "" ? 255 : grc }' &
	fpid=$!
	wait "$fpid"
	guest_rc=$?
	wait "$qpid"
	qemu_rc=$?
	trap - INT TERM HUP
	why=
	if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
		why="guest killed after VM_TIMEOUT=${timeout_s}s"
	elif [ "$qemu_rc" != 0 ]; then
		why="qemu exited with status $qemu_rc"
	fi
	[ -n "$why" ] || why=$(tr -d '\r' < "$mlog" | grep -m 1 -o 'Kernel panic - not syncing: .*')
	if [ -n "$why" ] || [ "$guest_rc" = 255 ]; then
		echo "vm-$mode: the guest did not finish (${why:-no $marker-END line}); its last other console lines:" >&2
		tr -d '\r' < "$mlog" | grep -v "$marker" | tail -n 20 | sed 's/^/  | /' >&2
		exit 1
	fi
	exit "$guest_rc"
fi
[ "$mode" = test-one ] || die "unknown mode '$mode' (test, shell, demo or bench)"
mode=test

rc_file=$log.rc
pid_file=$log.pid
rm -f "$log" "$rc_file" "$pid_file"
start=$(date +%s)
echo "vm-test: [$label] booting $(cat "$vm_dir/kernel-$series/release" 2>/dev/null) under $accel, $smp CPU ($("$qemu" --version | head -n 1)), timeout ${timeout_s}s"
# qemu dies if stdin is closed, and CI has none: give it /dev/null. The
# exit status goes through a file because a pipeline's status is tee's.
# VM_QUIET=1 (two kernels at once): the console goes to its log only.
tee_out=/dev/stdout
[ "${VM_QUIET:-0}" = 0 ] || tee_out=/dev/null
# timeout puts itself and qemu in a process group of their own, which a
# signal to this one (Ctrl-C, or `test` stopping its guests) does not
# reach: on INT, TERM or HUP, stop it by its pid.
{
	timeout -k 5 "$timeout_s" "$qemu" "$@" -append "$append" </dev/null 2>&1 &
	echo $! > "$pid_file"
	wait $!
	echo $? > "$rc_file"
} | tee "$log" > "$tee_out" &
tpid=$!
trap 'trap - INT TERM HUP; kill -TERM "$(cat "$pid_file" 2>/dev/null)" 2>/dev/null
	wait "$tpid" 2>/dev/null; rm -f "$pid_file" "$rc_file"
	echo "vm-test: [$label] interrupted; qemu stopped" >&2; exit 130' INT TERM HUP
wait "$tpid"
trap - INT TERM HUP
qemu_rc=$(cat "$rc_file" 2>/dev/null || echo 255)
rm -f "$rc_file" "$pid_file"
elapsed=$(($(date +%s) - start))

why=""
if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
	why="guest killed after VM_TIMEOUT=${timeout_s}s"
elif [ "$qemu_rc" != 0 ]; then
	why="qemu exited with status $qemu_rc"
fi
# A panic (init exited, or worse) ends the guest through panic=-1 and
# -no-reboot with qemu's status 0: name it, it is the likeliest cause.
if [ -z "$why" ]; then
	why=$(tr -d '\r' < "$log" | grep -m 1 -o 'Kernel panic - not syncing: .*')
fi
if [ -n "$why" ] || ! grep -q '@@STOCKADE done' "$log"; then
	echo
	echo "vm-test: [$label] last 30 console lines ($log):"
	tail -n 30 "$log" | tr -d '\r' | sed 's/^/  | /'
fi

echo
echo "vm-test: [$label] results (${elapsed}s, console in $log)"
# Markers can follow other output on the same line (a kernel message or
# an escape sequence without a newline), so look for them anywhere.
tr -d '\r' < "$log" | awk -v why="$why" -v k="[$label]" '
	{
		i = index($0, "@@STOCKADE ")
		if (!i)
			next
		s = substr($0, i + 11)
		verb = s
		sub(/ .*/, "", verb)
		rest = substr(s, length(verb) + 2)
		if (verb == "ok") {
			printf "  PASS  %s %s\n", k, rest
			pass++
		} else if (verb == "fail" || verb == "skip") {
			j = index(rest, " | ")
			if (j)
				printf "  %s  %s %s: %s\n", toupper(verb), k, substr(rest, 1, j - 1), substr(rest, j + 3)
			else
				printf "  %s  %s %s\n", toupper(verb), k, rest
			if (verb == "fail")
				fail++
			else
				skip++
		} else if (verb == "done") {
			done = 1
			claim = s
		}
	}
	END {
		# The harness itself is a test: a guest that never reached the
		# end, or whose markers got lost, is a failure, not a short run.
		if (!done) {
			printf "  FAIL  %s vm/guest-finished: no @@STOCKADE done marker (%s)\n", \
				k, why != "" ? why : "init died or powered off early"
			fail++
		} else if (why != "") {
			printf "  FAIL  %s vm/guest-exit: %s, after the suite finished\n", k, why
			fail++
		} else if (claim != sprintf("done passed=%d failed=%d skipped=%d", pass, fail, skip)) {
			printf "  FAIL  %s vm/markers: guest said \"%s\", host saw passed=%d failed=%d skipped=%d\n", \
				k, claim, pass, fail, skip
			fail++
		}
		if (pass + fail == 0) {
			printf "  FAIL  %s vm/results: the guest reported no results\n", k
			fail++
		}
		printf "%s %d passed, %d failed, %d skipped\n", k, pass, fail, skip + 0
		exit fail != 0
	}'
