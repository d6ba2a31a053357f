# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# stockade build: bpf/*.bpf.c -> build/bpf/*.bpf.o -> (bpftool gen object)
# build/stockade.bpf.o -> build/stockade.skel.h -> ./stockade.
#
# All BPF sources link into ONE object (libbpf's static linker, `bpftool gen
# object`), because every concern shares the ring buffer, the sequence
# counter and the sandbox map: one skeleton keeps them one set of maps.
#
# vmlinux.h: generated, not checked in, from the build machine's BTF
# (/sys/kernel/btf/vmlinux). The programs use CO-RE, so the object built
# against 6.18's BTF loads on the 6.1 test-VM kernel too. Override with
# VMLINUX_BTF=/path/to/btf.

OUT		?= build
# BPF_OUT: where the BPF half goes (vmlinux.h, the objects, the skeleton).
# The VM's static build (mk/vm.mk) points it at the normal build's: a BPF
# object does not depend on how the userspace half links, and building it
# again for each of the three static binaries cost CPU that make test's
# guests share.
BPF_OUT		?= $(OUT)
# The agent binary; the VM build links a static one elsewhere (mk/vm.mk).
BIN		?= stockade
CLANG		?= clang
LLVM_STRIP	?= llvm-strip
BPFTOOL		?= bpftool
CC		?= gcc
VMLINUX_BTF	?= /sys/kernel/btf/vmlinux

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN		:= -Wall -Wextra -Werror -Wmissing-field-initializers -Werror=undef
INCLUDES	:= -Iinclude -Ipolicy -Iagent -I$(BPF_OUT)
CDEBUG		?= -g
CFLAGS		?= $(CDEBUG) -O2
# DEFS: -D flags for both halves (make variant-layout).
DEFS		?=
CFLAGS		+= $(WARN) $(INCLUDES) -D_GNU_SOURCE -std=gnu11 $(DEFS)
LDLIBS		:= -lbpf -lelf -lz -lyaml -lnettle -ljson-c
# The /metrics endpoint (agent/metrics_http.c) needs libmicrohttpd, which
# needs GnuTLS, which needs p11-kit: Debian ships no static libp11-kit, so
# a STATIC=1 build (the VM's) goes without it, and refuses
# --metrics-listen, saying so; --metrics FILE works in both.
ifeq ($(STATIC),1)
METRICS_HTTP	?= 0
else
METRICS_HTTP	?= 1
endif
CFLAGS		+= -DSTOCKADE_METRICS_HTTP=$(METRICS_HTTP)
# (Not linked: agent/metrics_http.c loads libmicrohttpd.so.12 when
# --metrics-listen asks for it, so GnuTLS is not in every agent's memory;
# -ldl for a glibc before 2.34, where dlopen is not in libc.)
ifeq ($(METRICS_HTTP),1)
LDLIBS		+= -ldl
endif
ifeq ($(STATIC),1)
LDFLAGS		+= -static
LDLIBS		+= -lzstd
endif
BPF_CFLAGS	:= -g -O2 -target bpf -D__TARGET_ARCH_x86 -mcpu=v3 $(WARN) \
		   -Wno-unused-parameter -Iinclude -I$(BPF_OUT) $(BPF_EXTRA) $(DEFS)

