#include "proto/seeds/vitcp_ce.h"

#include <algorithm>

#include "proto/bytes.h"

namespace rnic::proto::vitcp_ce {

namespace {

vt::local_parameters local_of(const proposal& us) {
    vt::local_parameters p;
    p.attributes = attributes_for(us.level, us.peer_to_peer);
    p.attributes.rdma_write_enable = us.rdma_write;
    p.attributes.rdma_read_enable = us.rdma_read;
    p.mtu = us.mtu;
    p.rdma_read_window = us.rdma_read_window;
    p.crc = us.crc;
    p.urgent_marker = us.urgent_marker;
    return p;
}

std::vector<std::uint8_t> encode_ce(vt::segment_type t, const vt::ce_header& ce) {
    vt::segment s;
    s.header.type = t;
    s.header.eom = true;
    s.ce = ce;
    s.crc = ce.has_option(vt::kOptionCrc);  // §3.5: the trailer iff the CRC option
    return vt::encode(s);
}

}  // namespace

const char* to_string(reliability r) {
    switch (r) {
    case reliability::unreliable:
        return "unreliable delivery";
    case reliability::reliable_delivery:
        return "reliable delivery";
    case reliability::reliable_reception:
        return "reliable reception";
    }
    return "?";
}

const char* to_string(refusal r) {
    switch (r) {
    case refusal::none:
        return "none";
    case refusal::consumer_rejected:
        return "rejected by the VI consumer";
    case refusal::reliability_mismatch:
        return "reliability levels differ (§3.3)";
    case refusal::peer_to_peer_mismatch:
        return "peer-to-peer bits differ (§3.3)";
    case refusal::bad_request:
        return "invalid ConnectRequest";
    case refusal::unsupported_version:
        return "unsupported VI/TCP version (§3.2)";
    case refusal::bad_option:
        return "malformed option (§3.3)";
    }
    return "unknown reason";
}

vt::attributes attributes_for(reliability r, bool peer_to_peer) {
    vt::attributes a;
    a.unreliable = r == reliability::unreliable;
    a.reliable_delivery = r == reliability::reliable_delivery;
    a.reliable_reception = r == reliability::reliable_reception;
    a.peer_to_peer = peer_to_peer;
    return a;
}

std::optional<reliability> reliability_of(const vt::attributes& a) {
    if (a.reliability_bits() != 1) return std::nullopt;
    if (a.unreliable) return reliability::unreliable;
    return a.reliable_delivery ? reliability::reliable_delivery : reliability::reliable_reception;
}

std::vector<std::uint8_t> port_discriminator(std::uint16_t port) {
    return {static_cast<std::uint8_t>(port >> 8), static_cast<std::uint8_t>(port)};
}

std::size_t ce_segment_length(const std::uint8_t* data, std::size_t len) {
    if (len < 4) return 0;
    // A Segment Length below the header still needs the header to be judged (parse says why).
    return std::max<std::size_t>(get_be16(data + 2), vt::kSegmentHeaderSize);
}

// ---------------------------------------------------------------------------------------------
// active (§4.2)

active::active(const proposal& us, std::uint16_t local_port, std::uint16_t remote_port)
    : us_(us), local_port_(local_port), remote_port_(remote_port) {}

void active::connect_request() {
    if (state_ == state::disconnected) state_ = state::connecting;
}

std::vector<std::uint8_t> active::tcp_established() {
    if (state_ != state::connecting) return {};
    sent_ = vt::make_request(local_of(us_), port_discriminator(local_port_), port_discriminator(remote_port_));
    state_ = state::pending_accept;
    return encode_ce(vt::segment_type::connect_request, sent_);
}

std::vector<std::uint8_t> active::tcp_established(std::vector<std::uint8_t> request) {
    if (state_ != state::connecting) return {};
    // What decodes of it is what an Accept is held to; an undecodable request leaves a CE header
    // no Accept can fit (negotiate() fails on its missing reliability level).
    std::string unused;
    const auto seg = vt::decode(request.data(), request.size(), false, &unused);
    if (seg && seg->header.type == vt::segment_type::connect_request) {
        sent_ = *seg->ce;
    } else {
        sent_ = vt::ce_header{};
        sent_.attributes.reliable_delivery = false;  // no reliability level at all
    }
    state_ = state::pending_accept;
    return request;
}

active::result active::on_bytes(const std::uint8_t* data, std::size_t len) {
    auto error = [this](std::string why) {
        why_ = std::move(why);
        state_ = state::disconnected;
        return result::protocol_error;
    };
    if (state_ != state::pending_accept) return error("bytes from the peer while not waiting for its answer (§4.2)");
    const std::size_t need = ce_segment_length(data, len);
    if (need == 0 || len < need) return result::need_more;
    consumed_ = need;
    std::string detail;
    const auto seg = vt::decode(data, need, false, &detail);
    if (!seg) return error("bad answer to the ConnectRequest: " + detail);
    switch (seg->header.type) {
    case vt::segment_type::connect_accept: {
        const auto g = vt::negotiate(sent_, *seg->ce, &detail);
        if (!g) return error("ConnectAccept does not fit the ConnectRequest: " + detail);
        // negotiate() held the Accept's level to the one we asked for.
        agreed_.level = reliability_of(sent_.attributes).value_or(us_.level);
        agreed_.mtu = g->mtu;
        agreed_.rdma_read_window = g->rdma_read_window;
        agreed_.crc = g->crc;
        agreed_.may_mark_urgent = g->accept_urgent_marker;     // the peer offered it to us (§3.7)
        agreed_.peer_marks_urgent = g->request_urgent_marker;  // we offered it to the peer
        state_ = state::connected;
        return result::connected;
    }
    case vt::segment_type::connect_reject: {
        const std::uint8_t code = seg->header.remote_error.is_error_code;
        reason_ = code <= kMaxRefusal ? static_cast<refusal>(code) : refusal::none;
        why_ = std::string("ConnectReject: ") + to_string(reason_) + " (IS Error Code " + std::to_string(code) + ")";
        state_ = state::disconnected;
        return result::rejected;
    }
    case vt::segment_type::connect_no_match:
        why_ = "ConnectNoMatch: no VI listens with discriminator port " + std::to_string(remote_port_);
        state_ = state::disconnected;
        return result::no_match;
    default:
        return error(std::string("expected ConnectAccept, ConnectReject or ConnectNoMatch, got ") +
                     vt::to_string(seg->header.type));
    }
}

// ---------------------------------------------------------------------------------------------
// passive (§4.3)

void passive::tcp_accepted() {
    if (state_ == state::listening) state_ = state::incoming;
}

passive::result passive::on_bytes(const std::uint8_t* data, std::size_t len) {
    auto error = [this](refusal r, std::string why) {
        reason_ = r;
        why_ = std::move(why);
        state_ = state::disconnected;
        return result::protocol_error;
    };
    if (state_ != state::incoming) return error(refusal::bad_request, "bytes while not waiting for a ConnectRequest");
    const std::size_t need = ce_segment_length(data, len);
    if (need == 0 || len < need) return result::need_more;
    consumed_ = need;
    std::string detail;
    vt::error_code code = vt::error_code::none;
    const auto seg = vt::decode(data, need, false, &detail, &code);
    auto invalid = [this](refusal r, std::string why) {
        reason_ = r;
        why_ = std::move(why);
        invalid_ = true;
        state_ = state::disconnected;
        return result::invalid;
    };
    if (!seg) {
        const refusal r = code == vt::error_code::bad_version ? refusal::unsupported_version
                          : code == vt::error_code::bad_option || code == vt::error_code::missing_end_of_options
                              ? refusal::bad_option
                              : refusal::bad_request;
        return invalid(r, "invalid ConnectRequest: " + detail);
    }
    if (seg->header.type != vt::segment_type::connect_request) {
        return invalid(refusal::bad_request,
                       std::string("expected a ConnectRequest, got ") + vt::to_string(seg->header.type));
    }
    request_ = *seg->ce;
    matched_ = request_.called_discriminator == port_discriminator(port_);
    state_ = matched_ ? state::pending_accept : state::matching;
    return result::request;
}

std::vector<std::uint8_t> passive::answer(vt::segment_type t, refusal why) {
    vt::segment s;
    s.header.type = t;
    s.header.eom = true;
    s.header.remote_error.is_error_code = static_cast<std::uint8_t>(why);
    s.crc = request_.has_option(vt::kOptionCrc);  // §3.6: MAY; seen from Segment Length 28
    state_ = state::disconnected;
    return vt::encode(s);
}

std::vector<std::uint8_t> passive::refuse() {
    if (!invalid_) return {};
    invalid_ = false;
    return answer(vt::segment_type::connect_reject, reason_);
}

std::vector<std::uint8_t> passive::no_match() {
    if (state_ != state::matching) return {};
    why_ = "no VI listens with the Called Discriminator";
    return answer(vt::segment_type::connect_no_match, refusal::none);
}

std::vector<std::uint8_t> passive::reject(refusal why) {
    if (state_ != state::pending_accept) return {};
    reason_ = why;
    why_ = to_string(why);
    return answer(vt::segment_type::connect_reject, why);
}

std::vector<std::uint8_t> passive::accept(const proposal& us) {
    if (state_ != state::pending_accept) return {};
    const auto theirs = reliability_of(request_.attributes);
    if (!theirs || *theirs != us.level) {
        auto bytes = reject(refusal::reliability_mismatch);
        why_ = std::string("the ConnectRequest asks for ") + (theirs ? to_string(*theirs) : "no single level") +
               ", this end runs " + to_string(us.level) + " (§3.3)";
        return bytes;
    }
    if (request_.attributes.peer_to_peer != us.peer_to_peer) return reject(refusal::peer_to_peer_mismatch);
    const vt::ce_header acc = vt::make_accept(request_, local_of(us));
    std::string detail;
    const auto g = vt::negotiate(request_, acc, &detail);
    if (!g) return reject(refusal::bad_request);  // cannot happen with make_accept; kept as a guard
    agreed_.level = us.level;
    agreed_.mtu = g->mtu;
    agreed_.rdma_read_window = g->rdma_read_window;
    agreed_.crc = g->crc;
    agreed_.may_mark_urgent = g->request_urgent_marker;
    agreed_.peer_marks_urgent = g->accept_urgent_marker;
    state_ = state::connected;
    return encode_ce(vt::segment_type::connect_accept, acc);
}

}  // namespace rnic::proto::vitcp_ce
