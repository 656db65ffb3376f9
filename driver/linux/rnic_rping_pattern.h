/* SPDX-License-Identifier: GPL-2.0 */
/*
 * librdmacm rping's payload, shared by rnic.ko's built-in rping client and the rnic_kping consumer:
 * ping i carries "rdma-ping-<i>: " then letters from 'A' + i % 58 wrapping at 'z', NUL-terminated.
 */
#ifndef RNIC_RPING_PATTERN_H
#define RNIC_RPING_PATTERN_H

#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/types.h>

static inline void rnic_rping_pattern(u8 *out, unsigned int ping, unsigned int size)
{
	char head[32];
	unsigned int n = scnprintf(head, sizeof(head), "rdma-ping-%u: ", ping), i;
	u8 c = (u8)(65 + ping % 58);

	n = min(n, size - 1);
	memcpy(out, head, n);
	for (i = n; i < size; i++) {
		out[i] = c;
		if (++c > 122)
			c = 65;
	}
	out[size - 1] = 0;
}

#endif