BPF_SRCS	:= $(wildcard bpf/*.bpf.c)
BPF_OBJS	:= $(patsubst bpf/%.bpf.c,$(BPF_OUT)/bpf/%.bpf.o,$(BPF_SRCS))
POLICY_SRCS	:= $(wildcard policy/*.c)
# Userspace code with no BPF skeleton dependency: the unit tests link it.
LIB_SRCS	:= $(POLICY_SRCS) agent/json.c agent/net_rules.c agent/file_rules.c agent/exec.c agent/exec_hash.c agent/preexist_judge.c \
		   agent/limits_util.c agent/lsm_table.c agent/rules_check.c \
		   agent/sandbox_table.c agent/policy_table.c agent/loop.c agent/notify.c agent/manifest.c agent/probe.c agent/register_check.c agent/report.c \
		   agent/container_meta.c agent/oci_hook.c agent/records.c agent/watch_filter.c agent/watch_format.c
AGENT_SRCS	:= $(filter-out $(LIB_SRCS),$(wildcard agent/*.c))
LIB_OBJS	:= $(patsubst %.c,$(OUT)/obj/%.o,$(LIB_SRCS))
AGENT_OBJS	:= $(patsubst %.c,$(OUT)/obj/%.o,$(AGENT_SRCS))
# JSON_CHECK_KEYS: agent/json.c aborts on a key that would need escaping
# (keys are written as they are: agent/json.h).
ASAN_FLAGS	:= -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all -DJSON_CHECK_KEYS
ASAN_OBJS	:= $(patsubst %.c,$(OUT)/asan/%.o,$(LIB_SRCS))
UNIT_SRCS	:= $(wildcard tests/unit/test_*.c)
UNIT_BINS	:= $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))
UNIT_ASAN	:= $(patsubst tests/unit/%.c,$(OUT)/tests/asan-%,$(UNIT_SRCS))
TOOL_SRCS	:= $(wildcard tools/*.c)
TOOL_BINS	:= $(patsubst tools/%.c,$(OUT)/tools/%,$(TOOL_SRCS))

# Debian packages the build, the tests and the demo need.
DEB_PKGS	:= clang llvm gcc make pkg-config libbpf-dev bpftool libelf-dev \
		   zlib1g-dev libzstd-dev libyaml-dev libcmocka-dev nettle-dev libmicrohttpd-dev \
		   libclang-rt-14-dev libjson-c-dev iproute2 util-linux qemu-system-x86 \
		   busybox-static cpio python3-minimal python3-jsonschema xz-utils runc curl \
		   systemd logrotate jq tmux strace \
		   nodejs

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test unit-test unit-test-asan prog-test live-test fuzz fuzz-run k8s-test \
	demo clean vm-test vm-shell tools variant variant-layout bench

all: $(BIN) tools

deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
			grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing:$$missing"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends $$missing; \
	fi; \
	if ! command -v npm > /dev/null; then \
		echo "deps: installing: npm (Debian's nodejs ships without it)"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends npm; \
	fi

$(BPF_OUT)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)test -r $(VMLINUX_BTF) || { echo "no BTF at $(VMLINUX_BTF): set VMLINUX_BTF=" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(BPF_OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_OUT)/vmlinux.h $(wildcard include/*.h bpf/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(LLVM_STRIP) -g $@.tmp -o $@ && rm -f $@.tmp

$(BPF_OUT)/stockade.bpf.o: $(BPF_OBJS)
	$(call msg,LINK-BPF,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(BPF_OUT)/stockade.skel.h: $(BPF_OUT)/stockade.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name stockade > $@

$(OUT)/obj/%.o: %.c $(wildcard include/*.h policy/*.h agent/*.h) | $(OUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(AGENT_OBJS): $(BPF_OUT)/stockade.skel.h

$(BIN): $(AGENT_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUT)/tools/%: tools/%.c $(wildcard include/*.h tools/*.h) | $(OUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -lm -o $@

# nop has no C library to link (tools/nop.c says why): its own flags.
$(OUT)/tools/nop: tools/nop.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 $(WARN) -nostdlib -static -fno-stack-protector $< -o $@

# benchhash times agent/exec_hash.c itself: linked with it.
$(OUT)/tools/benchhash: tools/benchhash.c $(OUT)/obj/agent/exec_hash.o $(OUT)/obj/agent/exec.o \
		$(OUT)/obj/agent/json.o $(OUT)/obj/agent/records.o $(OUT)/obj/agent/sandbox_table.o \
		$(OUT)/obj/policy/container.o $(wildcard include/*.h agent/*.h) | $(OUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(filter %.c %.o,$^) -lnettle -lm -o $@

# lsmnull loads its programs through libbpf (the kernel's BTF, the load).
$(OUT)/tools/lsmnull: tools/lsmnull.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(filter-out -lyaml -lnettle -ljson-c,$(LDLIBS)) -o $@

# storm reads the pinned .bss with the skeleton's struct stockade__bss.
$(OUT)/tools/storm $(OUT)/tools/evcount: $(BPF_OUT)/stockade.skel.h

# setupprobe-ld: setupprobe built dynamic, whatever STATIC says, with an
# ELF interpreter whose path takes long to resolve: 2,000 "./" and then
# SLOWLD_DIR/s1, a chain of symlinks of as many "./" each that
# tests/vm/setup-race.sh makes in the guest, ending at the real ld.so.
# A runtime moving its init while the init re-executes its clone then
# lands, more often than not, between the exec's bprm_check and its
# interpreter's open (include/setup.h, struct setup_clone).
SLOWLD_DIR	:= /tmp/slowld
$(OUT)/tools/setupprobe-ld: tools/setupprobe.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -Wl,--dynamic-linker=$(SLOWLD_DIR)/$$(printf './%.0s' $$(seq 2000))s1 -o $@

tools: $(TOOL_BINS) $(OUT)/tools/setupprobe-ld

$(OUT):
	$(Q)mkdir -p $(OUT)

# ---- unit tests (cmocka), plain and under ASan/UBSan ----
$(OUT)/tests/test_%: tests/unit/test_%.c tests/unit/test.h $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(filter-out %.h,$^) -lyaml -lnettle -ljson-c -lcmocka -o $@

$(OUT)/asan/%.o: %.c $(wildcard include/*.h policy/*.h agent/*.h)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(ASAN_FLAGS) -c $< -o $@

$(OUT)/tests/asan-test_%: tests/unit/test_%.c tests/unit/test.h $(ASAN_OBJS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(ASAN_FLAGS) $(filter-out %.h,$^) -lyaml -lnettle -ljson-c -lcmocka -o $@

unit-test: $(UNIT_BINS) $(BPF_OUT)/stockade.skel.h
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done
	@sh tools/map-owners.sh $(BPF_OUT)/stockade.skel.h
	@python3 tools/promcheck.py --self-test

unit-test-asan: $(UNIT_ASAN)
	@set -e; for t in $(UNIT_ASAN); do echo "== $$t"; \
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $$t; done

# ---- deploy/kubernetes/ against the Kubernetes API schemas (offline) ----
# tests/k8s/package.json's exact versions (package-lock.json), installed by
# npm ci into $(OUT)/k8s: once, again only when the lock changes. Installing
# runs no package's scripts.
K8S_MODULES	:= $(OUT)/k8s
$(K8S_MODULES)/.installed: tests/k8s/package.json tests/k8s/package-lock.json
	$(call msg,NPM-CI,$(K8S_MODULES))
	$(Q)command -v npm > /dev/null || { echo "k8s-test: npm not found; run make deps (it installs nodejs and npm)" >&2; exit 1; }
	$(Q)mkdir -p $(K8S_MODULES)
	$(Q)cp tests/k8s/package.json tests/k8s/package-lock.json $(K8S_MODULES)/
	$(Q)for try in 1 2 3; do \
		npm ci --prefix $(K8S_MODULES) --ignore-scripts --no-audit --no-fund --loglevel=error && break; \
		[ $$try = 3 ] && { echo "k8s-test: npm ci failed 3 times (above): the npm registry unreachable, or npm too old for the lock" >&2; exit 1; }; \
		echo "k8s-test: npm ci failed (try $$try of 3), again in 10 s" >&2; sleep 10; \
	done
	$(Q)touch $@

k8s-test: $(BIN) $(K8S_MODULES)/.installed
	$(Q)echo "== tests/k8s/run.sh"; STOCKADE=./$(BIN) K8S_MODULES=$(K8S_MODULES) sh tests/k8s/run.sh

# ---- BPF programs run by the kernel on crafted input (root) ----
# tests/prog: bpf_prog_test_run_opts on the skeleton's cgroup programs;
# a program type this kernel cannot test-run is skipped, and says why.
$(OUT)/tests/prog/test_prog: tests/prog/test_prog.c tests/unit/test.h \
		$(BPF_OUT)/stockade.skel.h $(wildcard include/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/unit $< -lbpf -lelf -lz -lcmocka -o $@

prog-test: $(OUT)/tests/prog/test_prog
	$(Q)echo "== $<"; $<

# ---- libFuzzer target for the policy loader ----
FUZZ_FLAGS	:= -g -O1 -fsanitize=fuzzer,address,undefined $(WARN) $(INCLUDES) -D_GNU_SOURCE
$(OUT)/fuzz/policy_fuzz: tests/fuzz/policy_fuzz.c $(POLICY_SRCS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)clang $(FUZZ_FLAGS) $^ -lyaml -o $@

# The /proc and record parsers of `stockade manifest` (agent/manifest.c).
$(OUT)/fuzz/proc_fuzz: tests/fuzz/proc_fuzz.c agent/manifest.c agent/probe.c agent/json.c $(POLICY_SRCS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)clang $(FUZZ_FLAGS) $^ -lyaml -o $@

# The JSON readers of agent/container_meta.c: the OCI state, configs,
# docker's config.v2.json and the hook's records (a container's creator
# writes what they hold).
$(OUT)/fuzz/meta_fuzz: tests/fuzz/meta_fuzz.c agent/container_meta.c policy/container.c
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)clang $(FUZZ_FLAGS) $^ -ljson-c -o $@

# The events socket's request line (agent/watch_filter.c): any root
# process sends the agent one; and the record lines the client formats.
$(OUT)/fuzz/watch_fuzz: tests/fuzz/watch_fuzz.c agent/watch_filter.c agent/watch_format.c
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)clang $(FUZZ_FLAGS) $^ -ljson-c -o $@

FUZZ_BINS	:= $(OUT)/fuzz/policy_fuzz $(OUT)/fuzz/proc_fuzz $(OUT)/fuzz/meta_fuzz $(OUT)/fuzz/watch_fuzz
fuzz: $(FUZZ_BINS)

# A short run from the seed corpus proves the target still works; run it
# longer by hand with FUZZ_TIME=600.
FUZZ_TIME	?= 20
fuzz-run: $(FUZZ_BINS)
	$(Q)mkdir -p $(OUT)/fuzz/corpus $(OUT)/fuzz/corpus-proc $(OUT)/fuzz/corpus-meta $(OUT)/fuzz/corpus-watch
	$(Q)$(OUT)/fuzz/policy_fuzz -max_total_time=$(FUZZ_TIME) \
		$(OUT)/fuzz/corpus tests/fuzz/corpus policy/examples
	$(Q)$(OUT)/fuzz/proc_fuzz -max_total_time=$(FUZZ_TIME) \
		$(OUT)/fuzz/corpus-proc tests/fuzz/corpus-proc
	$(Q)$(OUT)/fuzz/meta_fuzz -max_total_time=$(FUZZ_TIME) \
		$(OUT)/fuzz/corpus-meta tests/fuzz/corpus-meta
	$(Q)$(OUT)/fuzz/watch_fuzz -max_total_time=$(FUZZ_TIME) \
		$(OUT)/fuzz/corpus-watch tests/fuzz/corpus-watch

# The same agent with a few BPF instructions changed (bpf/common.bpf.h,
# TEST_VARIANT_MARK): the upgrade tests switch between the two builds.
VARIANT		:= $(OUT)/variant/stockade
variant:
	$(Q)$(MAKE) --no-print-directory OUT=$(OUT)/variant BPF_OUT=$(BPF_OUT)/variant BIN=$(VARIANT) \
		BPF_EXTRA=-DSTOCKADE_TEST_VARIANT $(VARIANT)

# The same agent with pinned maps that do not fit (include/lifecycle.h,
# STOCKADE_TEST_LAYOUT): the replacement tests switch between the two;
# its one cg_fast slot serves tests/live/cgfast.sh and
# tests/vm/cgfast-race.sh (include/sandbox.h).
# DEFS reaches both halves: the layout version is shared.
VARIANT_LAYOUT	:= $(OUT)/variant-layout/stockade
variant-layout:
	$(Q)$(MAKE) --no-print-directory OUT=$(OUT)/variant-layout BPF_OUT=$(BPF_OUT)/variant-layout BIN=$(VARIANT_LAYOUT) \
		DEFS=-DSTOCKADE_TEST_LAYOUT $(VARIANT_LAYOUT)

# ---- live tests on this machine's kernel (root) ----
# Every script runs, even after one failed (each says what it found), and
# the target fails if any did.
LIVE_TESTS := run noentry cgfast srcroute mptcp setuppass degraded limits-hybrid lifecycle reload zerowin burst latency preexist manifest probe report ocihook \
	      systemd reopen logfull metrics preflight configmap containers watch idle fdlimit
# Each script's time and the CPU its processes took (the shell's reaped
# children: cutime + cstime, in USER_HZ), for make test's budget.
live-test: $(BIN) tools variant variant-layout
	@rc=0; cpu() { awk '{ print $$16 + $$17 }' /proc/$$$$/stat; }; \
	for t in $(LIVE_TESTS); do \
		t0=$$(date +%s) c0=$$(cpu); \
		STOCKADE_VARIANT=$(VARIANT) STOCKADE_VARIANT_LAYOUT=$(VARIANT_LAYOUT) \
			sh tests/live/$$t.sh || { echo "live-test: tests/live/$$t.sh FAILED"; rc=1; }; \
		echo "live-test: $$t took $$(($$(date +%s) - t0)) s, $$((($$(cpu) - c0) / 100)) s of CPU"; \
	done; \
	[ $$rc = 0 ] && echo "live-test: all passed"; exit $$rc

# ---- benchmarks (root; README "Performance") ----
# tests/bench/run.sh runs each section script (tests/bench/*.sh) and prints
# the table; build/bench/results.json has every row and raw sample. A
# section that needs more than the agent and the tools adds its own
# prerequisite with a `bench:` line of its own. BENCH_TINY=1: tiny counts,
# only to prove that the benchmark still works (make test runs that).
# BENCH_ONLY="net scale": only those sections (default: all of them).
BENCH_TINY	?= 0
BENCH_ONLY	?=
bench: deps $(BIN) tools
	$(Q)BENCH_TINY=$(BENCH_TINY) BENCH_ONLY="$(BENCH_ONLY)" sh tests/bench/run.sh

# Unit tests, the BPF programs' test runs, host live tests, the benchmark
# in tiny mode, and the VM suite; each step runs even when an earlier one
# failed (so CI shows every result), and the target fails if any did; its
# last lines then name the failed steps and quote what failed in them
# (tools/test-summary.sh: CI keeps only the end of the output). The
# tiny bench fails only on an invalid run or a crash, never on a
# performance goal (tiny counts judge none).
# Everything is built first, the VM's static binaries and initramfs
# images included, by one make at a time (no two writing the same
# objects), each with TEST_JOBS jobs: the host's part takes about 2
# minutes so, 3 min 50 s with one. (Building it beside the guests
# instead made make test 4 minutes longer: they share the two cores.)
# Not the k8s test's npm modules: the registry's answer took 16-41 s, a
# build slot idle meanwhile, so k8s-test fetches them beside the guests.
# The fuzz targets run TEST_FUZZ_TIME (10 s) each there, not FUZZ_TIME's
# 20: their CPU is the guests'. The build's and the initramfs' output is
# kept in build/test-*.log too, for the summary of a failed run.
# Then the VM suite, the longest part (each guest about 15 minutes under
# TCG in make test), starts at once, and the host's parts run beside
# it: the unit, ASan, fuzz and prog runs beside the host live tests (the
# first are CPU-bound for about a minute and a half, the second mostly
# wait for agents and probes), then the tiny bench. The host's output
# comes first, the VM suite's when it is done.
TEST_JOBS	?= 2
TEST_BUILD	= $(BIN) tools variant variant-layout $(UNIT_BINS) $(UNIT_ASAN) \
		  $(FUZZ_BINS) $(OUT)/tests/prog/test_prog
# The fuzz targets' time in make test (make fuzz-run alone: FUZZ_TIME).
TEST_FUZZ_TIME	?= 10
test: deps
	@failed=; mkdir -p $(OUT); rm -f $(OUT)/test-*.rc; \
	{ $(MAKE) -k -j$(TEST_JOBS) $(TEST_BUILD); echo $$? > $(OUT)/test-build.rc; } 2>&1 | tee $(OUT)/test-build.log; \
	[ "$$(cat $(OUT)/test-build.rc 2>/dev/null)" = 0 ] || failed="$$failed build"; \
	{ $(MAKE) --no-print-directory vm-initramfs VM_IMAGES="$(VM_KERNELS)"; echo $$? > $(OUT)/test-initramfs.rc; } 2>&1 | tee $(OUT)/test-initramfs.log; \
	[ "$$(cat $(OUT)/test-initramfs.rc 2>/dev/null)" = 0 ] || failed="$$failed vm-initramfs"; \
	( $(MAKE) --no-print-directory vm-run > $(OUT)/test-vm.log 2>&1; \
	  echo $$? > $(OUT)/test-vm.rc ) & vm=$$!; \
	( $(MAKE) unit-test unit-test-asan fuzz-run FUZZ_TIME=$(TEST_FUZZ_TIME) prog-test k8s-test > $(OUT)/test-unit.log 2>&1; \
	  echo $$? > $(OUT)/test-unit.rc ) & unit=$$!; \
	{ $(MAKE) live-test; echo $$? > $(OUT)/test-live.rc; } 2>&1 | tee $(OUT)/test-live.log; \
	[ "$$(cat $(OUT)/test-live.rc 2>/dev/null)" = 0 ] || failed="$$failed live-test"; \
	wait $$unit; cat $(OUT)/test-unit.log; \
	[ "$$(cat $(OUT)/test-unit.rc 2>/dev/null)" = 0 ] || { echo "make test: the unit, fuzz, prog or k8s tests FAILED (above)"; failed="$$failed unit/fuzz/prog/k8s"; }; \
	{ $(MAKE) bench BENCH_TINY=1; echo $$? > $(OUT)/test-bench.rc; } 2>&1 | tee $(OUT)/test-bench.log; \
	[ "$$(cat $(OUT)/test-bench.rc 2>/dev/null)" = 0 ] || failed="$$failed bench"; \
	echo "make test: the VM suite (started with the host tests; its output follows)"; \
	wait $$vm; cat $(OUT)/test-vm.log; \
	[ "$$(cat $(OUT)/test-vm.rc 2>/dev/null)" = 0 ] || { echo "make test: the VM suite FAILED (above)"; failed="$$failed vm"; }; \
	if [ -z "$$failed" ]; then echo "make test: all suites passed"; exit 0; fi; \
	sh tools/test-summary.sh "$$failed" $(OUT)/test-build.log $(OUT)/test-initramfs.log \
		$(OUT)/test-unit.log $(OUT)/test-live.log $(OUT)/test-bench.log $(OUT)/test-vm.log; \
	exit 1

demo: deps
	$(MAKE) $(BIN) tools
	$(Q)sh tools/demo.sh

clean:
	rm -rf $(OUT) stockade

# The test VM (tests/vm): vm-test, vm-shell and their helpers.
include mk/vm.mk
