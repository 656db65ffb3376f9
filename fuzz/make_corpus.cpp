// Writes the seed corpus of every fuzz target: small, valid (or nearly valid) encodings made with
// the protocol library's own encoders, so that fuzzing starts deep inside each parser.
//
//   make-corpus <dir>      writes <dir>/<target>/<name> for every target (existing files with the
//                          same names are overwritten; nothing else is touched)
//
// The committed corpus under fuzz/corpus/ was made with this program; regression inputs found by
// fuzzing are added there by hand (named regress-*).
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "proto/bytes.h"
#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"
#include "proto/net.h"
#include "proto/pcap.h"
#include "tcp_connection_format.h"
#if RNIC_HAVE_FUZZ_SEED_IFT
#include "proto/seeds/ift.h"
#endif
#if RNIC_HAVE_FUZZ_SEED_RDMATCP
#include "proto/seeds/rdmatcp.h"
#endif
#if RNIC_HAVE_FUZZ_SEED_VITCP
#include "proto/seeds/vitcp.h"
#endif

namespace proto = rnic::proto;
namespace mpa = rnic::proto::mpa;
namespace ddp = rnic::proto::ddp;
namespace net = rnic::proto::net;
namespace tf = rnic::fuzz::tcp_format;
#if RNIC_HAVE_FUZZ_SEED_IFT
namespace ift = rnic::proto::ift;
#endif
#if RNIC_HAVE_FUZZ_SEED_RDMATCP
namespace rdmatcp = rnic::proto::rdmatcp;
#endif
#if RNIC_HAVE_FUZZ_SEED_VITCP
namespace vitcp = rnic::proto::vitcp;
#endif
using bytes = std::vector<std::uint8_t>;

namespace {

std::string g_root;

void write(const std::string& target, const std::string& name, const bytes& data) {
    const std::string dir = g_root + "/" + target;
    ::mkdir(g_root.c_str(), 0755);
    ::mkdir(dir.c_str(), 0755);
    const std::string path = dir + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || (!data.empty() && std::fwrite(data.data(), 1, data.size(), f) != data.size())) {
        std::fprintf(stderr, "make-corpus: cannot write %s\n", path.c_str());
        std::exit(1);
    }
    std::fclose(f);
}

bytes text(const std::string& s) {
    return bytes(s.begin(), s.end());
}

bytes pattern(std::size_t n, std::uint8_t start = 0) {
    bytes b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(start + i * 7);
    return b;
}

