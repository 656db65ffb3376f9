// A hostile peer (workload.type = hostile). Host b attacks: for every episode it opens a fresh
// connection to host a (MPA negotiated correctly), then sends raw ULPDUs (rnic.rdma.raw_ulpdu_wqes,
// framed and CRC'd by its NIC) from hostile::generator: a few good ones and then one that breaks a
// rule of RFC 5040/5041/7306 (mode grammar), or a recorded good conversation with one byte damaged
// (mode mutate). Host a runs a plain server with canaries: guard areas around every region,
// regions without remote rights, of another protection domain, deregistered or invalidated, and
// a shadow copy of all its application memory; beside the hostile QP a well-behaved QP (host b's
// other connection) writes and reads back its own region every episode.
// Invariants, checked after the run and reported under `hostile` in the results:
//  - bytes_outside_grants == 0: every byte of host a's application memory equals the shadow,
//    except the regions and posted receive buffers the peer was allowed to write (and the
//    well-behaved QP's region equals what that QP wrote);
//  - every violation is answered by host a's RNIC with the Terminate (layer, type, code) the RFCs
//    require, the QP ends in Error; counts per class;
//  - the well-behaved QP completes all its operations, and what it reads back is what it wrote;
//  - nothing hangs (a missing answer is counted after workload.hostile.answer_timeout).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "oob.h"
#include "workloads/hostile_gen.h"
#include "workloads/ring_guard.h"
#include "workloads/workload.h"

namespace rnic::platform {

struct hostile_config {
    std::string mode = "grammar";  // grammar | mutate
    std::uint64_t episodes = 200;  // connections the peer opens, one violation (or mutation) each
    std::uint32_t max_good = 6;    // good ULPDUs before each violation (uniform 0..max_good)
    std::uint32_t max_payload = 1024;
    std::uint64_t answer_timeout_ps = 2'000'000'000;  // 2 ms
    std::uint64_t seed = 1;
    std::uint16_t port = 18515;
    std::uint64_t poll_interval_ps = 50000;
    std::uint64_t target_send_buffer = 256 * 1024;  // rnic.tcp.send_buffer: Read Responses it absorbs
    // grammar mode: the peer frames its own FPDUs and cuts the TCP stream (peer), or has its NIC
    // frame each ULPDU into a segment of its own (nic). Peer framing needs MPA without markers.
    std::string stream = "peer";
    bool crc = true;              // rnic.mpa.crc
    std::uint32_t mulpdu = 1454;  // the MULPDU the link's MTU gives (RFC 5044 §4.5)
};

class hostile : public host_workload {
public:
    using peek_fn = std::function<bool(std::uint64_t addr, void* dst, std::size_t len)>;
    // Installs an observer of every DMA write host a's device makes into host a's memory.
    using observe_fn = std::function<void(std::function<void(std::uint64_t addr, std::uint64_t len)>)>;
    hostile(const hostile_config& cfg, oob_channel& oob, peek_fn target_peek, observe_fn target_observe,
            std::function<void()> on_done);

    // Host a (the client slot): the target, a plain server with canaries.
    void client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t peer_ip) override;
    // Host b (the server slot): the hostile peer.
    void server(drv::host_bus& bus, const drv::station_config& station) override;
    const workload_result& result() const override { return result_; }
    // The `hostile` object of the results.
    boost::json::object report() const;

private:
    struct episode {
        std::string cls;  // the violation's class ("mutated" in mutate mode)
        attack::expectation expect;
        std::string outcome;  // what host a's RNIC did: "terminate rdmap/1/0x00", "peer closed", ...
        bool as_required = false;
    };
    struct class_count {
        std::uint64_t sent = 0, as_required = 0, wrong = 0;
    };
    bool poll_until(drv::context& ctx, drv::host_bus& bus, drv::completion_queue* cq,
                    const std::function<bool(const drv::work_completion&)>& pred, std::uint64_t budget_ps,
                    drv::work_completion* out);
    void judge(std::uint64_t index, const drv::work_completion* err);  // episodes_[index]
    void check_memory();

    hostile_config cfg_;
    oob_channel& oob_;
    peek_fn peek_;
    observe_fn observe_;
    ring_guard rings_;  // host a's driver rings: what its device writes there
    std::function<void()> on_done_;
    workload_result result_;

    // What host a advertised (host b reads it after "setup").
    attack::target target_;
    std::uint32_t target_ip_ = 0;
    // Host a's application memory and the parts the peer may write.
    std::uint64_t arena_ = 0, arena_len_ = 0;
    std::vector<std::uint8_t> shadow_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> grants_;  // [addr, addr + len)
    std::uint64_t good_region_ = 0, good_len_ = 0;
    std::vector<std::uint8_t> good_image_;  // what the well-behaved QP wrote there
    std::uint32_t good_stag_ = 0;

    std::vector<episode> episodes_;
    std::map<std::string, class_count> classes_;
    std::map<std::string, std::uint64_t> outcomes_;
    std::vector<std::string> findings_;
    std::uint64_t fpdus_sent_ = 0, good_fpdus_ = 0, violations_ = 0, unanswered_ = 0, wrong_ = 0;
    std::uint64_t bytes_outside_grants_ = 0, shadow_bytes_ = 0;
    std::uint64_t good_ops_ = 0, good_bytes_checked_ = 0, good_errors_ = 0;
    // Peer framing: how the streams were cut (stream_plan), and ULPDUs over the MULPDU sent.
    std::map<std::string, std::uint64_t> cuts_;
    std::uint64_t segments_ = 0, fpdus_split_ = 0, segments_coalesced_ = 0, over_mulpdu_ = 0;
    bool checked_ = false;
};

}  // namespace rnic::platform
