# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# ---- test VM: the BPF-LSM tests, on Debian's cloud kernel under qemu ----
# Included at the end of the top Makefile (it uses OUT, Q, msg, CC,
# LDFLAGS, LDLIBS, AGENT_OBJS and LIB_OBJS from there). The build host's
# kernel refuses BPF-LSM programs, so `vm-test` boots two Debian cloud
# kernels, 6.1 (bookworm, system qemu 7.2) and 6.12 (bookworm-backports,
# qemu 10 from backports: tests/vm/qemu.sh says why), in parallel, each
# with an initramfs of busybox + static binaries + the test scripts, and
# reads the results back from their serial consoles (README.md, "Testing").
#
#   make vm-test   [VM_TIMEOUT=150] [VM_KVM=1] [VM_ONLY=a,b] [VM_KERNELS=6.12]
#                                                run the suite in the VMs
#   make vm-shell  [VM_KERNEL=6.12]              one guest, interactive shell
#   make vm-demo   [VM_TIMEOUT=150] [VM_KVM=1]   the file part of `make demo`
#                                                in the VM (stockade.demo=1)
#
# Static binaries are built by a sub-make with OUT=$(VM_STATIC) STATIC=1
# BIN=...: their userspace objects stay apart from the normal build, and
# the developer's dynamic ./stockade is never replaced; their BPF half is
# the normal build's (BPF_OUT, below).

VM_DIR		:= build/vm
VM_STATIC	:= build/static
VM_JOBS		?= 2
# Per guest. With both guests at once on 2 cores the whole suite took
# ~1050 s on 6.1 and ~1250 s on 6.12 (the exec records' 10,000 fork+exec
# storm alone 70 s and 105 s under TCG) on a fast day; on 2026-12-03 two
# 6.1 guests at once, nothing else running, took 1682 s each, and CI,
# with the host's tests beside them, killed 6.1's lifecycle part at
# 1800 s. The timeout is there to catch a hang, not to time the suite:
# 2400 s leaves such a day its margin.
VM_TIMEOUT	?= 2400
# vm-test runs every kernel in VM_KERNELS; shell, demo and bench boot one,
# VM_KERNEL. A kernel's files: $(VM_DIR)/kernel-K, initramfs-K.cpio,
# console-K.log; qemu 10 (for all but 6.1) in $(VM_DIR)/qemu.
VM_KERNELS	?= 6.1 6.12
VM_KERNEL	?= 6.1
# The kernels vm-initramfs prepares (vm-test sets it to VM_KERNELS).
VM_IMAGES	?= $(VM_KERNEL)

.PHONY: vm-test vm-run vm-shell vm-demo vm-kernel vm-static vm-initramfs vm-clean

# Downloads and unpacks the kernel package once; later runs reuse it.
vm-kernel:
	$(Q)for k in $(VM_IMAGES); do \
		sh tests/vm/kernel.sh $(VM_DIR)/kernel-$$k $$k || exit 1; \
		[ $$k = 6.1 ] || sh tests/vm/qemu.sh $(VM_DIR)/qemu || exit 1; \
	done

# The variant builds (Makefile, `variant`, `variant-layout`) go in with the
# tools, for the upgrade and replacement tests.
# CDEBUG= : no -g for the guest's userspace (no debugger runs there; the
# BPF objects keep theirs, BTF needs it): seconds off the 3 minutes.
# BPF_OUT=$(OUT): the BPF objects and skeletons are the normal build's
# (and build/variant's, build/variant-layout's): built once, not again
# for the static binaries. Built first, as prerequisites, so that within
# one make (make -j2 all vm-test) no two sub-makes write them at once.
vm-static: $(OUT)/stockade.skel.h variant variant-layout
	$(Q)$(MAKE) --no-print-directory -j$(VM_JOBS) STATIC=1 CDEBUG= OUT=$(VM_STATIC) \
		BPF_OUT=$(OUT) BIN=$(VM_STATIC)/stockade $(VM_STATIC)/stockade tools
	$(Q)$(MAKE) --no-print-directory -j$(VM_JOBS) STATIC=1 CDEBUG= OUT=$(VM_STATIC) \
		BPF_OUT=$(OUT) variant
	$(Q)$(MAKE) --no-print-directory -j$(VM_JOBS) STATIC=1 CDEBUG= OUT=$(VM_STATIC) \
		BPF_OUT=$(OUT) variant-layout
	$(Q)cp $(VM_STATIC)/variant/stockade $(VM_STATIC)/tools/stockade-variant
	$(Q)cp $(VM_STATIC)/variant-layout/stockade $(VM_STATIC)/tools/stockade-variant-layout

