// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * nop: exit(0) at once, with no C library and no loader: the cheapest
 * program there is to exec. The exec-record storm (tests/vm/exec-records.sh,
 * execprobe's `storm`) runs it 10,000 times: the records are under test
 * there, not the program, and under TCG a static glibc binary's start-up
 * doubled the storm's time. Built with -nostdlib -static (Makefile).
 */
#if !defined(__x86_64__)
#error "nop is x86-64 only (the test VM's architecture)"
#endif

void _start(void);

void _start(void)
{
	/* exit_group(0) */
	__asm__ volatile("syscall" : : "a"(231), "D"(0) : "rcx", "r11", "memory");
	__builtin_unreachable();
}
