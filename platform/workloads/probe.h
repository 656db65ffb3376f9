// Protocol probes (workload.type = probe): short, scripted conversations that exercise one rule of
// RDMAP/DDP (RFC 5040, 5041) or RFC 7306 each and judge the outcome on both hosts, the way a driver
// developer or a conformance suite would. Two kinds:
//  - error probes: the client (host a) commits one protocol error, by an ordinary work request or
//    by a raw ULPDU (rnic.rdma.raw_ulpdu_wqes test mode). The server's RNIC must answer with the
//    Terminate the RFCs require, both QPs must end in Error with an error completion that names the
//    Terminate, and the server's memory must be left unchanged.
//  - feature probes: RDMA Write with Immediate ordering, zero-based tagged offsets, masked atomics,
//    Send with Invalidate, local invalidate, QP state transitions (graceful close, destroy).
// Every check is one result row (op = the check, integrity = its verdict).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oob.h"
#include "workloads/workload.h"

namespace rnic::platform {

struct probe_config {
    std::string probe = "write_imm";
    std::uint16_t port = 18515;
    std::uint64_t poll_interval_ps = 50000;
    std::uint64_t seed = 1;
    std::uint64_t mpa_timeout_ps = 10'000'000'000ULL;  // rnic.mpa.timeout (mpa_timeout checks it)
    std::string framing = "mpa";                       // rnic.framing (the vi_* probes need vitcp)
    std::string vi_level = "reliable_delivery";        // rnic.vitcp.reliability (what vi_* expect)
    bool vi_crc = false;                               // rnic.vitcp.crc (the raw VI segments' trailer)
    // link.a_to_b corrupts frames and fixes their checksums: only then can vi_crc's Sends arrive
    // with a CRC error for the receiver to catch.
    bool client_link_corrupts_past_checksum = false;
    std::uint16_t vi_read_window = 16;     // rnic.vitcp.rdma_read_window (vi_read_window)
    bool raw_wqes = false;                 // rnic.rdma.raw_ulpdu_wqes (the probes that send raw bytes)
    bool vi_raw_connect_requests = false;  // rnic.vitcp.raw_connect_requests (vi_ce_*)
    // send_regions: how many connections' send regions each NIC's buffer memory holds (its capacity,
    // hosts.N.buffer_capacity or rnic.buffer.capacity, over rnic.tcp.send_buffer), what they leave
    // to receive into, the MSS, and whether the regions are reserved at all (rnic.buffer.send_regions).
    std::uint64_t client_send_regions = 0, server_send_regions = 0;
    std::uint64_t client_receive_room = 0, server_receive_room = 0, mss = 1460;
    bool reserved_send_regions = true;
};

// The Terminate an error probe must provoke (RFC 5040 §4.8 Figure 9, RFC 5041 §7.2, RFC 7306 §8).
struct probe_expectation {
    const char* name;
    bool error;          // an error probe (a Terminate is expected)
    std::uint8_t layer;  // 0 RDMAP, 1 DDP, 2 LLP
    std::uint8_t etype;
    std::uint8_t code;
    const char* rule;  // where the rule comes from
};
const std::vector<probe_expectation>& probe_catalogue();
const probe_expectation* find_probe(const std::string& name);

class probe : public host_workload {
public:
    probe(const probe_config& cfg, oob_channel& oob, std::function<void()> on_done);

