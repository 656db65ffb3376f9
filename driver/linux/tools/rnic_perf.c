// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_perf: perftest-like RDMA Write, RDMA Read, Send and FetchAdd bandwidth from user space over
 * /dev/rnic0 (kernel bypass: WQEs into the mmapped send queue, doorbells to the mmapped BAR0 page,
 * completions polled in the mmapped CQ), against host b's perf_server (workload.type = perf_server;
 * the exchange is described in platform/workloads/perf_server.h). Both sides check every byte:
 * the server checks what the Writes, Sends and FetchAdds left in its memory; this tool checks what
 * its Reads brought back and every FetchAdd's original value. Prints perftest's columns per
 * operation and "rnic_perf: PASS" or "rnic_perf: FAIL <why>".
 *
 * Its buffer is plain user memory (an anonymous mmap, as malloc gives large blocks), registered with
 * RNIC_IOC_REG_USER_MR: the driver pins its pages and the device reaches them through a page list;
 * work requests name the bytes by their virtual addresses. -M uses a buffer the driver allocates
 * with the DMA API instead (RNIC_IOC_ALLOC, contiguous regions).
 *
 *   rnic_perf [-d /dev/rnic0] [-a 10.0.0.2] [-p 18515] [-t write|read|send|atomic|all]
 *             [-s size] [-n iterations] [-q queue depth] [-M]
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

#define MAGIC 0x46524e52u
#define MSG 32u
#define DATA_OFFSET 64u /* the server's data area within its region */
#define CQ_ENTRIES 256u
#define SQ_ENTRIES 64u
#define RQ_ENTRIES 16u
#define MAX_DEPTH 32u
/* Local buffer layout */
#define L_RECV 0u        /* RQ_ENTRIES replies of up to 64 bytes */
#define L_CTRL 1024u     /* the request being sent */
#define L_ATOMIC 2048u   /* MAX_DEPTH FetchAdd originals */
#define L_DATA 4096u

enum op { OP_HELLO = 1, OP_CHECK_WRITE = 2, OP_FILL_READ = 3, OP_EXPECT_SENDS = 4, OP_CHECK_ATOMIC = 5, OP_BYE = 6 };

struct cqe {
	uint64_t wr_id;
	uint32_t len, idx, owner;
	uint8_t opcode, status;
};

static struct {
	int fd;
	uint8_t *buf;
	uint64_t addr;  /* how work requests name buf: its virtual address, or (-M) its device address */
	uint32_t stag_recv, stag_ctrl, stag_atomic, stag_data;
	uint8_t *cq, *sq, *rq;
	volatile uint32_t *cq_db, *qp_db;
	uint32_t cq_cons, sq_prod, sq_done, rq_prod;
	uint64_t remote_to, remote_len;
	uint32_t remote_stag;
	uint64_t span_max; /* bytes of the remote data area, local data area the same */
} g;

static int failed;
static struct cqe pending;    /* a reply that arrived while a run's completions were polled */
static int have_pending;