bytes cat(bytes a, const bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// ---------------------------------------------------------------------------------------------

void mpa_request_reply() {
    const char* t = "fuzz_mpa_request_reply";
    mpa::request_reply req;
    write(t, "request-rev1", mpa::encode(req));
    req.marker = true;
    req.crc = true;
    req.private_data = text("hello");
    write(t, "request-markers-crc-pd", mpa::encode(req));
    mpa::request_reply rep;
    rep.request = false;
    rep.revision = 2;
    rep.enhanced = true;
    rep.crc = true;
    rep.peer_to_peer = true;
    rep.zero_length_read_rtr = true;
    rep.ird = 16;
    rep.ord = 8;
    rep.private_data = pattern(24);
    write(t, "reply-enhanced-p2p", mpa::encode(rep));
    rep.reject = true;
    rep.ird = rep.ord = mpa::kIrdOrdNoNegotiation;
    rep.zero_length_send_rtr = rep.zero_length_write_rtr = true;
    write(t, "reply-reject-no-negotiation", mpa::encode(rep));
    mpa::request_reply big;
    big.revision = 2;
    big.enhanced = true;
    big.private_data = pattern(mpa::kMaxPrivateData - mpa::kEnhancedDataSize);
    write(t, "request-max-pd", mpa::encode(big));
    mpa::request_reply siw;  // Linux siw sets a Res bit: only the lenient decode takes it
    siw.crc = true;
    siw.reserved_bits = 0x08;
    write(t, "request-res-bit", mpa::encode(siw));
    // A Reply followed by the first FPDU bytes of Full Operation.
    bytes fpdu;
    mpa::build_fpdu(pattern(18).data(), 18, true, false, 0, fpdu);
    mpa::request_reply plain_reply;
    plain_reply.request = false;
    write(t, "reply-then-fpdu", cat(mpa::encode(plain_reply), fpdu));
}

// Deframer input: flags, [stream_pos], [max_ulpdu], seed, stream.
bytes deframer_input(bool crc, bool markers, std::uint32_t stream_pos, int max_ulpdu, std::uint32_t seed,
                     const std::vector<std::size_t>& ulpdu_lens, int corrupt_at = -1) {
    tf::writer w;
    w.u8((crc ? 1 : 0) | (stream_pos != 0 ? 2 : 0) | (max_ulpdu >= 0 ? 4 : 0));
    if (stream_pos != 0) w.u32(stream_pos);
    if (max_ulpdu >= 0) w.u16(static_cast<unsigned>(max_ulpdu));
    w.u32(seed);
    bytes stream;
    std::uint32_t pos = stream_pos;
    std::uint8_t fill = 1;
    for (const std::size_t n : ulpdu_lens) {
        const std::size_t before = stream.size();
        mpa::build_fpdu(pattern(n, fill).data(), n, crc, markers, pos, stream);
        pos += static_cast<std::uint32_t>(stream.size() - before);
        fill = static_cast<std::uint8_t>(fill + 31);
    }
    if (corrupt_at >= 0 && static_cast<std::size_t>(corrupt_at) < stream.size()) stream[corrupt_at] ^= 0x40;
    return cat(w.bytes, stream);
}

void mpa_deframer() {
    const char* t = "fuzz_mpa_deframer";
    write(t, "crc-three-fpdus", deframer_input(true, false, 0, -1, 1, {0, 5, 100}));
    write(t, "crc-one-fpdu", deframer_input(true, false, 0, -1, 7, {18}));
    write(t, "no-crc-fpdus", deframer_input(false, false, 0, -1, 2, {1, 2, 3, 4, 60}));
    write(t, "crc-bad-crc", deframer_input(true, false, 0, -1, 3, {40, 8}, 44));
    write(t, "crc-too-long", deframer_input(true, false, 0, 32, 4, {16, 64}));
    write(t, "crc-large-fpdu", deframer_input(true, false, 0, -1, 5, {1400, 3}));
}

void mpa_deframer_markers() {
    const char* t = "fuzz_mpa_deframer_markers";
    write(t, "crc-at-zero", deframer_input(true, true, 0, -1, 1, {0, 5, 100}));
    write(t, "crc-crossing-marker", deframer_input(true, true, 0, -1, 2, {600, 200, 300}));
    write(t, "crc-length-split-by-marker", deframer_input(true, true, 511, -1, 3, {20, 700}));
    write(t, "crc-crc-split-by-marker", deframer_input(true, true, 490, -1, 4, {14, 40}));
    write(t, "no-crc-pos-wrap", deframer_input(false, true, 0xFFFFFF00u, -1, 5, {300, 100}));
    write(t, "crc-bad-marker", deframer_input(true, true, 0, -1, 6, {1000}, 512 + 3));
    write(t, "crc-two-markers", deframer_input(true, true, 100, -1, 7, {1100}));
}

void ddp_header() {
    const char* t = "fuzz_ddp_header";
    std::uint8_t b[ddp::kUntaggedHeaderSize];
    ddp::header w;
    w.tagged = true;
    w.opcode = ddp::opcode::rdma_write;
    w.stag = 0x12345678;
    w.tagged_offset = 0x0000100000002000ull;
    write(t, "tagged-write", bytes(b, b + ddp::encode(w, b)));
    ddp::header s;
    s.opcode = ddp::opcode::send_se_invalidate;
    s.invalidate_stag = 0xCAFEBABE;
    s.queue = ddp::kQueueSend;
    s.msn = 1;
    s.mo = 4096;
    s.last = false;
    write(t, "untagged-send-inv", bytes(b, b + ddp::encode(s, b)));
    ddp::header rr;
    rr.opcode = ddp::opcode::read_request;
    rr.queue = ddp::kQueueReadRequest;
    rr.msn = 7;
    bytes rr_bytes(b, b + ddp::encode(rr, b));
    std::uint8_t r[ddp::kReadRequestSize];
    ddp::encode(ddp::read_request{1, 2, 3, 4, 5}, r);
    write(t, "untagged-read-request", cat(rr_bytes, bytes(r, r + sizeof r)));
    ddp::header term;
    term.opcode = ddp::opcode::terminate;
    term.queue = ddp::kQueueTerminate;
    term.msn = 1;
    write(t, "untagged-terminate", bytes(b, b + ddp::encode(term, b)));
}

void ddp_terminate() {
    const char* t = "fuzz_ddp_terminate";
    ddp::terminate plain;
    plain.layer = ddp::term_layer::llp;
    plain.etype = ddp::term::kLlpMpa;
    plain.code = ddp::term::kMpaCrcError;
    write(t, "llp-crc", ddp::encode(plain));
    std::uint8_t b[ddp::kUntaggedHeaderSize];
    ddp::terminate d;
    d.layer = ddp::term_layer::ddp;
    d.etype = ddp::term::kDdpUntaggedBuffer;
    d.code = ddp::term::kDdpUntaggedInvalidMsn;
    d.m = d.d = true;
    d.ddp_segment_length = 1024;
    ddp::header send;
    send.msn = 9;
    d.ddp_header.assign(b, b + ddp::encode(send, b));
    write(t, "ddp-untagged-hdr", ddp::encode(d));
    ddp::terminate tagged = d;
    tagged.etype = ddp::term::kDdpTaggedBuffer;
    tagged.code = ddp::term::kDdpTaggedBaseOrBounds;
    ddp::header write_hdr;
    write_hdr.tagged = true;
    write_hdr.opcode = ddp::opcode::rdma_write;
    write_hdr.stag = 0x100;
    tagged.ddp_header.assign(b, b + ddp::encode(write_hdr, b));
    write(t, "ddp-tagged-hdr", ddp::encode(tagged));
    ddp::terminate dr = d;
    dr.layer = ddp::term_layer::rdma;
    dr.etype = ddp::term::kRdmaRemoteProtection;
    dr.code = ddp::term::kRdmaInvalidStag;
    dr.r = true;
    std::uint8_t rr[ddp::kReadRequestSize];
    ddp::encode(ddp::read_request{0x11, 0x22, 0x33, 0x44, 0x55}, rr);
    dr.rdma_header.assign(rr, rr + sizeof rr);
    write(t, "rdma-d-and-r", ddp::encode(dr));
    ddp::terminate r_only = dr;
    r_only.d = r_only.m = false;
    r_only.ddp_header.clear();
    r_only.ddp_segment_length = 0;
    write(t, "rdma-r-only", ddp::encode(r_only));
}

void rdmap_headers() {
    const char* t = "fuzz_rdmap_headers";
    std::uint8_t b[ddp::kAtomicRequestSize];
    ddp::encode_immediate(0x0102030405060708ull, b);
    write(t, "immediate", bytes(b, b + ddp::kImmediateDataSize));
    ddp::atomic_response resp{0x42, 0xFFFF0000FFFF0000ull};
    ddp::encode(resp, b);
    write(t, "atomic-response", bytes(b, b + ddp::kAtomicResponseSize));
    ddp::read_request rr{0x1000, 0x2000, 65536, 0x3000, 0x4000};
    ddp::encode(rr, b);
    write(t, "read-request", bytes(b, b + ddp::kReadRequestSize));
    ddp::atomic_request req;
    req.op = ddp::atomic_opcode::compare_swap;
    req.request_id = 3;
    req.stag = 0x77;
    req.tagged_offset = 64;
    req.add_or_swap_data = 1;
    req.add_or_swap_mask = ~0ull;
    req.compare_data = 2;
    req.compare_mask = ~0ull;
    ddp::encode(req, b);
    write(t, "atomic-request-cmpswap", bytes(b, b + ddp::kAtomicRequestSize));
}

bytes frame(const net::tcp_header& h, const bytes& payload) {
    net::endpoints ep;
    ep.src_mac = {2, 0, 0, 0, 0, 1};
    ep.dst_mac = {2, 0, 0, 0, 0, 2};
    ep.src_ip = 0x0a000001;
    ep.dst_ip = 0x0a000002;
    bytes out;
    net::build_tcp_frame(ep, net::ipv4_header{}, h, payload.data(), payload.size(), out);
    return out;
}

void tcp_frame() {
    const char* t = "fuzz_tcp_frame";
    net::tcp_header syn;
    syn.src_port = 40000;
    syn.dst_port = 5201;
    syn.seq = 0xFFFFFF00u;
    syn.flags = net::tcp_flags::kSyn;
    syn.window = 65535;
    syn.mss = 1460;
    syn.window_scale = 7;
    syn.sack_permitted = true;
    syn.timestamps = std::make_pair(0x11223344u, 0u);
    // Byte 0: bit 0 set = checksums recomputed by the target (lets mutations reach the options).
    write(t, "syn-all-options", cat({0}, frame(syn, {})));
    write(t, "syn-all-options-fix", cat({1}, frame(syn, {})));
    net::tcp_header data;
    data.src_port = 5201;
    data.dst_port = 40000;
    data.seq = 1;
    data.ack = 1000;
    data.flags = net::tcp_flags::kAck | net::tcp_flags::kPsh;
    data.window = 512;
    data.timestamps = std::make_pair(5u, 6u);
    data.sack_blocks = {{100, 200}, {300, 400}, {500, 600}};
    write(t, "data-ts-sack", cat({0}, frame(data, text("payload bytes"))));
    write(t, "data-ts-sack-fix", cat({1}, frame(data, text("payload bytes"))));
    net::tcp_header ack;
    ack.src_port = 1;
    ack.dst_port = 2;
    ack.flags = net::tcp_flags::kAck;
    write(t, "ack-mpa-payload", cat({0}, frame(ack, pattern(64))));
    // Options the encoder never writes: Linux SYN layout, unknown kind 30, EOL with garbage.
    bytes linux_syn = frame(ack, {});
    const bytes opts = {0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0x11, 0x22, 0x33, 0x44, 0,    0,
                        0,    0,    0x01, 0x03, 0x03, 0x07, 0x1e, 0x04, 0,    0,    0x00, 0xff, 0xff, 0xff};
    linux_syn.insert(linux_syn.begin() + 54, opts.begin(), opts.end());
    linux_syn[46] = static_cast<std::uint8_t>(((20 + opts.size()) / 4) << 4);
    proto::put_be16(linux_syn.data() + 16, static_cast<std::uint16_t>(20 + 20 + opts.size()));
    write(t, "raw-options-fix", cat({1}, linux_syn));  // checksums fixed by the target
}

void parse_ipv4() {
    const char* t = "fuzz_parse_ipv4";
    write(t, "plain", text("10.0.0.1"));
    write(t, "max", text("255.255.255.255"));
    write(t, "zero", text("0.0.0.0"));
    write(t, "mixed", text("192.168.100.254"));
    write(t, "leading-zero", text("01.2.3.4"));
    write(t, "three-parts", text("1.2.3"));
    write(t, "five-parts", text("1.2.3.4.5"));
    write(t, "overflow", text("256.1.1.1"));
}

bytes read_whole(const std::string& path) {
    bytes b;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return b;
    std::uint8_t buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) b.insert(b.end(), buf, buf + n);
    std::fclose(f);
    return b;
}