# Rebuilt on every run: it takes a fraction of a second, and its inputs
# (tests/live/*, tests/vm/*, tools) are too loose for a dependency list.
# The kernel's download and unpacking (network, dpkg) runs beside the
# static build (CPU): seconds of the 3 minutes `make vm-test` may take
# from nothing.
# One initramfs per kernel: they differ only in the modules
# (tests/vm/modules) taken from each kernel's package.
vm-initramfs:
	$(Q)$(MAKE) --no-print-directory vm-kernel VM_IMAGES="$(VM_IMAGES)" & kpid=$$!; \
	$(MAKE) --no-print-directory vm-static; rc=$$?; \
	wait $$kpid || rc=1; exit $$rc
	$(Q)mkdir -p $(VM_DIR)
	$(Q)cp $(VM_STATIC)/stockade $(VM_DIR)/stockade
	$(Q)for k in $(VM_IMAGES); do \
		sh tests/vm/mkinitramfs.sh $(VM_DIR)/initramfs-$$k.cpio \
			$(VM_DIR)/stockade $(VM_STATIC)/tools $(VM_DIR)/kernel-$$k || exit 1; \
	done

# VM_ONLY=a,b: only those suite sections (tests/vm/suite.sh, want()).
VM_ONLY		?=
comma		:= ,
VM_RACE_TIMEOUT	?= 900
# The kernels of VM_KERNELS that get a two-CPU guest: 6.12's, for make
# test's 20 minutes (its dcache-race took 56 s beside 6.1's, 14 s alone);
# "6.1 6.12" for both.
VM_RACE_KERNELS	?= 6.12
vm-test:
	$(Q)$(MAKE) --no-print-directory vm-initramfs VM_IMAGES="$(VM_KERNELS)"
	$(Q)$(MAKE) --no-print-directory vm-run

# The guests alone, on initramfs images vm-initramfs made (make test
# builds them first, then runs this beside the host's tests).
# VM_ONLY without dcache-race, cgfast-race or setup-race: no two-CPU
# guests (tests/vm/run.sh, VM_RACE; VM_RACE=0 or 1 given on the command
# line wins).
VM_RACE		?= $(if $(VM_ONLY),$(if $(filter dcache-race cgfast-race setup-race,$(subst $(comma), ,$(VM_ONLY))),1,0),1)
vm-run:
	$(Q)VM_DIR=$(VM_DIR) VM_TIMEOUT=$(VM_TIMEOUT) VM_KERNELS="$(VM_KERNELS)" \
		VM_RACE=$(VM_RACE) VM_RACE_TIMEOUT=$(VM_RACE_TIMEOUT) \
		VM_RACE_KERNELS="$(VM_RACE_KERNELS)" \
		VM_APPEND="$(VM_APPEND)$(if $(VM_ONLY), stockade.only=$(VM_ONLY))" \
		sh tests/vm/run.sh test

vm-shell: vm-initramfs
	$(Q)VM_DIR=$(VM_DIR) VM_KERNEL=$(VM_KERNEL) sh tests/vm/run.sh shell

# tools/demo.sh runs the same two steps when the host refuses BPF-LSM.
vm-demo: vm-initramfs
	$(Q)VM_DIR=$(VM_DIR) VM_KERNEL=$(VM_KERNEL) VM_TIMEOUT=$(VM_TIMEOUT) sh tests/vm/run.sh demo

# Everything but the kernel cache, which would only be downloaded again.
vm-clean:
	rm -rf $(VM_STATIC) $(VM_DIR)/initramfs-*.cpio* $(VM_DIR)/stockade \
		$(VM_DIR)/console-*.log $(VM_DIR)/*-console*.log $(VM_DIR)/results-*.txt
