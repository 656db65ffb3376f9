#include "proto/seeds/vitcp_ack.h"

#include "proto/ddp_rdmap.h"

namespace rnic::proto::vitcp_ack {

namespace term = proto::ddp::term;

const char* to_string(vi_error e) {
    switch (e) {
    case vi_error::none:
        return "no error";
    case vi_error::memory_protection:
        return "RDMA Memory Protection Error";
    case vi_error::descriptor:
        return "VI Descriptor Error";
    case vi_error::transport:
        return "Unrecoverable Transport Error";
    }
    return "?";
}

vt::remote_error_code remote_error_code(vi_error e) {
    vt::remote_error_code c;
    c.memory_protection_error = e == vi_error::memory_protection;
    c.descriptor_error = e == vi_error::descriptor;
    c.transport_error = e == vi_error::transport;
    return c;
}

vi_error from_remote_error_code(const vt::remote_error_code& code) {
    if (code.memory_protection_error) return vi_error::memory_protection;
    if (code.descriptor_error) return vi_error::descriptor;
    if (code.transport_error) return vi_error::transport;
    return vi_error::none;
}

vi_error from_terminate(std::uint8_t layer, std::uint8_t etype) {
    if (layer == static_cast<std::uint8_t>(ddp::term_layer::ddp)) {
        if (etype == term::kDdpTaggedBuffer) return vi_error::memory_protection;
        if (etype == term::kDdpUntaggedBuffer) return vi_error::descriptor;
        return vi_error::transport;
    }
    if (layer == static_cast<std::uint8_t>(ddp::term_layer::rdma) && etype == term::kRdmaRemoteProtection) {
        return vi_error::memory_protection;
    }
    return vi_error::transport;  // LLP (CRC, framing), catastrophic, remote operation
}

// ---- acknowledger ----------------------------------------------------------------------------

void acknowledger::placed(std::uint32_t number, std::uint64_t landed_ps) {
    if (in_error()) return;  // §3.2: "Message ACK is invalid on subsequent messages"
    landing_.emplace_back(number, landed_ps);
}

void acknowledger::failed(std::uint32_t number, vi_error e) {
    if (in_error() || e == vi_error::none) return;
    error_ = e;
    error_number_ = number;
    landing_.clear();
}

void acknowledger::settle(std::uint64_t now_ps) {
    // Cumulative: a message is acknowledged only once every message before it has landed too.
    while (!landing_.empty() && landing_.front().second <= now_ps) {
        any_ = true;
        last_ = landing_.front().first;
        landing_.pop_front();
    }
}

ack_fields acknowledger::carry(std::uint64_t now_ps) {
    ack_fields f;
    if (in_error()) {
        f.message_ack = error_number_;
        f.remote_error = remote_error_code(error_);
        error_carried_ = true;
        return f;
    }
    settle(now_ps);
    if (any_) {
        f.message_ack = last_;
        carried_any_ = true;
        carried_ = last_;
    }
    return f;
}

bool acknowledger::owed(std::uint64_t now_ps) const {
    if (in_error()) return !error_carried_;
    // What settle(now_ps) would reach, without moving it.
    bool any = any_;
    std::uint32_t last = last_;
    for (const auto& [number, landed] : landing_) {
        if (landed > now_ps) break;
        any = true;
        last = number;
    }
    return any && (!carried_any_ || last != carried_);
}

// ---- tracker ---------------------------------------------------------------------------------

void tracker::sent(std::uint32_t number, std::uint64_t end) {
    if (!outstanding_.empty() && outstanding_.back().first == number) {
        outstanding_.back().second = end;  // a later segment of the same message
        return;
    }
    outstanding_.emplace_back(number, end);
}

bool tracker::names_outstanding(std::uint32_t number) const {
    if (outstanding_.empty()) return false;
    // Numbers are consecutive modulo 2^32 from the oldest unacknowledged one.
    const std::uint32_t first = outstanding_.front().first;
    const std::uint32_t last = outstanding_.back().first;
    return static_cast<std::uint32_t>(number - first) <= static_cast<std::uint32_t>(last - first);
}

tracker::verdict tracker::on_fields(const ack_fields& f) {
    verdict v;
    if (failed_) return v;  // the connection is breaking; nothing after the first report counts
    const vi_error e = from_remote_error_code(f.remote_error);
    const bool named = names_outstanding(f.message_ack);
    // No error: every message up to and including Message ACK is placed. An error: every message
    // before the one it names is (the levels that acknowledge break at their first error).
    if (named) {
        const std::uint32_t first = outstanding_.front().first;
        const std::uint32_t upto = static_cast<std::uint32_t>(f.message_ack - first);  // offset of the named one
        const std::uint32_t take = e == vi_error::none ? upto + 1 : upto;
        for (std::uint32_t i = 0; i < take; ++i) {
            placed_through_ = outstanding_.front().second;
            outstanding_.pop_front();
            v.placed = true;
        }
    }
    v.placed_through = placed_through_;
    if (e != vi_error::none) {
        failed_ = true;
        v.error = e;
        v.error_named = named;
    }
    return v;
}

}  // namespace rnic::proto::vitcp_ack