void read_pcap() {
    const char* t = "fuzz_read_pcap";
    const std::string tmp = g_root + "/.make-corpus.pcap";
    proto::pcap_writer w;
    std::string error;
    if (!w.open(tmp, &error)) {
        std::fprintf(stderr, "make-corpus: %s\n", error.c_str());
        std::exit(1);
    }
    w.close();
    write(t, "header-only", read_whole(tmp));
    w.open(tmp, &error);
    net::tcp_header ack;
    ack.flags = net::tcp_flags::kAck;
    w.write(1'000'000'123ull, frame(ack, pattern(10)).data(), frame(ack, pattern(10)).size());
    w.write(2'500'000'000ull, frame(ack, {}).data(), frame(ack, {}).size());
    w.write(3'000'000'000ull, nullptr, 0);
    w.close();
    write(t, "ns-three-records", read_whole(tmp));
    std::remove(tmp.c_str());
    // Microsecond magic, big-endian, one 4-byte record.
    const std::uint8_t header[] = {0xa1, 0xb2, 0xc3, 0xd4, 0,    2, 0, 4, 0, 0,  0,    0,    0,    0,   0,
                                   0,    0,    0,    0xff, 0xff, 0, 0, 0, 1, 0,  0,    0,    1,    0,   0,
                                   0,    2,    0,    0,    0,    4, 0, 0, 0, 60, 0xde, 0xad, 0xbe, 0xef};
    write(t, "us-big-endian", bytes(header, header + sizeof header));
}

// ---------------------------------------------------------------------------------------------
// TCP connection scripts.

struct script {
    tf::writer w;
    explicit script(std::uint16_t bits, std::uint32_t iss = 1000, std::uint16_t mss = 1460,
                    std::uint16_t send_buffer_quarter = 16384, std::uint16_t receive_buffer_quarter = 16384) {
        w.u16(bits).u32(iss).u16(mss).u16(send_buffer_quarter).u16(receive_buffer_quarter);
        w.u8(7).u8(9).u8(3).u8(8).u8(199).u8(10);  // ws, IW-1, dupack, max rexmit, rto_min, time_wait
    }
    script& op(tf::op o) {
        w.u8(o);
        return *this;
    }
    // Segment with relative seq/ack (deltas) and no options.
    script& seg(unsigned flags, int seq_delta, int ack_delta, unsigned window, unsigned len, unsigned mode = 0) {
        op(tf::k_segment);
        w.u8(flags).u8(mode);
        if (mode & tf::kSeqAbsolute)
            w.u32(static_cast<std::uint32_t>(seq_delta));
        else
            w.i16(seq_delta);
        if (mode & tf::kAckAbsolute)
            w.u32(static_cast<std::uint32_t>(ack_delta));
        else
            w.i16(ack_delta);
        w.u16(window);
        if (mode & tf::kHasOptions) opts_pending = true;
        if (!opts_pending) w.u16(len);
        pending_len = len;
        return *this;
    }
    // Options for the segment just started with kHasOptions (then its payload length).
    script& options(unsigned bits, unsigned mss = 1460, unsigned ws = 7, std::uint32_t tsval = 1,
                    const std::vector<std::pair<int, unsigned>>& blocks = {}) {
        w.u8(bits | (static_cast<unsigned>(blocks.size()) << tf::kOptSackBlockShift));
        if (bits & tf::kOptMss) w.u16(mss);
        if (bits & tf::kOptWindowScale) w.u8(ws);
        if (bits & tf::kOptTimestamps) w.u32(tsval).u32(0);
        for (const auto& b : blocks) w.i16(b.first).u16(b.second);
        w.u16(pending_len);
        opts_pending = false;
        return *this;
    }
    script& time_next() {
        op(tf::k_time);
        w.u8(1).u16(0);
        return *this;
    }
    script& time_add(unsigned amount, unsigned shift) {
        op(tf::k_time);
        w.u8(shift << 1).u16(amount);
        return *this;
    }
    script& send(unsigned len, bool mark) {
        op(tf::k_send);
        w.u16(len).u8(mark ? 1 : 0);
        return *this;
    }
    script& consume(unsigned len) {
        op(tf::k_consume);
        w.u16(len);
        return *this;
    }
    script& cork(bool on) {
        op(tf::k_cork);
        w.u8(on ? 1 : 0);
        return *this;
    }
    bool opts_pending = false;
    unsigned pending_len = 0;
};

constexpr unsigned kSyn = net::tcp_flags::kSyn, kAck = net::tcp_flags::kAck, kFin = net::tcp_flags::kFin,
                   kRst = net::tcp_flags::kRst, kPsh = net::tcp_flags::kPsh;

void tcp_connection() {
    const char* t = "fuzz_tcp_connection";
    {  // Passive open with all options, in-order and out-of-order data (SACK), FIN, our data, close.
        script s(tf::kCfgSack);
        s.op(tf::k_listen);
        s.seg(kSyn, 5000, 0, 65535, 0, tf::kSeqAbsolute | tf::kAckAbsolute | tf::kHasOptions)
            .options(tf::kOptMss | tf::kOptWindowScale | tf::kOptSackPermitted | tf::kOptTimestamps);
        s.seg(kAck, 0, 0, 1024, 0);
        s.seg(kAck | kPsh, 0, 0, 1024, 300);
        s.seg(kAck, 600, 0, 1024, 200);   // a hole of 300
        s.seg(kAck, 1000, 0, 1024, 100);  // a second hole
        s.seg(kAck, 0, 0, 1024, 600);     // fills the first
        s.seg(kAck, 0, 0, 1024, 300);
        s.send(4000, true).send(2000, true);
        s.seg(kAck, 0, -3000, 1024, 0);
        s.seg(kAck, 0, 0, 1024, 0);
        s.seg(kAck | kFin, 0, 0, 1024, 50);
        s.op(tf::k_close);
        s.seg(kAck, 0, 0, 1024, 0);
        s.time_next();
        write(t, "passive-sack-ooo-fin", s.w.bytes);
    }
    {  // Active open, bulk data with FPDU boundaries, three duplicate ACKs, RTO, close.
        script s(tf::kCfgOneBoundary);
        s.op(tf::k_connect);
        s.seg(kSyn | kAck, 90000, 0, 8192, 0, tf::kSeqAbsolute | tf::kHasOptions).options(tf::kOptMss, 1000);
        for (int i = 0; i < 6; ++i) s.send(700, true);
        s.seg(kAck, 0, -4200 + 700, 8192, 0);
        s.seg(kAck, 0, -4200 + 700, 8192, 0);
        s.seg(kAck, 0, -4200 + 700, 8192, 0);
        s.seg(kAck, 0, -4200 + 700, 8192, 0);
        s.seg(kAck, 0, -1400, 8192, 0);
        s.time_next().time_next();
        s.seg(kAck, 0, 0, 8192, 0);
        s.op(tf::k_close);
        s.seg(kAck | kFin, 0, 0, 8192, 0);
        s.time_next();
        write(t, "active-dupacks-rto-close", s.w.bytes);
    }
    {  // Zero window from the peer: persist probes, then the window opens; owner-consumed receive.
        script s(tf::kCfgOwnerConsumes | tf::kCfgDelayedAck, 7, 536, 4096, 512);
        s.op(tf::k_connect);
        s.seg(kSyn | kAck, 1, 0, 0, 0, tf::kSeqAbsolute | tf::kHasOptions)
            .options(tf::kOptMss | tf::kOptWindowScale, 536, 2);
        s.send(3000, false);
        s.time_next().time_next().time_next();
        s.seg(kAck, 0, 0, 100, 0);
        s.seg(kAck | kPsh, 0, 0, 100, 1500);
        s.seg(kAck | kPsh, 0, 0, 100, 1000);
        s.consume(1000).consume(1500);
        s.time_add(500, 10);
        s.op(tf::k_abort);
        write(t, "zero-window-persist-consume", s.w.bytes);
    }
    {  // Simultaneous open, a RST in SYN-RECEIVED, listening again, a reused connection.
        script s(tf::kCfgAnyRemotePort | tf::kCfgNoWindowScaling);
        s.op(tf::k_connect);
        s.seg(kSyn, 777, 0, 4000, 0, tf::kSeqAbsolute);
        s.seg(kRst, 0, 0, 0, 0);
        s.op(tf::k_abort).op(tf::k_set_iss);
        s.w.u32(0xFFFFFF00u);
        s.op(tf::k_listen);
        s.seg(kSyn, 0xFFFFFFF0u, 0, 4000, 0, tf::kSeqAbsolute);
        s.seg(kAck, 0, 0, 4000, 0);
        s.cork(true).send(100, true).send(100, true).cork(false);
        s.seg(kAck | kFin, 0, 0, 4000, 10);
        s.op(tf::k_close);
        s.seg(kAck, 0, 0, 4000, 0);
        s.time_next();
        write(t, "simultaneous-rst-reuse", s.w.bytes);
    }
    {  // Simultaneous open with window scaling: a second SYN draws a (scaled) challenge ACK, then
        // the SYN-ACK is retransmitted with its unscaled, smaller window.
        script s(tf::kCfgSack, 1000, 1460, 16384, 53888);
        s.op(tf::k_connect);
        s.seg(kSyn, 2, 0, 514, 0, tf::kSeqAbsolute | tf::kAckAbsolute | tf::kHasOptions)
            .options(tf::kOptWindowScale, 1460, 7);
        s.seg(kSyn, 3, 0, 0, 0, tf::kSeqAbsolute);
        s.time_next();
        s.seg(kAck, 0, 0, 600, 0);
        write(t, "simultaneous-challenge-ack-synack-rexmit", s.w.bytes);
    }
}

// ---------------------------------------------------------------------------------------------
// The seeds' framings. Each input: flags byte, [options], u32 seed, stream.

#if RNIC_HAVE_FUZZ_SEED_IFT
void seed_ift() {
    const char* t = "fuzz_seed_ift";
    std::uint8_t hdr[ddp::kUntaggedHeaderSize];
    ddp::header tagged;
    tagged.tagged = true;
    tagged.opcode = ddp::opcode::rdma_write;
    tagged.stag = 0x1234;
    const std::size_t th = ddp::encode(tagged, hdr);
    bytes stream;
    ift::encode(hdr, th, pattern(100).data(), 100, stream);
    ift::encode(hdr, th, nullptr, 0, stream);
    ift::encode(nullptr, 0, pattern(7).data(), 7, stream);
    write(t, "three-frames", cat(tf::writer{}.u8(1).u32(1).bytes, stream));
    bytes bad = stream;
    bad[4 + th + 4 + 10] ^= 1;  // payload byte of the first frame: Payload CRC error
    write(t, "payload-crc-error-continue", cat(tf::writer{}.u8(0).u32(2).bytes, bad));
    write(t, "limits-min-header-14", cat(tf::writer{}.u8(3).u16(14).u16(18).u16(1000).u32(3).bytes, stream));
    bytes big;
    ift::encode(hdr, th, pattern(1400).data(), 1400, big);
    write(t, "large-frame", cat(tf::writer{}.u8(1).u32(4).bytes, big));
}
#endif

#if RNIC_HAVE_FUZZ_SEED_RDMATCP
void seed_rdmatcp() {
    const char* t = "fuzz_seed_rdmatcp";
    const std::uint64_t conn = 0x0123456789ABCDEFull;
    bytes stream;
    rdmatcp::header send;
    send.connection_id = conn;
    send.message_number = 1;
    send.end = false;
    rdmatcp::encode(send, pattern(8).data(), 8, pattern(50).data(), 50, stream);
    send.begin = false;
    send.end = true;
    send.data_offset = 50;
    rdmatcp::encode(send, nullptr, 0, pattern(33).data(), 33, stream);
    rdmatcp::header w;
    w.type = rdmatcp::message_type::rdma_write;
    w.connection_id = conn;
    w.message_number = 2;
    w.buffer_id = 9;
    w.rdma_length = 64;
    rdmatcp::encode(w, nullptr, 0, pattern(64).data(), 64, stream);
    rdmatcp::header rr;
    rr.type = rdmatcp::message_type::read_request;
    rr.connection_id = conn;
    rr.message_number = 3;
    rr.rdma_length = 4096;
    rdmatcp::encode(rr, pattern(4).data(), 4, nullptr, 0, stream);
    rdmatcp::header resp;
    resp.type = rdmatcp::message_type::read_response;
    resp.connection_id = conn;
    resp.message_number = 3;
    rdmatcp::encode(resp, nullptr, 0, pattern(21).data(), 21, stream);
    write(t, "five-segments", cat(tf::writer{}.u8(0).u32(1).bytes, stream));
    // Configured Connection ID, Recovery with the message-number window and the stream offset.
    write(t, "conn-id-window",
          cat(tf::writer{}
                  .u8(4 | 32 | 64)
                  .u32(static_cast<std::uint32_t>(conn))
                  .u32(static_cast<std::uint32_t>(conn >> 32))
                  .u32(0)
                  .u32(1)
                  .u8(16)
                  .u32(2)
                  .bytes,
              stream));
    // Recovery scanning words from the middle of a segment (the first 12 bytes lost).
    write(t, "scan-words-midstream",
          cat(tf::writer{}
                  .u8(4 | 8 | 32)
                  .u32(static_cast<std::uint32_t>(conn))
                  .u32(static_cast<std::uint32_t>(conn >> 32))
                  .u32(12)
                  .u32(3)
                  .bytes,
              bytes(stream.begin() + 12, stream.end())));
    rdmatcp::header res = send;
    res.reserved = 0x5A;
    res.begin = true;
    res.data_offset = 0;
    bytes reserved;
    rdmatcp::encode(res, nullptr, 0, pattern(3).data(), 3, reserved);
    write(t, "reserved-ignored", cat(tf::writer{}.u8(1).u32(4).bytes, reserved));
}
#endif

#if RNIC_HAVE_FUZZ_SEED_VITCP
void seed_vitcp() {
    const char* t = "fuzz_seed_vitcp";
    vitcp::local_parameters local;
    local.mtu = 9000;
    local.rdma_read_window = 16;
    local.crc = true;
    local.urgent_marker = true;
    vitcp::segment req;
    req.header.type = vitcp::segment_type::connect_request;
    req.ce = vitcp::make_request(local, text("client"), text("server"));
    req.crc = true;
    vitcp::segment acc;
    acc.header.type = vitcp::segment_type::connect_accept;
    acc.ce = vitcp::make_accept(*req.ce, local);
    acc.crc = true;
    bytes handshake = cat(vitcp::encode(req), vitcp::encode(acc));
    vitcp::segment send;
    send.header.type = vitcp::segment_type::send;
    send.header.immediate_valid = true;
    send.header.immediate_data = 0xFEEDFACE;
    send.payload = pattern(40);
    send.crc = true;
    vitcp::segment w;
    w.header.type = vitcp::segment_type::rdma_write;
    w.rdma = vitcp::rdma_header{0x1000, 0x22, 16};
    w.payload = pattern(16);
    w.crc = true;
    vitcp::segment nop;
    nop.header.type = vitcp::segment_type::nop;
    nop.crc = true;
    vitcp::segment rej;
    rej.header.type = vitcp::segment_type::connect_reject;
    rej.crc = true;
    const bytes with_crc =
        cat(cat(cat(cat(handshake, vitcp::encode(send)), vitcp::encode(w)), vitcp::encode(nop)), vitcp::encode(rej));
    write(t, "handshake-then-crc-segments", cat(tf::writer{}.u8(1).u32(1).bytes, with_crc));
    // Without the CRC: a request without options list end, a read request, a read response.
    vitcp::segment plain_req;
    plain_req.header.type = vitcp::segment_type::connect_request;
    plain_req.ce = vitcp::make_request(vitcp::local_parameters{}, text("a"), {});
    plain_req.ce->options.push_back({7, pattern(5)});
    plain_req.ce->end_of_options = false;
    vitcp::segment rr;
    rr.header.type = vitcp::segment_type::read_request;
    rr.rdma = vitcp::rdma_header{0x2000, 0x33, 4096};
    vitcp::segment resp;
    resp.header.type = vitcp::segment_type::read_response;
    resp.header.data_offset = 100;
    resp.payload = pattern(60);
    write(t, "no-crc-segments",
          cat(tf::writer{}.u8(0).u32(2).bytes,
              cat(cat(vitcp::encode(plain_req), vitcp::encode(rr)), vitcp::encode(resp))));
}
#endif

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
        return 2;
    }
    g_root = argv[1];
    mpa_request_reply();
    mpa_deframer();
    mpa_deframer_markers();
    ddp_header();
    ddp_terminate();
    rdmap_headers();
    tcp_frame();
    parse_ipv4();
    read_pcap();
    tcp_connection();
#if RNIC_HAVE_FUZZ_SEED_IFT
    seed_ift();
#endif
#if RNIC_HAVE_FUZZ_SEED_RDMATCP
    seed_rdmatcp();
#endif
#if RNIC_HAVE_FUZZ_SEED_VITCP
    seed_vitcp();
#endif
    return 0;
}
