// Capture generator for the tools tests (see capture_builder.h).
#include "capture_builder.h"

#include <algorithm>
#include <stdexcept>

#include "proto/pcap.h"

namespace rnic::tools_test {

void Capture::add(Bytes wire) {
    frames.push_back(Frame{clock_ns, std::move(wire)});
    clock_ns += 10'000;  // 10 us between frames
}

bool Capture::write(const std::string& path) const {
    proto::PcapWriter w;
    if (!w.open(path, nullptr)) return false;
    for (const Frame& f : frames) w.write(f.time_ns, f.data.data(), f.data.size());
    w.close();
    return w.good();
}

Bytes pattern(std::size_t n, std::uint8_t seed) {
    Bytes b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 7 + (i >> 8));
    return b;
}

// ---------------------------------------------------------------------------------------------
// Messages

Bytes Messages::untagged(ddp::Opcode op, std::uint32_t qn, std::uint32_t msn, std::uint32_t mo, bool last,
                         const Bytes& payload, std::uint32_t invalidate_stag) {
    ddp::Header h;
    h.tagged = false;
    h.last = last;
    h.opcode = op;
    h.queue = qn;
    h.msn = msn;
    h.mo = mo;
    h.invalidate_stag = invalidate_stag;
    Bytes out(h.size());
    ddp::encode(h, out.data());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

Bytes Messages::tagged(ddp::Opcode op, std::uint32_t stag, std::uint64_t to, bool last, const Bytes& payload) {
    ddp::Header h;
    h.tagged = true;
    h.last = last;
    h.opcode = op;
    h.stag = stag;
    h.tagged_offset = to;
    Bytes out(h.size());
    ddp::encode(h, out.data());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

Bytes Messages::untagged_message(ddp::Opcode op, std::uint32_t qn, const Bytes& payload, std::uint32_t inv) {
    return untagged(op, qn, msn_[qn]++, 0, true, payload, inv);
}

Bytes Messages::send(ddp::Opcode op, const Bytes& payload, std::uint32_t invalidate_stag) {
    return untagged_message(op, ddp::kQueueSend, payload, invalidate_stag);
}

std::vector<Bytes> Messages::send_segments(ddp::Opcode op, const Bytes& payload, std::size_t chunk) {
    std::vector<Bytes> out;
    const std::uint32_t msn = msn_[ddp::kQueueSend]++;
    for (std::size_t off = 0; off < payload.size(); off += chunk) {
        const std::size_t n = std::min(chunk, payload.size() - off);
        const Bytes part(payload.begin() + static_cast<std::ptrdiff_t>(off),
                         payload.begin() + static_cast<std::ptrdiff_t>(off + n));
        out.push_back(untagged(op, ddp::kQueueSend, msn, static_cast<std::uint32_t>(off), off + n == payload.size(), part));
    }
    return out;
}

Bytes Messages::write(std::uint32_t stag, std::uint64_t to, const Bytes& payload, bool last) {
    return tagged(ddp::Opcode::rdma_write, stag, to, last, payload);
}

Bytes Messages::read_response(std::uint32_t stag, std::uint64_t to, const Bytes& payload, bool last) {
    return tagged(ddp::Opcode::read_response, stag, to, last, payload);
}

Bytes Messages::read_request(const ddp::ReadRequest& rr) {
    Bytes body(ddp::kReadRequestSize);
    ddp::encode(rr, body.data());
    return untagged_message(ddp::Opcode::read_request, ddp::kQueueReadRequest, body);
}

Bytes Messages::terminate(const ddp::Terminate& t) {
    return untagged_message(ddp::Opcode::terminate, ddp::kQueueTerminate, ddp::encode(t));
}

Bytes Messages::immediate(bool se, std::uint64_t data) {
    Bytes body(ddp::kImmediateDataSize);
    ddp::encode_immediate(data, body.data());
    return untagged_message(se ? ddp::Opcode::immediate_se : ddp::Opcode::immediate, ddp::kQueueSend, body);
}

Bytes Messages::atomic_request(const ddp::AtomicRequest& req) {
    Bytes body(ddp::kAtomicRequestSize);
    ddp::encode(req, body.data());
    return untagged_message(ddp::Opcode::atomic_request, ddp::kQueueReadRequest, body);
}

Bytes Messages::atomic_response(const ddp::AtomicResponse& resp) {
    Bytes body(ddp::kAtomicResponseSize);
    ddp::encode(resp, body.data());
    return untagged_message(ddp::Opcode::atomic_response, ddp::kQueueAtomicResponse, body);
}

// ---------------------------------------------------------------------------------------------
// Session

Session::Session(Capture& capture, std::uint16_t initiator_port, std::uint16_t responder_port,
                 std::uint32_t initiator_isn, std::uint32_t responder_isn)
    : cap_(capture), port_{initiator_port, responder_port}, seq_{initiator_isn, responder_isn} {
    const net::MacAddress mac_i{0x02, 0, 0, 0, 0, 0x01};
    const net::MacAddress mac_r{0x02, 0, 0, 0, 0, 0x02};
    const std::uint32_t ip_i = 0x0a000001, ip_r = 0x0a000002;
    ep_[kInitiator] = net::Endpoints{mac_i, mac_r, ip_i, ip_r};
    ep_[kResponder] = net::Endpoints{mac_r, mac_i, ip_r, ip_i};
}

void Session::frame(Side from, std::uint32_t seq, std::uint8_t flags, const Bytes& payload, bool corrupt_checksum) {
    net::Ipv4Header ip;
    ip.identification = ip_id_[from]++;
    net::TcpHeader tcp;
    tcp.src_port = port_[from];
    tcp.dst_port = port_[peer_of(from)];
    tcp.seq = seq;
    tcp.ack = (flags & net::tcp_flags::ack) != 0 ? seq_[peer_of(from)] : 0;
    tcp.flags = flags;
    tcp.window = 65535;
    if ((flags & net::tcp_flags::syn) != 0) tcp.mss = 1460;
    Bytes out;
    net::build_tcp_frame(ep_[from], ip, tcp, payload.data(), payload.size(), out);
    if (corrupt_checksum) out[net::kEthernetHeaderSize + net::kIpv4HeaderSize + 16] ^= 0x5A;
    cap_.add(std::move(out));
}

void Session::handshake() {
    frame(kInitiator, seq_[kInitiator], net::tcp_flags::syn, {});
    ++seq_[kInitiator];
    frame(kResponder, seq_[kResponder], net::tcp_flags::syn | net::tcp_flags::ack, {});
    ++seq_[kResponder];
    frame(kInitiator, seq_[kInitiator], net::tcp_flags::ack, {});
}

void Session::exchange(const mpa::RequestReply& request, const mpa::RequestReply& reply) {
    send(kInitiator, proto::mpa::encode(request), false);
    send(kResponder, proto::mpa::encode(reply), true);
    if (reply.reject) return;
    full_operation_ = true;
    markers_[kResponder] = request.marker;  // RFC 5044 §7.1.1: the Request's M asks for Markers towards the initiator
    markers_[kInitiator] = reply.marker;
    crc_ = request.crc || reply.crc;
    for (int s = 0; s < 2; ++s) {
        fo_start_[s] = seq_[s];
        pos_[s] = 0;
    }
}

void Session::close() {
    frame(kInitiator, seq_[kInitiator], net::tcp_flags::fin | net::tcp_flags::ack, {});
    ++seq_[kInitiator];
    frame(kResponder, seq_[kResponder], net::tcp_flags::fin | net::tcp_flags::ack, {});
    ++seq_[kResponder];
    frame(kInitiator, seq_[kInitiator], net::tcp_flags::ack, {});
}

void Session::send(Side from, const Bytes& data, bool ack_it) {
    frame(from, seq_[from], net::tcp_flags::ack | net::tcp_flags::psh, data);
    seq_[from] += static_cast<std::uint32_t>(data.size());
    if (full_operation_ && markers_[from] && !data.empty() && (seq_[from] - fo_start_[from]) % mpa::kMarkerInterval == 0)
        ++marker_boundary_segments_;
    if (ack_it) ack(peer_of(from));
}

void Session::send_split(Side from, const Bytes& data, const std::vector<std::size_t>& sizes, bool ack_it) {
    std::size_t off = 0, i = 0;
    while (off < data.size()) {
        const std::size_t n = std::min(sizes.at(std::min(i, sizes.size() - 1)), data.size() - off);
        send(from,
             Bytes(data.begin() + static_cast<std::ptrdiff_t>(off), data.begin() + static_cast<std::ptrdiff_t>(off + n)),
             false);
        off += n;
        ++i;
    }
    if (ack_it) ack(peer_of(from));
}

void Session::send_at(Side from, std::uint32_t seq, const Bytes& data, bool bad_checksum) {
    frame(from, seq, net::tcp_flags::ack | net::tcp_flags::psh, data, bad_checksum);
}

void Session::ack(Side from) { frame(from, seq_[from], net::tcp_flags::ack, {}); }

Bytes Session::fpdu(Side from, const Bytes& ulpdu) {
    if (!full_operation_) throw std::logic_error("fpdu() before the MPA exchange");
    Bytes out;
    mpa::build_fpdu(ulpdu.data(), ulpdu.size(), crc_, markers_[from], pos_[from], out);
    pos_[from] += static_cast<std::uint32_t>(out.size());
    opcodes_[from].push_back(ulpdu.size() >= 2 ? static_cast<std::uint8_t>(ulpdu[1] & 0x0F) : 0xFF);
    return out;
}

Bytes Session::fpdus(Side from, const std::vector<Bytes>& ulpdus) {
    Bytes out;
    for (const Bytes& u : ulpdus) {
        const Bytes f = fpdu(from, u);
        out.insert(out.end(), f.begin(), f.end());
    }
    return out;
}

void Session::send_each(Side from, const std::vector<Bytes>& ulpdus) {
    for (const Bytes& u : ulpdus) send(from, fpdu(from, u));
}

mpa::RequestReply request_v1(bool marker, bool crc) {
    mpa::RequestReply f;
    f.request = true;
    f.marker = marker;
    f.crc = crc;
    return f;
}

mpa::RequestReply reply_v1(bool marker, bool crc) {
    mpa::RequestReply f = request_v1(marker, crc);
    f.request = false;
    return f;
}

}  // namespace rnic::tools_test
