/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What both guest tools (rnic_rping, rnic_perf) need besides the uapi: little-endian fields of the
 * device's WQEs and CQEs in the mmapped rings, and a monotonic clock for their tables.
 */
#ifndef RNIC_TOOL_H
#define RNIC_TOOL_H

#include <stdint.h>
#include <time.h>

static inline void put_le(uint8_t *p, uint64_t v, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t get_le(const uint8_t *p, unsigned int len)
{
	uint64_t v = 0;

	for (int i = (int)len - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

#endif
