// NIC firmware: runs on the control processor against the HAL. Serves the driver's command ring
// (CQ/QP/MR management, connect/accept), runs connection management (TCP open through the TCP
// engine, the MPA Request/Reply exchange of RFC 5044 §7 and RFC 6581, the switch to full operation)
// and moves QPs to RTS. Every handler charges its cost in control-processor cycles.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "cp/cp_program.h"
#include "cp/firmware_hal.h"
#include "firmware/mpa_negotiation.h"
#include "proto/mpa.h"
#include "rnic/regmap.h"

namespace rnic::fw {

struct costs {
    std::uint64_t command = 1500;    // decode + execute a simple command
    std::uint64_t event = 400;       // handle a TCP or framing event
    std::uint64_t mpa_frame = 2500;  // build or parse an MPA Request/Reply
    std::uint64_t page_entry = 4;    // check and store one page-list entry (reg_mr_pages)
};

// The control processor's program (cp/cp_program.h); the platform makes it and gives it to the device.
class firmware : public program {
public:
    firmware(hal& h, const costs& c);
    // The firmware's main loop; never returns.
    [[noreturn]] void run() override;

    std::uint64_t commands_executed() const override { return commands_; }
    std::uint64_t connections_established() const { return established_; }
    std::uint64_t connections_failed() const { return failed_; }
    std::uint64_t connections_rejected() const { return rejected_; }  // MPA Requests this side refused
    std::uint64_t command_ring_overruns() const { return ring_overruns_; }
    std::uint64_t commands_overwritten() const { return commands_overwritten_; }
    // Whether a CTRL.RESET has anything of the firmware's to reset (a device fresh from power-on
    // has not: its reset changes nothing, and takes no time).
    bool has_state() const override {
        return consumer_ != 0 || !by_conn_.empty() || !accepts_.empty() || !backlog_.empty();
    }
    // commands_executed, connections_established, connections_failed, connections_rejected.
    std::vector<std::pair<const char*, std::uint64_t>> counters() const override;

private:
    enum class role { initiator, responder };
    struct pending_connection {
        role r = role::initiator;
        std::uint32_t qpn = 0;
        std::uint32_t cmd_slot = 0;  // command ring index to complete
        std::uint64_t deadline_ps = 0;
        bool request_sent = false;       // initiator: our Request is out
        std::uint16_t port = 0;          // responder: listening port
        std::uint16_t ird = 0, ord = 0;  // the driver's wish (0: policy); without revision 2 used as is
        bool peer_to_peer = false;       // initiator: the driver asked for an explicit RTR
        proto::mpa::request_reply sent;  // initiator: the Request we sent
        // Initiator: where a rejecting Reply's private data goes (connect p4/p5; 0: nowhere).
        std::uint64_t reject_buf = 0;
        std::uint32_t reject_buf_len = 0;
        // Responder: refuse the Request (reject command) with this private data.
        bool reject = false;
        // The private data this side sends: the responder's Reply (reject, or accept with p4/p5),
        // the initiator's Request (connect with kConnectPrivateData).
        std::vector<std::uint8_t> private_data;
        // Initiator, connect with kConnectPrivateData: the Reply's private data goes to reject_buf
        // whether it accepts or rejects, and its length into the command's p5.
        bool reply_private_data_back = false;
        // VI/TCP (firmware_vitcp.cpp): the active side's CE state machine (§4.2), kept from the
        // ConnectRequest to the answer; the ports the discriminators are made of.
        std::shared_ptr<proto::vitcp_ce::active> vi_active;
        std::uint16_t remote_port = 0;
        // VI/TCP test mode (mpa_policy::vitcp_raw_connect_requests): private_data is the whole
        // ConnectRequest the driver built, sent as it is.
        bool raw_request = false;
    };
    // The negotiation rules' view of this connection: the MPA policy with the driver's wishes.
    negotiation_policy policy_for(const pending_connection& pc) const;

