// rping (workload.type = rping): librdmacm's rping example (rdma-core librdmacm/examples/rping.c)
// on the driver's verbs, speaking its exchange byte for byte so that either side can be a real
// `rping` (a Linux soft-iWARP guest behind the socket bridge, tools/siw-peer) or this program.
//
// What rping exchanges (facts read from rping.c):
//  - Every Send carries a 16-byte `struct rping_rdma_info`: buf (u64), rkey (u32), size (u32), all
//    big-endian (htobe64/htobe32). buf is the tagged offset the peer uses (rping's virtual address).
//  - Each side keeps one 16-byte receive posted and re-posts it as soon as a receive completes; a
//    receive of any other length is "bogus data" and ends the run.
//  - Client, per ping i (0-based): fills its start buffer with "rdma-ping-<i>: " followed by the
//    letters 'A'..'z' (65..122, wrapping) starting at 65 + i mod 58, the last byte NUL; Sends
//    {start buffer, its rkey, size}; waits for the server's go-ahead Send; Sends {rdma buffer, its
//    rkey, size}; waits for the second go-ahead; compares the rdma buffer with the start buffer
//    (memcmp over size bytes when validating).
//  - Server, per ping: on the first advertisement issues an RDMA Read of `size` bytes of the
//    client's start buffer into its rdma buffer; when it completes Sends a go-ahead (its send
//    buffer, never filled: 16 zero bytes); on the second advertisement RDMA Writes strlen + 1 bytes
//    of what it read into the client's rdma buffer; when that completes Sends the go-ahead again.
//    It loops until the client disconnects. Send completions move neither state machine.
//  - Both ask rdma_cm for responder_resources = initiator_depth = 1 (IRD = ORD = 1) and carry no
//    private data; with MPA revision 2 the IRD/ORD word is the only private data.
// Host a runs the client against host b's server when both are simulated; with a real peer
// (peer.kind = socket) host a runs `role`. The server also checks what it read against the pattern
// ping i must have (validate), so both sides judge the data.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "oob.h"
#include "workloads/workload.h"

namespace rnic::platform {

struct rping_config {
    bool server_role = false;   // with a real peer: host a is the rping server (else the client)
    bool real_peer = false;     // host b is behind the socket bridge: no out-of-band hand-shake
    std::uint32_t count = 20;   // pings (the server: pings it expects before the client leaves)
    std::uint32_t size = 3000;  // ping data size (rping -S), >= 26 like rping's RPING_MIN_BUFSIZE
    std::uint16_t port = 7174;  // rping's default port
    bool validate = true;
    std::uint64_t timeout_ps = 30'000'000'000'000ULL;  // each step (accept, connect, completion)
    // Client: time between connect() returning and the first Send. Real rping learns of the
    // connection through rdma_cm's event channel (a user-space wake-up) before it posts.
    std::uint64_t start_delay_ps = 0;
    // Client: connect attempts (a refused or timed-out connect is tried again after
    // retry_interval, on a fresh QP) — for a peer that is still booting; rping itself tries once.
    std::uint32_t connect_attempts = 1;
    std::uint64_t retry_interval_ps = 1'000'000'000'000ULL;
    // Client: private data of its MPA Request (rdma_connect's; real rping sends none).
    std::string private_data;
};

// The 16-byte advertisement, as rping lays it out (big-endian).
struct rping_info {
    std::uint64_t buf = 0;
    std::uint32_t rkey = 0;
    std::uint32_t size = 0;
};
void rping_encode_info(const rping_info& info, std::uint8_t out[16]);
rping_info rping_decode_info(const std::uint8_t in[16]);
// The bytes rping's client puts in its start buffer for ping `ping` (0-based), `size` bytes.
std::string rping_ping_data(std::uint32_t ping, std::uint32_t size);

class rping : public host_workload {
public:
    rping(const rping_config& cfg, oob_channel& oob, std::function<void()> on_done);

    void client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) override;
    void server(drv::host_bus& bus, const drv::station_config& station) override;
    const workload_result& result() const override { return result_; }

private:
    struct side;
    enum class got { ok, disconnected, failed };
    bool setup(side& s, const drv::station_config& station, const char* who);
    // Waits for the next receive / RDMA Read / RDMA Write completion (`want`), re-posting the
    // receive like rping's CQ handler; Send completions are consumed on the way.
    got next(side& s, drv::wc_opcode want, const char* step);
    void fail(side& s, const std::string& what);
    void finish_side();

    rping_config cfg_;
    oob_channel& oob_;
    std::function<void()> on_done_;
    workload_result result_;
    int sides_done_ = 0;
};

}  // namespace rnic::platform
