# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# ---- test VM: the BPF-LSM tests, on Debian's cloud kernel under qemu ----
# Included at the end of the top Makefile (it uses OUT, Q, msg, CC,
# LDFLAGS, LDLIBS, AGENT_OBJS and LIB_OBJS from there). The build host's
# kernel refuses BPF-LSM programs, so `vm-test` boots Debian's 6.1 cloud
# kernel once, with an initramfs of busybox + static binaries + the test
# scripts, and reads the results back from the serial console
# (README.md, "Testing").
#
#   make vm-test   [VM_TIMEOUT=420] [VM_KVM=1] [VM_ONLY=a,b]   run the suite in the VM
#   make vm-shell                                same guest, interactive shell
#   make vm-demo   [VM_TIMEOUT=420] [VM_KVM=1]   the file part of `make demo`
#                                                in the VM (stockade.demo=1)
#
# Static binaries are built by a sub-make with OUT=$(VM_STATIC) STATIC=1
# BIN=...: their objects stay apart from the normal build, and the
# developer's dynamic ./stockade is never replaced.

VM_DIR		:= build/vm
VM_STATIC	:= build/static
VM_JOBS		?= 2
VM_TIMEOUT	?= 420

.PHONY: vm-test vm-shell vm-demo vm-kernel vm-static vm-initramfs vm-clean

# Downloads and unpacks the kernel package once; later runs reuse it.
vm-kernel:
	$(Q)sh tests/vm/kernel.sh $(VM_DIR)/kernel

# The variant builds (Makefile, `variant`, `variant-layout`) go in with the
# tools, for the upgrade and replacement tests.
# CDEBUG= : no -g for the guest's userspace (no debugger runs there; the
# BPF objects keep theirs, BTF needs it): seconds off the 3 minutes.
vm-static:
	$(Q)$(MAKE) --no-print-directory -j$(VM_JOBS) STATIC=1 CDEBUG= OUT=$(VM_STATIC) \
		BIN=$(VM_STATIC)/stockade $(VM_STATIC)/stockade tools
	$(Q)$(MAKE) --no-print-directory -j$(VM_JOBS) STATIC=1 CDEBUG= OUT=$(VM_STATIC) variant
	$(Q)$(MAKE) --no-print-directory -j$(VM_JOBS) STATIC=1 CDEBUG= OUT=$(VM_STATIC) variant-layout
	$(Q)cp $(VM_STATIC)/variant/stockade $(VM_STATIC)/tools/stockade-variant
	$(Q)cp $(VM_STATIC)/variant-layout/stockade $(VM_STATIC)/tools/stockade-variant-layout

# Rebuilt on every run: it takes a fraction of a second, and its inputs
# (tests/live/*, tests/vm/*, tools) are too loose for a dependency list.
# The kernel's download and unpacking (network, dpkg) runs beside the
# static build (CPU): seconds of the 3 minutes `make vm-test` may take
# from nothing.
vm-initramfs:
	$(Q)sh tests/vm/kernel.sh $(VM_DIR)/kernel & kpid=$$!; \
	$(MAKE) --no-print-directory vm-static; rc=$$?; \
	wait $$kpid || rc=1; exit $$rc
	$(Q)mkdir -p $(VM_DIR)
	$(Q)cp $(VM_STATIC)/stockade $(VM_DIR)/stockade
	$(Q)sh tests/vm/mkinitramfs.sh $(VM_DIR)/initramfs.cpio \
		$(VM_DIR)/stockade $(VM_STATIC)/tools $(VM_DIR)/kernel

# VM_ONLY=a,b: only those suite sections (tests/vm/suite.sh, want()).
VM_ONLY		?=
vm-test: vm-initramfs
	$(Q)VM_DIR=$(VM_DIR) VM_TIMEOUT=$(VM_TIMEOUT) \
		VM_APPEND="$(VM_APPEND)$(if $(VM_ONLY), stockade.only=$(VM_ONLY))" \
		sh tests/vm/run.sh test

vm-shell: vm-initramfs
	$(Q)VM_DIR=$(VM_DIR) sh tests/vm/run.sh shell

# tools/demo.sh runs the same two steps when the host refuses BPF-LSM.
vm-demo: vm-initramfs
	$(Q)VM_DIR=$(VM_DIR) VM_TIMEOUT=$(VM_TIMEOUT) sh tests/vm/run.sh demo

# Everything but the kernel cache, which would only be downloaded again.
vm-clean:
	rm -rf $(VM_STATIC) $(VM_DIR)/initramfs.cpio* $(VM_DIR)/stockade \
		$(VM_DIR)/console.log $(VM_DIR)/demo-console.log $(VM_DIR)/bench-console.log
