// Capture generator for the tools tests (see capture_builder.h).
#include "capture_builder.h"

#include <algorithm>
#include <stdexcept>

#include "proto/pcap.h"

namespace rnic::tools_test {

void capture::add(bytes wire) {
    frames.push_back(frame{clock_ns, std::move(wire)});
    clock_ns += 10'000;  // 10 us between frames
}

bool capture::write(const std::string& path) const {
    proto::pcap_writer w;
    if (!w.open(path, nullptr)) return false;
    for (const frame& f : frames) w.write(f.time_ns, f.data.data(), f.data.size());
    w.close();
    return w.good();
}

bytes pattern(std::size_t n, std::uint8_t seed) {
    bytes b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 7 + (i >> 8));
    return b;
}

// ---------------------------------------------------------------------------------------------
// Messages

bytes messages::untagged(ddp::opcode op, std::uint32_t qn, std::uint32_t msn, std::uint32_t mo, bool last,
                         const bytes& payload, std::uint32_t invalidate_stag) {
    ddp::header h;
    h.tagged = false;
    h.last = last;
    h.opcode = op;
    h.queue = qn;
    h.msn = msn;
    h.mo = mo;
    h.invalidate_stag = invalidate_stag;
    bytes out(h.size());
    ddp::encode(h, out.data());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

bytes messages::tagged(ddp::opcode op, std::uint32_t stag, std::uint64_t to, bool last, const bytes& payload) {
    ddp::header h;
    h.tagged = true;
    h.last = last;
    h.opcode = op;
    h.stag = stag;
    h.tagged_offset = to;
    bytes out(h.size());
    ddp::encode(h, out.data());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

bytes messages::untagged_message(ddp::opcode op, std::uint32_t qn, const bytes& payload, std::uint32_t inv) {
    return untagged(op, qn, msn_[qn]++, 0, true, payload, inv);
}

bytes messages::send(ddp::opcode op, const bytes& payload, std::uint32_t invalidate_stag) {
    return untagged_message(op, ddp::kQueueSend, payload, invalidate_stag);
}

std::vector<bytes> messages::send_segments(ddp::opcode op, const bytes& payload, std::size_t chunk) {
    std::vector<bytes> out;
    const std::uint32_t msn = msn_[ddp::kQueueSend]++;
    for (std::size_t off = 0; off < payload.size(); off += chunk) {
        const std::size_t n = std::min(chunk, payload.size() - off);
        const bytes part(payload.begin() + static_cast<std::ptrdiff_t>(off),
                         payload.begin() + static_cast<std::ptrdiff_t>(off + n));
        out.push_back(
            untagged(op, ddp::kQueueSend, msn, static_cast<std::uint32_t>(off), off + n == payload.size(), part));
    }
    return out;
}

bytes messages::write(std::uint32_t stag, std::uint64_t to, const bytes& payload, bool last) {
    return tagged(ddp::opcode::rdma_write, stag, to, last, payload);
}

bytes messages::read_response(std::uint32_t stag, std::uint64_t to, const bytes& payload, bool last) {
    return tagged(ddp::opcode::read_response, stag, to, last, payload);
}

bytes messages::read_request(const ddp::read_request& rr) {
    bytes body(ddp::kReadRequestSize);
    ddp::encode(rr, body.data());
    return untagged_message(ddp::opcode::read_request, ddp::kQueueReadRequest, body);
}

bytes messages::terminate(const ddp::terminate& t) {
    return untagged_message(ddp::opcode::terminate, ddp::kQueueTerminate, ddp::encode(t));
}

bytes messages::immediate(bool se, std::uint64_t data) {
    bytes body(ddp::kImmediateDataSize);
    ddp::encode_immediate(data, body.data());
    return untagged_message(se ? ddp::opcode::immediate_se : ddp::opcode::immediate, ddp::kQueueSend, body);
}

bytes messages::atomic_request(const ddp::atomic_request& req) {
    bytes body(ddp::kAtomicRequestSize);
    ddp::encode(req, body.data());
    return untagged_message(ddp::opcode::atomic_request, ddp::kQueueReadRequest, body);
}

bytes messages::atomic_response(const ddp::atomic_response& resp) {
    bytes body(ddp::kAtomicResponseSize);
    ddp::encode(resp, body.data());
    return untagged_message(ddp::opcode::atomic_response, ddp::kQueueAtomicResponse, body);
}

// ---------------------------------------------------------------------------------------------
// Session

session::session(capture& capture, std::uint16_t initiator_port, std::uint16_t responder_port,
                 std::uint32_t initiator_isn, std::uint32_t responder_isn)
    : cap_(capture), port_{initiator_port, responder_port}, seq_{initiator_isn, responder_isn} {
    const net::mac_address mac_i{0x02, 0, 0, 0, 0, 0x01};
    const net::mac_address mac_r{0x02, 0, 0, 0, 0, 0x02};
    const std::uint32_t ip_i = 0x0a000001, ip_r = 0x0a000002;
    ep_[k_initiator] = net::endpoints{mac_i, mac_r, ip_i, ip_r};
    ep_[k_responder] = net::endpoints{mac_r, mac_i, ip_r, ip_i};
}

void session::frame(side from, std::uint32_t seq, std::uint8_t flags, const bytes& payload, bool corrupt_checksum) {
    net::ipv4_header ip;
    ip.identification = ip_id_[from]++;
    net::tcp_header tcp;
    tcp.src_port = port_[from];
    tcp.dst_port = port_[peer_of(from)];
    tcp.seq = seq;
    tcp.ack = (flags & net::tcp_flags::kAck) != 0 ? seq_[peer_of(from)] : 0;
    tcp.flags = flags;
    tcp.window = 65535;
    if ((flags & net::tcp_flags::kSyn) != 0) tcp.mss = 1460;
    bytes out;
    net::build_tcp_frame(ep_[from], ip, tcp, payload.data(), payload.size(), out);
    if (corrupt_checksum) out[net::kEthernetHeaderSize + net::kIpv4HeaderSize + 16] ^= 0x5A;
    cap_.add(std::move(out));
}

void session::handshake() {
    frame(k_initiator, seq_[k_initiator], net::tcp_flags::kSyn, {});
    ++seq_[k_initiator];
    frame(k_responder, seq_[k_responder], net::tcp_flags::kSyn | net::tcp_flags::kAck, {});
    ++seq_[k_responder];
    frame(k_initiator, seq_[k_initiator], net::tcp_flags::kAck, {});
}

void session::exchange(const mpa::request_reply& request, const mpa::request_reply& reply) {
    send(k_initiator, proto::mpa::encode(request), false);
    send(k_responder, proto::mpa::encode(reply), true);
    if (reply.reject) return;
    full_operation_ = true;
    markers_[k_responder] = request.marker;  // RFC 5044 §7.1.1: the Request's M asks for Markers towards the initiator
    markers_[k_initiator] = reply.marker;
    crc_ = request.crc || reply.crc;
    for (int s = 0; s < 2; ++s) {
        fo_start_[s] = seq_[s];
        pos_[s] = 0;
    }
}

void session::close() {
    frame(k_initiator, seq_[k_initiator], net::tcp_flags::kFin | net::tcp_flags::kAck, {});
    ++seq_[k_initiator];
    frame(k_responder, seq_[k_responder], net::tcp_flags::kFin | net::tcp_flags::kAck, {});
    ++seq_[k_responder];
    frame(k_initiator, seq_[k_initiator], net::tcp_flags::kAck, {});
}

void session::send(side from, const bytes& data, bool ack_it) {
    frame(from, seq_[from], net::tcp_flags::kAck | net::tcp_flags::kPsh, data);
    seq_[from] += static_cast<std::uint32_t>(data.size());
    if (full_operation_ && markers_[from] && !data.empty() &&
        (seq_[from] - fo_start_[from]) % mpa::kMarkerInterval == 0)
        ++marker_boundary_segments_;
    if (ack_it) ack(peer_of(from));
}

void session::send_split(side from, const bytes& data, const std::vector<std::size_t>& sizes, bool ack_it) {
    std::size_t off = 0, i = 0;
    while (off < data.size()) {
        const std::size_t n = std::min(sizes.at(std::min(i, sizes.size() - 1)), data.size() - off);
        send(
            from,
            bytes(data.begin() + static_cast<std::ptrdiff_t>(off), data.begin() + static_cast<std::ptrdiff_t>(off + n)),
            false);
        off += n;
        ++i;
    }
    if (ack_it) ack(peer_of(from));
}

void session::send_at(side from, std::uint32_t seq, const bytes& data, bool bad_checksum) {
    frame(from, seq, net::tcp_flags::kAck | net::tcp_flags::kPsh, data, bad_checksum);
}

void session::ack(side from) {
    frame(from, seq_[from], net::tcp_flags::kAck, {});
}

bytes session::fpdu(side from, const bytes& ulpdu) {
    if (!full_operation_) throw std::logic_error("fpdu() before the MPA exchange");
    bytes out;
    mpa::build_fpdu(ulpdu.data(), ulpdu.size(), crc_, markers_[from], pos_[from], out);
    pos_[from] += static_cast<std::uint32_t>(out.size());
    opcodes_[from].push_back(ulpdu.size() >= 2 ? static_cast<std::uint8_t>(ulpdu[1] & 0x0F) : 0xFF);
    return out;
}

bytes session::fpdus(side from, const std::vector<bytes>& ulpdus) {
    bytes out;
    for (const bytes& u : ulpdus) {
        const bytes f = fpdu(from, u);
        out.insert(out.end(), f.begin(), f.end());
    }
    return out;
}

void session::send_each(side from, const std::vector<bytes>& ulpdus) {
    for (const bytes& u : ulpdus) send(from, fpdu(from, u));
}

mpa::request_reply request_v1(bool marker, bool crc) {
    mpa::request_reply f;
    f.request = true;
    f.marker = marker;
    f.crc = crc;
    return f;
}

mpa::request_reply reply_v1(bool marker, bool crc) {
    mpa::request_reply f = request_v1(marker, crc);
    f.request = false;
    return f;
}

}  // namespace rnic::tools_test
