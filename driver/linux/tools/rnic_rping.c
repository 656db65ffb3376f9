// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_rping: librdmacm's rping client protocol from user space over /dev/rnic0, kernel-bypass:
 * the control path (buffers, regions, CQ, QP, connect) through rnic.ko's ioctls, the data path
 * (WQEs written into the mmapped send and receive rings, doorbells stored to the mmapped BAR0 page,
 * completions polled in the mmapped CQ ring) with no system call. Against an rping server (host b
 * of the platform, workload.type=rping): per ping it advertises a buffer holding rping's pattern,
 * the server RDMA Reads and checks it and RDMA Writes it back into a second buffer, which this tool
 * compares byte for byte. Prints a perftest-style latency table and "rnic_rping: PASS" or "FAIL".
 *
 *   rnic_rping [-d /dev/rnic0] [-a 10.0.0.2] [-p 7174] [-C count] [-S size]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../rnic_regs.h"
#include "../rnic_uapi.h"
#include "rnic_tool.h"

#define INFO 16u /* sizeof(struct rping_rdma_info) */
#define CQ_ENTRIES 64u
#define SQ_ENTRIES 16u
#define RQ_ENTRIES 4u

struct ctx {
	int fd;
	uint8_t *buf;           /* recv info @0, send info @32, rdma @64, start @64 + slot */
	uint64_t buf_dma;
	uint32_t slot;
	uint32_t recv_stag, send_stag, rdma_stag, start_stag;
	uint64_t recv_addr, send_addr, rdma_addr, start_addr;
	uint8_t *cq, *sq, *rq;
	volatile uint32_t *cq_db, *qp_db; /* the CQ's and the QP's doorbell slots */
	uint32_t cqn, qpn, cq_cons, sq_prod, sq_done, rq_prod;
};

static void die(const char *what)
{
	fprintf(stderr, "rnic_rping: %s: %s\n", what, strerror(errno));
	printf("rnic_rping: FAIL %s\n", what);
	exit(1);
}

static void put_be(uint8_t *p, uint64_t v, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		p[i] = (uint8_t)(v >> (8 * (len - 1 - i)));
}

static void *map(struct ctx *c, uint64_t off, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, (off_t)off);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static uint32_t reg(struct ctx *c, uint32_t handle, uint64_t off, uint64_t len, uint32_t access, uint64_t *addr)
{
	struct rnic_uapi_reg_mr m = { .handle = handle, .access = access, .offset = off, .length = len };

	if (ioctl(c->fd, RNIC_IOC_REG_MR, &m) != 0)
		die("RNIC_IOC_REG_MR");
	*addr = m.addr;
	return m.stag;
}

static void post_recv(struct ctx *c)
{
	uint8_t *w = c->rq + (c->rq_prod % RQ_ENTRIES) * RNIC_RECV_WQE_SIZE;

	memset(w, 0, RNIC_RECV_WQE_SIZE);
	put_le(w + RNIC_RECV_WQE_WR_ID, 1, 8);
	put_le(w + RNIC_RECV_WQE_ADDR, c->recv_addr, 8);
	put_le(w + RNIC_RECV_WQE_LENGTH, INFO, 4);
	put_le(w + RNIC_RECV_WQE_STAG, c->recv_stag, 4);
	c->rq_prod++;
	__atomic_thread_fence(__ATOMIC_RELEASE); /* the WQE before the doorbell */
	c->qp_db[RNIC_RQ_DOORBELL / 4] = c->rq_prod;
}

static void post_send_info(struct ctx *c, uint64_t addr, uint32_t stag, uint32_t size)
{
	uint8_t *info = c->buf + 32, *w;

	if (c->sq_prod - c->sq_done >= SQ_ENTRIES) {
		errno = ENOSPC;
		die("send queue full");
	}
	put_be(info, addr, 8);
	put_be(info + 8, stag, 4);
	put_be(info + 12, size, 4);
	w = c->sq + (c->sq_prod % SQ_ENTRIES) * RNIC_SEND_WQE_SIZE;
	memset(w, 0, RNIC_SEND_WQE_SIZE);
	w[RNIC_SEND_WQE_OPCODE] = RNIC_WR_SEND;
	w[RNIC_SEND_WQE_FLAGS] = RNIC_WR_FLAG_SIGNALED;
	put_le(w + RNIC_SEND_WQE_WR_ID, 2, 8);
	put_le(w + RNIC_SEND_WQE_LOCAL_ADDR, c->send_addr, 8);
	put_le(w + RNIC_SEND_WQE_LENGTH, INFO, 4);
	put_le(w + RNIC_SEND_WQE_LOCAL_STAG, c->send_stag, 4);
	c->sq_prod++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	c->qp_db[RNIC_SQ_DOORBELL / 4] = c->sq_prod;
}