    void on_command_doorbell();
    void execute(std::uint32_t slot, const std::uint8_t* cmd);
    void complete(std::uint32_t slot, regmap::cmd_status status, std::uint32_t result);
    // reg_mr_pages: checks the parameters, reads the page list by DMA and checks its pages.
    void reg_mr_pages(std::uint32_t slot, const std::uint64_t* p);
    void on_established(std::uint32_t conn, std::uint16_t port);
    void on_startup_bytes(std::uint32_t conn);
    void on_connection_lost(std::uint32_t conn, const char* why);
    void on_refused(std::uint16_t port);
    // Binds an established passive connection to the accept `pc` and starts its negotiation.
    void claim(std::uint32_t conn, pending_connection pc);
    void on_timer();
    void on_reset();
    void initiator_got_reply(std::uint32_t conn, pending_connection& pc);
    void responder_got_request(std::uint32_t conn, pending_connection& pc);
    // VI/TCP connection establishment (seed 003 §4, firmware_vitcp.cpp) in place of the MPA
    // exchange: the ConnectRequest once TCP is up, the answer or the request in the start-up bytes.
    void vitcp_send_request(std::uint32_t conn, pending_connection& pc, std::uint16_t local_port);
    void vitcp_startup_bytes(std::uint32_t conn, pending_connection& pc);
    void vitcp_active_answer(std::uint32_t conn, pending_connection& pc);
    void vitcp_passive_request(std::uint32_t conn, pending_connection& pc);
    void vitcp_start_stream(std::uint32_t conn, pending_connection& pc, const proto::vitcp_ce::agreement& agreed,
                            std::size_t consumed);
    // `result` replaces the default result (the connection on ok, else 0) when given.
    // Gives up a connection the firmware holds (no QP took it): FIN, and the TCP engine frees it
    // once closed (toe_ctl_if::tcp_release).
    void abandon(std::uint32_t conn);
    void finish(std::uint32_t conn, pending_connection& pc, regmap::cmd_status status,
                std::optional<std::uint32_t> result = std::nullopt);
    // accept and reject: wait for (or take from the backlog) the next connection on pc.port.
    void wait_for_peer(pending_connection pc);
    // accept and reject after their checks: the Reply's private data from p4/p5 (bad_parameter if
    // unreadable), then the peer p2 names (take_named_peer) or the next one (wait_for_peer).
    void answer_peer(pending_connection pc, const std::uint64_t* p);
    // accept and reject with a handle from next_peer (firmware_passive.cpp): the named backlog
    // peer, or bad_handle when it is no longer waiting.
    void take_named_peer(std::uint32_t handle, pending_connection pc);
    // unlisten (firmware_passive.cpp): closes the port, resets its backlog peers, ends its waiting accepts.
    void unlisten(std::uint32_t slot, const std::uint64_t* p);
    // next_peer: the oldest waiting peer not reported before whose MPA Request is in.
    void next_peer(std::uint32_t slot, const std::uint64_t* p);
    // The private data of an MPA Reply back to a connect (its reject buffer, and with
    // kConnectPrivateData its length into the command's p5). Returns the bytes written.
    std::uint32_t reply_private_data_to_host(std::uint32_t conn, const pending_connection& pc,
                                             const proto::mpa::request_reply& reply);
    // The same for `len` bytes of an answer (VI/TCP: the whole ConnectReject or ConnectNoMatch).
    std::uint32_t answer_to_host(std::uint32_t conn, const pending_connection& pc, const std::uint8_t* data,
                                 std::size_t len);
    void arm_next_timer();
    std::uint64_t ring_addr(std::uint32_t slot) const;

    hal& hal_;
    costs costs_;
    std::uint64_t ring_base_ = 0;
    std::uint32_t ring_entries_ = 0;
    std::uint32_t consumer_ = 0;
    std::map<std::uint32_t, pending_connection> by_conn_;       // connections in negotiation
    std::multimap<std::uint16_t, pending_connection> accepts_;  // waiting for a peer on a port
    // Connections established on a listening port before an accept asked for them (a listen
    // backlog), oldest first: the next accept on that port takes the oldest. A peer whose MPA
    // Request has not fully arrived by `deadline_ps` is dropped (RFC 5044 §7.1.2: the responder
    // SHOULD time out waiting for the Request); one whose Request is in waits for an accept.
    struct backlog_entry {
        std::uint32_t conn = 0;
        std::uint64_t deadline_ps = 0;
        std::uint32_t handle = 0;  // what next_peer reports and accept/reject p2 names (never 0)
        bool reported = false;     // next_peer has told the driver about it
    };
    std::uint32_t next_handle_ = 1;
    std::multimap<std::uint16_t, backlog_entry> backlog_;
    bool request_arrived(std::uint32_t conn) const;
    std::uint64_t commands_ = 0, established_ = 0, failed_ = 0, rejected_ = 0;
    std::uint64_t ring_overruns_ = 0, commands_overwritten_ = 0;  // doorbells a whole ring or more ahead
};

}  // namespace rnic::fw
