// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The shared event pipeline: the ring buffer `rb` and the counters ev_seq,
 * ev_produced and ev_lost live in common.bpf.h (weak, merged at link
 * time); this object only carries the license for the linked whole.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