    void client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) override;
    void server(drv::host_bus& bus, const drv::station_config& station) override;
    const workload_result& result() const override { return result_; }

private:
    struct side;  // one host's context, buffers and regions
    void check(const std::string& what, bool ok, const std::string& detail = "");
    void fail(const std::string& what);
    // Polls `cq` until `pred` accepts a completion or `budget_ps` of simulated time passes.
    bool poll_for(side& s, drv::completion_queue* cq, const std::function<bool(const drv::work_completion&)>& pred,
                  std::uint64_t budget_ps, drv::work_completion* out);
    void client_error_probe(side& s, const remote_buffer& a);
    void server_error_probe(side& s);
    void client_write_imm(side& s, const remote_buffer& a);
    void server_write_imm(side& s);
    void client_zero_based(side& s);
    void client_masked_atomics(side& s, const remote_buffer& a);
    void server_masked_atomics(side& s);
    void client_qp_states(side& s, const remote_buffer& a);
    void client_response_order(side& s, const remote_buffer& a);
    void client_abort(side& s, const remote_buffer& a);
    void server_qp_states(side& s);
    void client_send_invalidate(side& s, const remote_buffer& a);
    void server_send_invalidate(side& s);
    std::vector<std::uint8_t> reject_reason() const;
    void server_reject(side& s);
    void client_reject(side& s, std::uint32_t server_ip, const remote_buffer& a);
    // unlisten: accept one peer, close the port with a second in the backlog, refuse a third.
    void server_unlisten(side& s);
    void client_unlisten(side& s, std::uint32_t server_ip, const remote_buffer& a);
    void client_verbs_misuse(side& s, const remote_buffer& a);
    // send_regions (probe_connection.cpp): connections until a NIC's buffer memory has no send region
    // left; the refusal by name on whichever side runs out, then recovery once one is freed.
    std::string send_regions_unusable() const;  // why the scenario cannot run it ("" if it can)
    void server_send_regions(side& s);
    void client_send_regions(side& s, std::uint32_t server_ip, const remote_buffer& a);
    // resource_limits (probe_resources.cpp): every table and ring filled, refused by name, recovered.
    void client_resource_limits(side& s, const remote_buffer& a);
    // cq_overrun (probe_resources.cpp): a second connection whose CQ overflows (RFC 5040 §6.2 local
    // catastrophic; verbs' CQ error event), beside the first, which carries on.
    void server_cq_overrun(side& s);
    void client_cq_overrun(side& s, std::uint32_t server_ip, const remote_buffer& a);
    // The client's first, good RDMA Write of kBaseline pattern bytes to A + 0 (wr_id 1).
    drv::send_wr baseline_write(side& s, const remote_buffer& a);
    // That Write again on the client's first QP, as `wr_id`: whether it completes with success
    // within the probe's budget (the first connection outliving what a probe did beside it).
    bool baseline_write_completes(side& s, const remote_buffer& a, std::uint64_t wr_id);
    // peer_to_peer and responder_waits: the server has the first message to send.
    void server_sends_first(side& s);
    void client_server_sends_first(side& s, std::uint32_t server_ip, const remote_buffer& a);
    // page_list (probe_page_list.cpp): regions over shuffled, non-contiguous pages.
    void server_page_list(drv::host_bus& bus, const drv::station_config& station);
    void client_page_list(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip);
    // device_reset (probe_reset.cpp): CTRL.RESET with objects open, then new objects from 0.
    void server_device_reset(drv::host_bus& bus, const drv::station_config& station);
    void client_device_reset(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip);
    // vi_errors, vi_crc (probe_vitcp.cpp): VI/TCP reliability levels against error classes.
    std::uint32_t vi_receives() const;
    drv::recv_wr vi_receive(side& s, std::uint32_t i) const;
    void client_vi(side& s, const remote_buffer& a);
    void server_vi(side& s, const std::vector<std::uint8_t>& before);
    void bus_spend_and_check_state(side& s, regmap::qp_state want, const std::string& what);
    // vi_crc at Reliable Reception, once both sides are done: the client's descriptor in error is
    // the first Send the server did not receive.
    void vi_cross_check();
    // The probes whose client builds the seeds' segments itself (probe_raw_frames.cpp): vi_ce_*,
    // vi_transmit_error, vi_read_window, rdmatcp_*. They connect and accept on their own.
    bool raw_frames_probe() const;
    bool raw_frames_enabled() const;            // the test mode the probe's raw bytes need is on
    std::uint32_t raw_frames_receives() const;  // receives the server posts for them
    // Posts one raw_stream work request per element (one TCP segment each), wr_ids from first_wr_id.
    bool post_raw(side& s, const std::vector<std::vector<std::uint8_t>>& segments, std::uint64_t first_wr_id);
    void client_raw_frames(side& s, std::uint32_t server_ip, const remote_buffer& a);
    void client_vi_ce(side& s, std::uint32_t server_ip, const remote_buffer& a);
    void server_raw_frames(side& s, const std::vector<std::uint8_t>& before);
    // The error probes' client end: the peer's Terminate in the QP error completion, as the
    // catalogue expects; the QP in Error; `after` refused.
    void expect_peer_terminate(side& s, drv::send_wr after);
    // reg_mr_pages commands the device must refuse (a page list of the client's, in `arena`).
    void device_refusals(drv::context& ctx, std::uint32_t pd, std::uint64_t arena);

    probe_config cfg_;
    const probe_expectation* expect_ = nullptr;
    std::int64_t vi_client_error_at_ = -1;  // vi_* at Reliable Reception: the client's descriptor in error
    std::uint64_t vi_server_good_ = 0;      // vi_crc: the Sends the server received before the break
    oob_channel& oob_;
    std::function<void()> on_done_;
    workload_result result_;
};

}  // namespace rnic::platform
