#include "link/fault_injector.h"

#include <fstream>
#include <sstream>

#include "proto/net.h"

namespace rnic {

namespace net = proto::net;

bool fault_config::active() const {
    return loss > 0 || ge_good_to_bad > 0 || !trace_drops.empty() || reorder > 0 || duplicate > 0 || corrupt > 0 ||
           resegment > 0;
}

bool load_loss_trace(const std::string& path, std::set<std::uint64_t>* drops, std::string* error) {
    std::ifstream f(path);
    if (!f) {
        *error = path + ": cannot open the loss trace";
        return false;
    }
    std::string line;
    for (int n = 1; std::getline(f, line); ++n) {
        const auto hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        std::istringstream is(line);
        std::string word;
        if (!(is >> word)) continue;
        std::size_t used = 0;
        unsigned long long v = 0;
        try {
            v = std::stoull(word, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        std::string rest;
        if (used != word.size() || v == 0 || (is >> rest)) {
            *error = path + ":" + std::to_string(n) + ": expected one frame number (1, 2, ...) per line, got \"" +
                     line + "\"";
            return false;
        }
        drops->insert(v);
    }
    return true;
}

fault_injector::fault_injector(const fault_config& cfg, std::uint64_t seed) : cfg_(cfg), inert_(!cfg.active()) {
    // xoshiro256** seeded through splitmix64: fast, and the same on every platform.
    std::uint64_t s = seed;
    for (std::uint64_t& w : state_) {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        w = z ^ (z >> 31);
    }
}

std::uint64_t fault_injector::next() {
    auto rotl = [](std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
}

double fault_injector::uniform() {
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

void fault_injector::corrupt_bit(std::vector<std::uint8_t>& frame) {
    if (frame.empty()) return;
    const std::uint64_t bit = next() % (frame.size() * 8);
    frame[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    if (!cfg_.corrupt_fixes_checksum) return;
    // A middlebox that rewrites headers recomputes the checksums it sees: the damage is then left for
    // the MPA CRC to find (RFC 5044 §1: why MPA carries its own CRC). Only a frame that still parses
    // as TCP apart from its checksum can be repaired.
    std::string error;
    if (frame.size() < net::kEthernetHeaderSize + net::kIpv4HeaderSize + net::kTcpBaseHeaderSize) return;
    std::uint8_t* ip = frame.data() + net::kEthernetHeaderSize;
    if ((ip[0] >> 4) != 4 || (ip[0] & 0x0f) != 5 || ip[9] != net::kIpProtocolTcp) return;
    const std::size_t ip_len = static_cast<std::size_t>(ip[2]) << 8 | ip[3];
    if (ip_len < net::kIpv4HeaderSize + net::kTcpBaseHeaderSize || ip_len > frame.size() - net::kEthernetHeaderSize)
        return;
    ip[10] = ip[11] = 0;
    const std::uint16_t ip_sum = net::internet_checksum(ip, net::kIpv4HeaderSize);
    ip[10] = static_cast<std::uint8_t>(ip_sum >> 8);
    ip[11] = static_cast<std::uint8_t>(ip_sum);
    std::uint8_t* tcp = ip + net::kIpv4HeaderSize;
    const std::size_t tcp_len = ip_len - net::kIpv4HeaderSize;
    tcp[16] = tcp[17] = 0;
    std::uint8_t pseudo[12] = {ip[12],
                               ip[13],
                               ip[14],
                               ip[15],
                               ip[16],
                               ip[17],
                               ip[18],
                               ip[19],
                               0,
                               net::kIpProtocolTcp,
                               static_cast<std::uint8_t>(tcp_len >> 8),
                               static_cast<std::uint8_t>(tcp_len)};
    const std::uint32_t partial = net::checksum_partial(pseudo, sizeof pseudo);
    const std::uint32_t sum = net::checksum_partial(tcp, tcp_len, partial);
    const std::uint16_t folded = static_cast<std::uint16_t>(~sum & 0xffff);
    tcp[16] = static_cast<std::uint8_t>(folded >> 8);
    tcp[17] = static_cast<std::uint8_t>(folded);
}

bool fault_injector::split_tcp(const std::vector<std::uint8_t>& frame, std::vector<std::vector<std::uint8_t>>& out) {
    std::string error;
    const auto f = net::parse_tcp_frame(frame.data(), frame.size(), &error);
    if (!f || f->payload_len < 2 || (f->tcp.flags & (net::tcp_flags::kSyn | net::tcp_flags::kFin)) != 0) return false;
    // Cut the payload at a random point into two segments with the same headers (a re-segmenting
    // middlebox, e.g. a proxy or a TSO/LRO pair), so FPDUs no longer line up with segments.
    const std::size_t cut = 1 + static_cast<std::size_t>(next() % (f->payload_len - 1));
    const std::uint8_t* payload = frame.data() + f->payload_offset;
    net::endpoints ep;
    ep.src_mac = f->eth.src;
    ep.dst_mac = f->eth.dst;
    net::tcp_header first = f->tcp;
    first.flags = static_cast<std::uint8_t>(first.flags & ~net::tcp_flags::kPsh);
    net::tcp_header second = f->tcp;
    second.seq = f->tcp.seq + static_cast<std::uint32_t>(cut);
    if ((f->tcp.flags & net::tcp_flags::kUrg) != 0) {
        // The urgent pointer is an offset from each piece's own sequence number (RFC 9293 §3.1): the
        // first piece keeps it (it may now point past its data, as §3.8.5 allows); the second points
        // at the same byte, or carries no URG when that byte was in the first piece.
        if (f->tcp.urgent_pointer >= cut) {
            second.urgent_pointer = static_cast<std::uint16_t>(f->tcp.urgent_pointer - cut);
        } else {
            second.flags = static_cast<std::uint8_t>(second.flags & ~net::tcp_flags::kUrg);
            second.urgent_pointer = 0;
        }
    }
    std::vector<std::uint8_t> a, b;
    net::build_tcp_frame(ep, f->ip, first, payload, cut, a);
    net::build_tcp_frame(ep, f->ip, second, payload + cut, f->payload_len - cut, b);
    out.push_back(std::move(a));
    out.push_back(std::move(b));
    return true;
}

fault_injector::outcome fault_injector::apply(std::vector<std::uint8_t> frame) {
    outcome o;
    ++stats_.frames;
    // Draw every random number in a fixed order whatever the configuration, so that changing one
    // fault's probability does not reshuffle the others.
    const double u_loss = uniform(), u_ge = uniform(), u_ge_loss = uniform(), u_reorder = uniform(), u_dup = uniform(),
                 u_corrupt = uniform(), u_reseg = uniform();
    if (cfg_.ge_good_to_bad > 0) ge_bad_ = ge_bad_ ? !(u_ge < cfg_.ge_bad_to_good) : (u_ge < cfg_.ge_good_to_bad);
    if (cfg_.trace_drops.count(stats_.frames) != 0) {
        o.dropped = cause::trace;
        ++stats_.dropped_trace;
        return o;
    }
    if (u_loss < cfg_.loss) {
        o.dropped = cause::random;
        ++stats_.dropped_random;
        return o;
    }
    if (cfg_.ge_good_to_bad > 0 && u_ge_loss < (ge_bad_ ? cfg_.ge_loss_bad : cfg_.ge_loss_good)) {
        o.dropped = cause::burst;
        ++stats_.dropped_burst;
        return o;
    }
    if (u_reseg < cfg_.resegment && split_tcp(frame, o.frames)) {
        ++stats_.resegmented;
    } else {
        o.frames.push_back(std::move(frame));
    }
    if (u_corrupt < cfg_.corrupt) {
        corrupt_bit(o.frames.front());
        o.corrupted = true;
        ++stats_.corrupted;
    }
    if (u_dup < cfg_.duplicate) {
        o.frames.push_back(o.frames.back());
        o.duplicated = true;
        ++stats_.duplicated;
    }
    if (u_reorder < cfg_.reorder) {
        o.extra_delay_ps = cfg_.reorder_delay_ps;
        ++stats_.reordered;
    }
    return o;
}

}  // namespace rnic