static void die(const char *what)
{
	printf("rnic_perf: FAIL %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The byte at data offset o of pattern seed (perf_server.h's perf_pattern). */
static uint8_t pattern(uint64_t seed, uint64_t o)
{
	return (uint8_t)((seed * 151u + o * 131u + (o >> 8) * 7u + (o >> 16)) & 0xffu);
}

static void *map(uint64_t off, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, g.fd, (off_t)off);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static uint32_t reg(uint32_t handle, uint64_t off, uint64_t len, uint32_t access)
{
	struct rnic_uapi_reg_mr m = { .handle = handle, .access = access, .offset = off, .length = len };

	if (ioctl(g.fd, RNIC_IOC_REG_MR, &m) != 0)
		die("RNIC_IOC_REG_MR");
	return m.stag;
}

/* A region of the process's own memory: pinned by the driver, reached through a page list. */
static uint32_t reg_user(uint64_t off, uint64_t len, uint32_t access, uint32_t *pages)
{
	struct rnic_uapi_reg_user_mr m = { .addr = g.addr + off, .length = len, .access = access };

	if (ioctl(g.fd, RNIC_IOC_REG_USER_MR, &m) != 0) {
		printf("rnic_perf: RNIC_IOC_REG_USER_MR: device status %u\n", m.status);
		die("RNIC_IOC_REG_USER_MR");
	}
	*pages += m.npages;
	return m.stag;
}

static void post_recv(void)
{
	uint32_t slot = g.rq_prod % RQ_ENTRIES;
	uint8_t *w = g.rq + slot * RNIC_RECV_WQE_SIZE;

	memset(w, 0, RNIC_RECV_WQE_SIZE);
	put_le(w + RNIC_RECV_WQE_WR_ID, slot, 8);
	put_le(w + RNIC_RECV_WQE_ADDR, g.addr + L_RECV + slot * 64u, 8);
	put_le(w + RNIC_RECV_WQE_LENGTH, 64, 4);
	put_le(w + RNIC_RECV_WQE_STAG, g.stag_recv, 4);
	g.rq_prod++;
	__atomic_thread_fence(__ATOMIC_RELEASE); /* the WQE before the doorbell */
	g.qp_db[RNIC_RQ_DOORBELL / 4] = g.rq_prod;
}

/* One send-queue work request; rings the doorbell. */
static void post(uint8_t opcode, uint64_t wr_id, uint64_t local, uint32_t len, uint32_t lstag, uint64_t remote_to,
		 uint32_t rstag, uint64_t operand)
{
	uint8_t *w;

	if (g.sq_prod - g.sq_done >= SQ_ENTRIES) {
		printf("rnic_perf: FAIL send queue overrun\n");
		exit(1);
	}
	w = g.sq + (g.sq_prod % SQ_ENTRIES) * RNIC_SEND_WQE_SIZE;
	memset(w, 0, RNIC_SEND_WQE_SIZE);
	w[RNIC_SEND_WQE_OPCODE] = opcode;
	w[RNIC_SEND_WQE_FLAGS] = RNIC_WR_FLAG_SIGNALED;
	put_le(w + RNIC_SEND_WQE_WR_ID, wr_id, 8);
	put_le(w + RNIC_SEND_WQE_LOCAL_ADDR, local, 8);
	put_le(w + RNIC_SEND_WQE_LENGTH, len, 4);
	put_le(w + RNIC_SEND_WQE_LOCAL_STAG, lstag, 4);
	put_le(w + RNIC_SEND_WQE_REMOTE_TO, remote_to, 8);
	put_le(w + RNIC_SEND_WQE_REMOTE_STAG, rstag, 4);
	put_le(w + RNIC_SEND_WQE_OPERAND, operand, 8);
	g.sq_prod++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	g.qp_db[RNIC_SQ_DOORBELL / 4] = g.sq_prod;
}

/* The next completion (spinning up to 60 s); exits on an error completion. */
static void poll1(struct cqe *e)
{
	uint64_t deadline = now_ns() + 60ull * 1000000000ull;

	for (;;) {
		const uint8_t *c = g.cq + (g.cq_cons % CQ_ENTRIES) * RNIC_CQE_SIZE;
		uint32_t want = (g.cq_cons / CQ_ENTRIES) % 2 == 0 ? 1 : 0;
		uint32_t owner = __atomic_load_n((const uint32_t *)(c + RNIC_CQE_OWNER), __ATOMIC_ACQUIRE);

		if ((owner >> 31) != want) {
			if (now_ns() > deadline) {
				printf("rnic_perf: FAIL no completion within 60 s\n");
				exit(1);
			}
			continue;
		}
		e->wr_id = get_le(c + RNIC_CQE_WR_ID, 8);
		e->len = (uint32_t)get_le(c + RNIC_CQE_BYTE_LEN, 4);
		e->idx = (uint32_t)get_le(c + RNIC_CQE_WQE_INDEX, 4);
		e->opcode = c[RNIC_CQE_OPCODE];
		e->status = c[RNIC_CQE_STATUS];
		e->owner = owner;
		g.cq_cons++;
		g.cq_db[RNIC_CQ_CONSUMER / 4] = g.cq_cons;
		if (e->status != RNIC_CQE_STATUS_SUCCESS || e->opcode == RNIC_CQE_OPCODE_QP_ERROR) {
			printf("rnic_perf: FAIL completion status %u, opcode %u\n", e->status, e->opcode);
			exit(1);
		}
		if (!(owner & RNIC_CQE_OWNER_RECEIVE))
			g.sq_done = e->idx + 1;
		return;
	}
}

/* Sends a request and waits for the server's reply (send completions consumed on the way). */
static void request(uint32_t op, uint32_t size, uint32_t count, uint64_t seed, uint32_t *status, uint64_t *a,
		    uint64_t *b, uint32_t *c)
{
	uint8_t *m = g.buf + L_CTRL;
	struct cqe e;

	memset(m, 0, MSG);
	put_le(m, MAGIC, 4);
	put_le(m + 4, op, 4);
	put_le(m + 8, size, 4);
	put_le(m + 12, count, 4);
	put_le(m + 16, seed, 8);
	post(RNIC_WR_SEND, ~0ull, g.addr + L_CTRL, MSG, g.stag_ctrl, 0, 0, 0);
	do
		poll1(&e);
	while (!(e.owner & RNIC_CQE_OWNER_RECEIVE));
	const uint8_t *r = g.buf + L_RECV + (uint32_t)e.wr_id * 64u;
	if (e.len != MSG || get_le(r, 4) != MAGIC) {
		printf("rnic_perf: FAIL a %u-byte reply that is no perf reply\n", e.len);
		exit(1);
	}
	*status = (uint32_t)get_le(r + 4, 4);
	*a = get_le(r + 8, 8);
	*b = get_le(r + 16, 8);
	*c = (uint32_t)get_le(r + 24, 4);
	post_recv();
}

static void row(const char *what, uint32_t size, uint32_t n, uint64_t ns, const char *check)
{
	double secs = ns / 1e9;

	printf(" %-8s %-10u %-12u %-20.2f %-15.4f %-12.2f %s\n", what, size, n,
	       secs > 0 ? (double)size * n / secs / 1e6 : 0.0, secs > 0 ? n / secs / 1e6 : 0.0, ns / 1e3 / n, check);
}

/* count operations of one kind with `depth` outstanding; returns the wall time. */
static uint64_t run_ops(uint8_t opcode, uint32_t size, uint32_t n, uint32_t depth, uint64_t span, uint64_t seed)
{
	uint32_t posted = 0, done = 0;
	uint64_t t0 = now_ns();
	struct cqe e;

	while (done < n) {
		while (posted < n && posted - done < depth) {
			uint64_t off = span ? (uint64_t)posted * size % span : 0;

			if (opcode == RNIC_WR_SEND) {
				/* Send i carries pattern(seed + i, j), staged in slot i % depth. */
				uint8_t *slot = g.buf + L_DATA + (posted % depth) * (uint64_t)size;

				for (uint32_t j = 0; j < size; j++)
					slot[j] = pattern(seed + posted, j);
				post(opcode, posted, g.addr + L_DATA + (posted % depth) * (uint64_t)size, size, g.stag_data,
				     0, 0, 0);
			} else if (opcode == RNIC_WR_ATOMIC_FETCH_ADD) {
				post(opcode, posted, g.addr + L_ATOMIC + (posted % depth) * 8u, 8, g.stag_atomic, g.remote_to,
				     g.remote_stag, 1);
			} else {
				post(opcode, posted, g.addr + L_DATA + off, size, g.stag_data,
				     g.remote_to + DATA_OFFSET + off, g.remote_stag, 0);
			}
			posted++;
		}
		poll1(&e);
		if (e.owner & RNIC_CQE_OWNER_RECEIVE) {
			/* The server's reply after the last Send can overtake that Send's completion. */
			if (opcode != RNIC_WR_SEND || have_pending) {
				printf("rnic_perf: FAIL an unexpected receive during the run\n");
				exit(1);
			}
			pending = e;
			have_pending = 1;
			continue;
		}
		if (opcode == RNIC_WR_ATOMIC_FETCH_ADD) {
			/* In order on one QP: completion k returns the counter's value k. */
			uint64_t orig = get_le(g.buf + L_ATOMIC + (done % depth) * 8u, 8);

			if (orig != done && !failed) {
				printf("rnic_perf: FAIL FetchAdd %u returned %llu\n", done, (unsigned long long)orig);
				failed = 1;
			}
		}
		done++;
	}
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/rnic0", *server = "10.0.0.2", *test = "all";
	unsigned int port = 18515, size = 4096, n = 1000, depth = 16;
	int opt, driver_memory = 0;

	while ((opt = getopt(argc, argv, "d:a:p:t:s:n:q:M")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'a': server = optarg; break;
		case 'p': port = (unsigned int)atoi(optarg); break;
		case 't': test = optarg; break;
		case 's': size = (unsigned int)atoi(optarg); break;
		case 'n': n = (unsigned int)atoi(optarg); break;
		case 'q': depth = (unsigned int)atoi(optarg); break;
		case 'M': driver_memory = 1; break;
		default:
			fprintf(stderr, "usage: rnic_perf [-d dev] [-a server] [-p port] [-t write|read|send|atomic|all] "
					"[-s size] [-n iterations] [-q depth] [-M]\n");
			return 2;
		}
	}
	struct in_addr ip;
	if (size == 0 || size > (1u << 20) || n == 0 || depth == 0 || depth > MAX_DEPTH ||
	    inet_pton(AF_INET, server, &ip) != 1) {
		fprintf(stderr, "rnic_perf: bad -s (1..1 MiB), -n (> 0), -q (1..%u) or -a\n", MAX_DEPTH);
		return 2;
	}
	g.fd = open(dev, O_RDWR);
	if (g.fd < 0)
		die(dev);
	const uint64_t local = L_DATA + (1u << 20);
	if (driver_memory) {
		struct rnic_uapi_alloc a = { .size = local };
		if (ioctl(g.fd, RNIC_IOC_ALLOC, &a) != 0)
			die("RNIC_IOC_ALLOC");
		g.buf = map(a.mmap_offset, (size_t)a.size);
		g.addr = a.dma_addr;
		g.stag_recv = reg(a.handle, L_RECV, 1024, RNIC_MR_LOCAL_WRITE);
		g.stag_ctrl = reg(a.handle, L_CTRL, MSG, 0);
		g.stag_atomic = reg(a.handle, L_ATOMIC, MAX_DEPTH * 8u, RNIC_MR_LOCAL_WRITE);
		g.stag_data = reg(a.handle, L_DATA, 1u << 20, RNIC_MR_LOCAL_WRITE);
		printf("rnic_perf: buffer of %llu bytes allocated by the driver (DMA API)\n", (unsigned long long)local);
	} else {
		uint32_t pages = 0;
		g.buf = mmap(NULL, local, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (g.buf == MAP_FAILED)
			die("mmap of anonymous memory");
		memset(g.buf, 0, local);
		g.addr = (uint64_t)(uintptr_t)g.buf;
		g.stag_recv = reg_user(L_RECV, 1024, RNIC_MR_LOCAL_WRITE, &pages);
		g.stag_ctrl = reg_user(L_CTRL, MSG, 0, &pages);
		g.stag_atomic = reg_user(L_ATOMIC, MAX_DEPTH * 8u, RNIC_MR_LOCAL_WRITE, &pages);
		g.stag_data = reg_user(L_DATA, 1u << 20, RNIC_MR_LOCAL_WRITE, &pages);
		printf("rnic_perf: buffer of %llu bytes in user memory at %p, %u pages pinned\n", (unsigned long long)local,
		       (void *)g.buf, pages);
	}
	struct rnic_uapi_create_cq cq = { .entries = CQ_ENTRIES };
	if (ioctl(g.fd, RNIC_IOC_CREATE_CQ, &cq) != 0)
		die("RNIC_IOC_CREATE_CQ");
	g.cq = map(cq.ring_mmap, CQ_ENTRIES * RNIC_CQE_SIZE);
	g.cq_db = (volatile uint32_t *)((uint8_t *)map(cq.db_mmap, 4096) + cq.db_offset);
	struct rnic_uapi_create_qp qp = { .cqn = cq.cqn, .sq_entries = SQ_ENTRIES, .rq_entries = RQ_ENTRIES };
	if (ioctl(g.fd, RNIC_IOC_CREATE_QP, &qp) != 0)
		die("RNIC_IOC_CREATE_QP");
	g.sq = map(qp.sq_mmap, SQ_ENTRIES * RNIC_SEND_WQE_SIZE);
	g.rq = map(qp.rq_mmap, RQ_ENTRIES * RNIC_RECV_WQE_SIZE);
	g.qp_db = (volatile uint32_t *)((uint8_t *)map(qp.db_mmap, 4096) + qp.db_offset);
	for (unsigned int i = 0; i < RQ_ENTRIES; i++)
		post_recv();
	struct rnic_uapi_connect cn = { .qpn = qp.qpn, .ipv4 = ntohl(ip.s_addr), .port = (uint16_t)port,
					.local_port = 40002, .ird = 16, .ord = 16 };
	if (ioctl(g.fd, RNIC_IOC_CONNECT, &cn) != 0) {
		printf("rnic_perf: connect: device status %u\n", cn.status);
		die("RNIC_IOC_CONNECT");
	}
	uint32_t st, c;
	uint64_t ra, rb;
	request(OP_HELLO, 0, 0, 0, &st, &ra, &rb, &c);
	g.remote_to = ra;
	g.remote_len = rb;
	g.remote_stag = c;
	const uint64_t data_len = g.remote_len - DATA_OFFSET < (1u << 20) ? g.remote_len - DATA_OFFSET : (1u << 20);
	const uint64_t span = data_len / size * size;
	if (span == 0) {
		printf("rnic_perf: FAIL size %u is larger than the server's data area (%llu bytes)\n", size,
		       (unsigned long long)data_len);
		return 1;
	}
	const uint64_t area = (uint64_t)size * n < span ? (uint64_t)size * n : span;
	printf("rnic_perf: QP %u connected to %s:%u; server region STag %#x, %llu bytes; size %u, %u iterations, "
	       "queue depth %u\n", qp.qpn, server, port, g.remote_stag, (unsigned long long)g.remote_len, size, n, depth);
	printf("---------------------------------------------------------------------------------------------\n");
	printf(" %-8s %-10s %-12s %-20s %-15s %-12s %s\n", "op", "#bytes", "#iterations", "BW average[MB/sec]",
	       "MsgRate[Mpps]", "t_avg[usec]", "check");
	int all = strcmp(test, "all") == 0;
	uint64_t seed = 1;

	if (all || strcmp(test, "write") == 0) {
		for (uint64_t o = 0; o < span; o++)
			g.buf[L_DATA + o] = pattern(seed, o);
		uint64_t ns = run_ops(RNIC_WR_RDMA_WRITE, size, n, depth, span, seed);
		request(OP_CHECK_WRITE, size, n, seed, &st, &ra, &rb, &c);
		char check[96];
		snprintf(check, sizeof(check), "server: %llu bytes checked, %llu differ", (unsigned long long)ra,
			 (unsigned long long)rb);
		row("write", size, n, ns, check);
		if (st != 0 || ra != area || rb != 0)
			failed = 1;
		seed++;
	}
	if (all || strcmp(test, "read") == 0) {
		request(OP_FILL_READ, size, n, seed, &st, &ra, &rb, &c);
		memset(g.buf + L_DATA, 0, span);
		uint64_t ns = run_ops(RNIC_WR_RDMA_READ, size, n, depth, span, seed), bad = 0;
		for (uint64_t o = 0; o < area; o++)
			bad += g.buf[L_DATA + o] != pattern(seed, o);
		char check[96];
		snprintf(check, sizeof(check), "client: %llu bytes checked, %llu differ", (unsigned long long)area,
			 (unsigned long long)bad);
		row("read", size, n, ns, check);
		if (st != 0 || bad != 0)
			failed = 1;
		seed++;
	}
	if ((all || strcmp(test, "send") == 0) && size <= 4096) {
		request(OP_EXPECT_SENDS, size, n, seed, &st, &ra, &rb, &c);
		if (st != 0)
			failed = 1;
		/* At most 16 Sends in flight: the server keeps more receives than that posted. */
		uint64_t ns = run_ops(RNIC_WR_SEND, size, n, depth < 16 ? depth : 16, 0, seed);
		struct cqe e;
		if (have_pending) {
			e = pending;
			have_pending = 0;
		} else {
			do
				poll1(&e);
			while (!(e.owner & RNIC_CQE_OWNER_RECEIVE));
		}
		const uint8_t *r = g.buf + L_RECV + (uint32_t)e.wr_id * 64u;
		ra = get_le(r + 8, 8);
		rb = get_le(r + 16, 8);
		st = (uint32_t)get_le(r + 4, 4);
		post_recv();
		char check[96];
		snprintf(check, sizeof(check), "server: %llu bytes checked, %llu differ", (unsigned long long)ra,
			 (unsigned long long)rb);
		row("send", size, n, ns, check);
		if (st != 0 || ra != (uint64_t)size * n || rb != 0)
			failed = 1;
		seed++;
	}
	if (all || strcmp(test, "atomic") == 0) {
		uint64_t ns = run_ops(RNIC_WR_ATOMIC_FETCH_ADD, 8, n, depth, 0, 0);
		request(OP_CHECK_ATOMIC, 8, n, 0, &st, &ra, &rb, &c);
		char check[96];
		snprintf(check, sizeof(check), "client: originals 0..%u; server: counter %llu", n - 1,
			 (unsigned long long)ra);
		row("fetchadd", 8, n, ns, check);
		if (st != 0 || ra != n)
			failed = 1;
	}
	printf("---------------------------------------------------------------------------------------------\n");
	request(OP_BYE, 0, 0, 0, &st, &ra, &rb, &c);
	struct rnic_uapi_destroy_qp dq = { .qpn = qp.qpn };
	if (ioctl(g.fd, RNIC_IOC_DESTROY_QP, &dq) != 0)
		die("RNIC_IOC_DESTROY_QP");
	if (!driver_memory) {
		/* The data region explicitly (its pages are unpinned now); close() releases the other three. */
		struct rnic_uapi_dereg_mr dm = { .stag = g.stag_data };
		if (ioctl(g.fd, RNIC_IOC_DEREG_MR, &dm) != 0)
			die("RNIC_IOC_DEREG_MR");
		printf("rnic_perf: data region %#x deregistered, its pages unpinned\n", g.stag_data);
	}
	close(g.fd);
	printf("rnic_perf: %s\n", failed ? "FAIL (see the rows)" : "PASS");
	return failed ? 1 : 0;
}