/* The next receive completion (send completions consumed on the way); re-posts the receive. */
static int wait_recv(struct ctx *c, const char *what)
{
	uint64_t deadline = now_ns() + 60ull * 1000000000ull;

	for (;;) {
		const uint8_t *e = c->cq + (c->cq_cons % CQ_ENTRIES) * RNIC_CQE_SIZE;
		uint32_t want = (c->cq_cons / CQ_ENTRIES) % 2 == 0 ? 1 : 0;
		/* The owner word is written by the device last: load it once per poll, then the entry. */
		uint32_t owner = __atomic_load_n((const uint32_t *)(e + RNIC_CQE_OWNER), __ATOMIC_ACQUIRE);

		if ((owner >> 31) != want) {
			if (now_ns() > deadline) {
				printf("rnic_rping: FAIL no completion while waiting for %s\n", what);
				return -1;
			}
			continue;
		}
		uint8_t status = e[RNIC_CQE_STATUS], opcode = e[RNIC_CQE_OPCODE];
		uint32_t len = (uint32_t)get_le(e + RNIC_CQE_BYTE_LEN, 4), idx = (uint32_t)get_le(e + RNIC_CQE_WQE_INDEX, 4);

		c->cq_cons++;
		c->cq_db[RNIC_CQ_CONSUMER / 4] = c->cq_cons;
		if (status != RNIC_CQE_STATUS_SUCCESS || opcode == RNIC_CQE_OPCODE_QP_ERROR) {
			printf("rnic_rping: FAIL completion status %u opcode %u while waiting for %s\n", status, opcode,
			       what);
			return -1;
		}
		if (!(owner & RNIC_CQE_OWNER_RECEIVE)) {
			c->sq_done = idx + 1;
			continue;
		}
		if (len != INFO) {
			printf("rnic_rping: FAIL received %u bytes (rping sends %u)\n", len, INFO);
			return -1;
		}
		post_recv(c);
		return 0;
	}
}

static void pattern(uint8_t *out, unsigned int ping, unsigned int size)
{
	char head[32];
	unsigned int n = (unsigned int)snprintf(head, sizeof(head), "rdma-ping-%u: ", ping);
	uint8_t ch = (uint8_t)(65 + ping % 58);

	if (n > size - 1)
		n = size - 1;
	memcpy(out, head, n);
	for (unsigned int i = n; i < size; i++) {
		out[i] = ch;
		if (++ch > 122)
			ch = 65;
	}
	out[size - 1] = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/rnic0", *server = "10.0.0.2";
	unsigned int port = 7174, count = 20, size = 3000;
	struct ctx c = { 0 };
	int opt;

	while ((opt = getopt(argc, argv, "d:a:p:C:S:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'a': server = optarg; break;
		case 'p': port = (unsigned int)atoi(optarg); break;
		case 'C': count = (unsigned int)atoi(optarg); break;
		case 'S': size = (unsigned int)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: rnic_rping [-d dev] [-a server] [-p port] [-C count] [-S size]\n");
			return 2;
		}
	}
	struct in_addr ip;
	if (size < 26 || size > 65536 || count == 0 || inet_pton(AF_INET, server, &ip) != 1) {
		fprintf(stderr, "rnic_rping: bad -S (26..65536), -C (> 0) or -a\n");
		return 2;
	}
	c.fd = open(dev, O_RDWR);
	if (c.fd < 0)
		die(dev);

	/* Control path: one device-visible buffer, four regions in it, a CQ and a QP. */
	c.slot = (size + 63) / 64 * 64;
	struct rnic_uapi_alloc a = { .size = 64 + 2 * (uint64_t)c.slot };
	if (ioctl(c.fd, RNIC_IOC_ALLOC, &a) != 0)
		die("RNIC_IOC_ALLOC");
	c.buf = map(&c, a.mmap_offset, (size_t)a.size);
	const uint32_t all = RNIC_MR_LOCAL_WRITE | RNIC_MR_REMOTE_READ | RNIC_MR_REMOTE_WRITE;
	c.recv_stag = reg(&c, a.handle, 0, INFO, RNIC_MR_LOCAL_WRITE, &c.recv_addr);
	c.send_stag = reg(&c, a.handle, 32, INFO, 0, &c.send_addr);
	c.rdma_stag = reg(&c, a.handle, 64, size, all, &c.rdma_addr);
	c.start_stag = reg(&c, a.handle, 64 + c.slot, size, all, &c.start_addr);
	struct rnic_uapi_create_cq cq = { .entries = CQ_ENTRIES };
	if (ioctl(c.fd, RNIC_IOC_CREATE_CQ, &cq) != 0)
		die("RNIC_IOC_CREATE_CQ");
	c.cqn = cq.cqn;
	c.cq = map(&c, cq.ring_mmap, CQ_ENTRIES * RNIC_CQE_SIZE);
	c.cq_db = (volatile uint32_t *)((uint8_t *)map(&c, cq.db_mmap, 4096) + cq.db_offset);
	struct rnic_uapi_create_qp qp = { .cqn = c.cqn, .sq_entries = SQ_ENTRIES, .rq_entries = RQ_ENTRIES };
	if (ioctl(c.fd, RNIC_IOC_CREATE_QP, &qp) != 0)
		die("RNIC_IOC_CREATE_QP");
	c.qpn = qp.qpn;
	c.sq = map(&c, qp.sq_mmap, SQ_ENTRIES * RNIC_SEND_WQE_SIZE);
	c.rq = map(&c, qp.rq_mmap, RQ_ENTRIES * RNIC_RECV_WQE_SIZE);
	c.qp_db = (volatile uint32_t *)((uint8_t *)map(&c, qp.db_mmap, 4096) + qp.db_offset);
	printf("rnic_rping: CQ %u, QP %u, buffer at device address 0x%llx\n", c.cqn, c.qpn,
	       (unsigned long long)a.dma_addr);
	post_recv(&c);
	struct rnic_uapi_connect cn = { .qpn = c.qpn, .ipv4 = ntohl(ip.s_addr), .port = (uint16_t)port,
					.local_port = 40001, .ird = 1, .ord = 1 };
	if (ioctl(c.fd, RNIC_IOC_CONNECT, &cn) != 0) {
		fprintf(stderr, "rnic_rping: connect: device status %u\n", cn.status);
		die("RNIC_IOC_CONNECT");
	}
	printf("rnic_rping: connected to %s:%u\n", server, port);

	/* Data path: no system call from here to the close. */
	uint8_t *expect = malloc(size);
	uint64_t *lat = calloc(count, sizeof(*lat)), checked = 0, bad = 0;
	if (!expect || !lat)
		die("malloc");
	uint8_t *rdma = c.buf + 64, *start = c.buf + 64 + c.slot;
	int failed = 0;
	for (unsigned int ping = 0; ping < count && !failed; ping++) {
		pattern(expect, ping, size);
		memcpy(start, expect, size);
		memset(rdma, 0, size);
		uint64_t t0 = now_ns();
		post_send_info(&c, c.start_addr, c.start_stag, size);
		if (wait_recv(&c, "the go-ahead after the server's RDMA Read")) {
			failed = 1;
			break;
		}
		post_send_info(&c, c.rdma_addr, c.rdma_stag, size);
		if (wait_recv(&c, "the go-ahead after the server's RDMA Write")) {
			failed = 1;
			break;
		}
		lat[ping] = now_ns() - t0;
		for (unsigned int i = 0; i < size; i++)
			bad += rdma[i] != expect[i];
		checked += size;
		if (bad) {
			printf("rnic_rping: FAIL ping %u: %llu bytes of the echo differ\n", ping, (unsigned long long)bad);
			failed = 1;
		}
	}
	struct rnic_uapi_destroy_qp dq = { .qpn = c.qpn };
	if (ioctl(c.fd, RNIC_IOC_DESTROY_QP, &dq) != 0)
		die("RNIC_IOC_DESTROY_QP");
	if (failed)
		return 1;
	qsort(lat, count, sizeof(*lat), cmp_u64);
	uint64_t sum = 0;
	for (unsigned int i = 0; i < count; i++)
		sum += lat[i];
	printf("---------------------------------------------------------------------------------------\n");
	printf(" rping from user space over /dev/rnic0 (2 Sends, the server's RDMA Read and Write per ping)\n");
	printf(" #bytes     #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]\n");
	printf(" %-10u %-14u %-14.2f %-12.2f %-18.2f %-10.2f\n", size, count, lat[0] / 1e3, lat[count - 1] / 1e3,
	       lat[count / 2] / 1e3, sum / 1e3 / count);
	printf("---------------------------------------------------------------------------------------\n");
	printf("rnic_rping: PASS %u pings of %u bytes, %llu bytes checked, %llu bad\n", count, size,
	       (unsigned long long)checked, (unsigned long long)bad);
	close(c.fd);
	return 0;
}
