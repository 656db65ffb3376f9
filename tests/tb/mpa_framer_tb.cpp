// mpa_framer through its sockets: ULPDUs in at ulpdu_tx_in, FPDUs out at fpdu_tx_out; stream bytes in
// at stream_rx_in, ULPDUs out at ulpdu_rx_out. For every framing it supports (MPA with and without
// Markers, with and without CRC, RFC 5044 §4; IFT, seed 001) the frames are compared bit for bit
// with the proto codecs; the same received stream cut into different chunks gives the same ULPDUs;
// CRC errors are detected, reported to the RDMAP layer (RFC 5044 §8 code 2) and stop the stream;
// the datapath's time is charged per FPDU; out-of-order placement finds FPDUs by their Markers.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <memory>
#include <numeric>
#include <random>

#include "core/stream.h"
#include "framing/framing_factory.h"
#include "framing/mpa_framer.h"
#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"
#include "proto/seeds/ift.h"
#include "proto/seeds/rdmatcp.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

namespace mpa = proto::mpa;
namespace ddp = proto::ddp;
namespace ift = proto::ift;
using bytes = std::vector<std::uint8_t>;
sc_core::sc_time ns(double v) {
    return sc_core::sc_time(v, sc_core::SC_NS);
}

constexpr std::uint32_t kConn = 3;

// The RDMA engine as the framer sees it: every ULPDU with its extensions' fields.
struct ulpdu_sink : sc_core::sc_module {
    struct item {
        sc_core::sc_time at;
        bytes data;
        stream_kind kind;
        bool already_placed;
        std::uint32_t fpdu_pos;
    };
    tlm_utils::simple_target_socket<ulpdu_sink> in;
    std::vector<item> items;
    bool refuse_out_of_order = false;
    explicit ulpdu_sink(const sc_core::sc_module_name& n) : sc_module(n), in("in") {
        in.register_b_transport(this, &ulpdu_sink::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
        const stream_ext* ext = get_stream_ext(gp);
        const placement_ext* where = find_ext<placement_ext>(gp);
        ASSERT_NE(where, nullptr) << "a ULPDU to the RDMA engine carries where its frame sat";
        items.push_back({sc_core::sc_time_stamp() + delay,
                         bytes(gp.get_data_ptr(), gp.get_data_ptr() + gp.get_data_length()), ext->kind,
                         where->already_placed, where->frame_pos});
        const bool refuse = refuse_out_of_order && ext->kind == stream_kind::out_of_order;
        gp.set_response_status(refuse ? tlm::TLM_GENERIC_ERROR_RESPONSE : tlm::TLM_OK_RESPONSE);
    }
    std::vector<bytes> ulpdus() const {
        std::vector<bytes> out;
        for (const item& i : items) out.push_back(i.data);
        return out;
    }
};

// The control processor's and the RDMA engine's event interfaces, recorded.
struct event_stubs : sc_core::sc_module, framer_events_if, rdma_llp_if {
    std::vector<std::uint32_t> startup_conns;
    std::vector<std::string> framing_errors;
    std::vector<std::uint8_t> llp_codes;
    explicit event_stubs(const sc_core::sc_module_name& n) : sc_module(n) {}
    void on_startup_bytes(std::uint32_t conn) override { startup_conns.push_back(conn); }
    void on_framing_error(std::uint32_t, const std::string& what) override { framing_errors.push_back(what); }
    void llp_error(std::uint32_t, std::uint8_t code, const sc_core::sc_time&) override { llp_codes.push_back(code); }
};

// Buffer memory's reassembly pool as the TCP engine's record sees it: nothing is held here (the
// framer only records placed frames), so any size will do.
struct no_pool : reassembly_pool_if {
    bool reserve_rx(std::uint64_t) override { return true; }
    void release_rx(std::uint64_t) override {}
    std::uint64_t rx_free() const override { return 1 << 20; }
    void charge(std::uint64_t, sc_core::sc_time&) override {}
};

struct framer_bench : sc_core::sc_module {
    std::unique_ptr<framing> frames;  // the device's framing (rnic_device makes it the same way)
    no_pool pool;
    reassembly placed;  // the TCP engine's out-of-order record, where the framer notes what it placed
    mpa_framer framer;
    tb_initiator rdma_tx, toe_rx;  // the RDMA engine's ULPDUs, the TCP engine's in-order stream
    tb_sink fpdus;                 // to the TCP engine's send stream
    ulpdu_sink ulpdus;             // to the RDMA engine
    event_stubs events;
    framer_bench(const sc_core::sc_module_name& n, const mpa_framer_params& p, const framing_params& f = {})
        : sc_module(n),
          frames(make_framing(f)),
          placed(pool),
          framer("framer", p, *frames),
          rdma_tx("rdma_tx"),
          toe_rx("toe_rx"),
          fpdus("fpdus"),
          ulpdus("ulpdus"),
          events("events") {
        rdma_tx.out.bind(framer.ulpdu_tx_in);
        toe_rx.out.bind(framer.stream_rx_in);
        framer.fpdu_tx_out.bind(fpdus.in);
        framer.ulpdu_rx_out.bind(ulpdus.in);
        framer.events_out.bind(events);
        framer.llp_error_out.bind(events);
        framer.reasm_out.bind(placed);
    }
    void full(bool markers, bool crc, std::size_t mulpdu = 1454) {
        mpa_settings s;
        s.tx_markers = s.rx_markers = markers;
        s.crc = crc;
        s.max_ulpdu = mulpdu;
        framer.ctl_in->full_operation(kConn, s, 0);
    }
    tlm::tlm_response_status send(const bytes& u, sc_core::sc_time& d, stream_kind kind = stream_kind::data) {
        stream_ext ext;
        ext.conn = kConn;
        ext.kind = kind;
        return send_stream(rdma_tx.out, ext, u.data(), u.size(), d);
    }
    sc_core::sc_time receive(const std::uint8_t* data, std::size_t len, sc_core::sc_time d = sc_core::SC_ZERO_TIME) {
        stream_ext ext;
        ext.conn = kConn;
        send_stream(toe_rx.out, ext, data, len, d);
        return d;
    }
    boost::json::object stats() const {
        boost::json::object o;
        framer.report_stats(o);
        return o;
    }
    std::uint64_t stat(const char* key) const { return stats()[key].to_number<std::uint64_t>(); }
};

// ulpdu_tx_in is a multi-passthrough socket: its initiators reach it only once elaboration has
// completed the binding, so a test that transmits starts the kernel (at time 0) first.
void elaborate() {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
}

// A tagged RDMA Write ULPDU (DDP header + payload) of `payload` bytes.
bytes write_ulpdu(std::size_t payload, std::uint8_t seed) {
    ddp::header h;
    h.tagged = true;
    h.opcode = ddp::opcode::rdma_write;
    h.stag = 0x100 + seed;
    h.tagged_offset = 4096u * seed;
    bytes u(ddp::kTaggedHeaderSize + payload);
    ddp::encode(h, u.data());
    std::iota(u.begin() + ddp::kTaggedHeaderSize, u.end(), seed);
    return u;
}

// ULPDUs whose FPDUs straddle several Markers (512-byte interval) and need every PAD length.
std::vector<bytes> sample_ulpdus() {
    std::vector<bytes> v;
    const std::size_t payloads[] = {0, 1, 2, 3, 100, 497, 498, 1000, 1440, 33};
    std::uint8_t seed = 1;
    for (std::size_t p : payloads) v.push_back(write_ulpdu(p, seed++));
    return v;
}

// What the codec makes of the ULPDUs as one stream from marker position 0.
bytes codec_stream(const std::vector<bytes>& ulpdus, bool markers, bool crc) {
    bytes stream;
    std::uint32_t pos = 0;
    for (const bytes& u : ulpdus) {
        bytes f;
        mpa::build_fpdu(u.data(), u.size(), crc, markers, pos, f);
        pos += static_cast<std::uint32_t>(f.size());
        stream.insert(stream.end(), f.begin(), f.end());
    }
    return stream;
}

TEST(MpaFramerTb, FpdusMatchTheCodecBitForBitForEveryMpaFraming) {
    const auto ulpdus = sample_ulpdus();
    std::vector<std::unique_ptr<framer_bench>> benches;
    for (int i = 0; i < 4; ++i) {
        benches.push_back(std::make_unique<framer_bench>(("b" + std::to_string(i)).c_str(), mpa_framer_params{}));
    }
    elaborate();
    for (const bool markers : {false, true}) {
        for (const bool crc : {false, true}) {
            SCOPED_TRACE(std::string("markers ") + (markers ? "on" : "off") + ", CRC " + (crc ? "on" : "off"));
            framer_bench& b = *benches[(markers ? 2 : 0) + (crc ? 1 : 0)];
            b.full(markers, crc);
            bytes sent;
            for (const bytes& u : ulpdus) {
                sc_core::sc_time d = sc_core::SC_ZERO_TIME;
                ASSERT_EQ(b.send(u, d), tlm::TLM_OK_RESPONSE);
            }
            ASSERT_EQ(b.fpdus.items.size(), ulpdus.size());
            for (const auto& it : b.fpdus.items) {
                EXPECT_EQ(it.conn, kConn);
                sent.insert(sent.end(), it.data.begin(), it.data.end());
            }
            EXPECT_EQ(sent, codec_stream(ulpdus, markers, crc));
            // And the codec's deframer gets the ULPDUs back, CRCs checked when negotiated.
            std::vector<bytes> back;
            mpa::deframer::config cfg;
            cfg.markers = markers;
            cfg.crc = crc;
            mpa::deframer d(cfg, [&](const std::uint8_t* p, std::size_t n) { back.emplace_back(p, p + n); });
            EXPECT_EQ(d.feed(sent.data(), sent.size()), mpa::deframe_error::none) << d.error_detail();
            EXPECT_EQ(back, ulpdus);
            EXPECT_EQ(b.stat("tx_fpdus"), ulpdus.size());
            EXPECT_EQ(b.stat("tx_fpdu_bytes"), sent.size());
        }
    }
}

TEST(MpaFramerTb, CrcOffStillCarriesAZeroCrcField) {
    framer_bench b("b", mpa_framer_params{});
    elaborate();
    b.full(false, false);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    b.send(write_ulpdu(2, 9), d);
    const bytes& f = b.fpdus.items.at(0).data;
    // 2 + 16 bytes, no PAD (18 % 4 = 2 -> 2 bytes PAD), then 4 CRC bytes of zero (RFC 5044 §4.1).
    ASSERT_EQ(f.size(), 2u + 16 + 2 + 4);
    EXPECT_EQ(f[0], 0);
    EXPECT_EQ(f[1], 16);
    EXPECT_EQ(bytes(f.end() - 4, f.end()), bytes(4, 0));
}

TEST(MpaFramerTb, TransmitChargesTheDatapathBeatsPlusOneCyclePerFpdu) {
    framer_bench b("b", mpa_framer_params{});  // 16 bytes per cycle at 500 MHz, 1 cycle per FPDU
    elaborate();
    b.full(false, true);
    sc_core::sc_time d1 = sc_core::SC_ZERO_TIME, d2 = sc_core::SC_ZERO_TIME;
    b.send(write_ulpdu(86, 1), d1);  // ULPDU 100: 2 + 100 + 2 PAD + 4 CRC = 108 bytes, 7 beats
    EXPECT_EQ(d1, ns(16));
    EXPECT_EQ(b.fpdus.items[0].at, ns(16));
    b.send(write_ulpdu(86, 2), d2);  // behind the first in the one transmit datapath
    EXPECT_EQ(d2, ns(32));
    EXPECT_EQ(b.stat("tx_datapath_beats"), 14u);
}

TEST(MpaFramerTb, StartupBytesPassUnframedAndUlpdusWaitForFullOperation) {
    framer_bench b("b", mpa_framer_params{});
    elaborate();
    const bytes request = {'M', 'P', 'A', ' ', 'I', 'D'};
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    // Before full operation a ULPDU is refused and raw bytes go through as they are (RFC 5044 §7).
    EXPECT_EQ(b.send(write_ulpdu(10, 1), d), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(b.send(request, d, stream_kind::raw), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(b.fpdus.items.size(), 1u);
    EXPECT_EQ(b.fpdus.items[0].data, request);
    // Received start-up bytes are kept for the firmware, which is told.
    b.receive(request.data(), request.size());
    EXPECT_EQ(b.framer.ctl_in->startup_bytes(kConn), request);
    EXPECT_EQ(b.events.startup_conns, std::vector<std::uint32_t>{kConn});
    // In full operation: raw bytes refused, ULPDUs above MULPDU refused.
    b.full(false, true, 200);
    EXPECT_EQ(b.send(request, d, stream_kind::raw), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(b.send(write_ulpdu(187, 1), d), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(b.send(write_ulpdu(186, 1), d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.stat("tx_startup_bytes"), request.size());
}

TEST(MpaFramerTb, StartupBytesBeyondTheReplyAreDeframedAtFullOperation) {
    framer_bench b("b", mpa_framer_params{});
    const bytes reply(20, 0xee);  // stands for the MPA Reply the firmware consumes
    const auto ulpdus = sample_ulpdus();
    bytes wire = reply;
    const bytes stream = codec_stream(ulpdus, true, true);
    wire.insert(wire.end(), stream.begin(), stream.begin() + 700);  // the peer's first FPDUs right behind it
    b.receive(wire.data(), wire.size());
    EXPECT_TRUE(b.ulpdus.items.empty());
    b.framer.ctl_in->full_operation(kConn, mpa_settings{true, true, true, 1454}, reply.size());
    b.receive(stream.data() + 700, stream.size() - 700);
    EXPECT_EQ(b.ulpdus.ulpdus(), ulpdus);
}

// Chunkings of one stream: whole, byte by byte, 7 bytes, and seeded random lengths.
std::vector<std::vector<std::size_t>> chunkings(std::size_t total) {
    std::vector<std::vector<std::size_t>> all;
    all.push_back({total});
    all.push_back(std::vector<std::size_t>(total, 1));
    std::vector<std::size_t> sevens(total / 7, 7);
    if (total % 7 != 0) sevens.push_back(total % 7);
    all.push_back(sevens);
    std::mt19937 rng(5044);
    std::vector<std::size_t> random;
    for (std::size_t left = total; left > 0;) {
        const std::size_t n = std::min<std::size_t>(left, 1 + rng() % 1600);
        random.push_back(n);
        left -= n;
    }
    all.push_back(random);
    return all;
}

TEST(MpaFramerTb, SplitAndCoalescedInputGiveTheSameUlpdusForEveryMpaFraming) {
    const auto ulpdus = sample_ulpdus();
    int n = 0;
    for (const bool markers : {false, true}) {
        for (const bool crc : {false, true}) {
            const bytes stream = codec_stream(ulpdus, markers, crc);
            for (const auto& chunks : chunkings(stream.size())) {
                SCOPED_TRACE("markers " + std::to_string(markers) + " crc " + std::to_string(crc) + ", " +
                             std::to_string(chunks.size()) + " chunks");
                framer_bench b(("b" + std::to_string(n++)).c_str(), mpa_framer_params{});
                b.full(markers, crc);
                std::size_t at = 0;
                for (std::size_t c : chunks) {
                    b.receive(stream.data() + at, c);
                    at += c;
                }
                EXPECT_EQ(b.ulpdus.ulpdus(), ulpdus);
                EXPECT_EQ(b.stat("rx_fpdus"), ulpdus.size());
                EXPECT_EQ(b.stat("crc_errors"), 0u);
            }
        }
    }
}

TEST(MpaFramerTb, CrcErrorIsDetectedReportedAndEndsTheStream) {
    framer_bench b("b", mpa_framer_params{});
    b.full(true, true);
    const auto ulpdus = sample_ulpdus();
    bytes stream = codec_stream(ulpdus, true, true);
    // The last byte of the second FPDU is its CRC's last byte.
    bytes first;
    mpa::build_fpdu(ulpdus[0].data(), ulpdus[0].size(), true, true, 0, first);
    const std::size_t second_end =
        first.size() + mpa::fpdu_wire_length(ulpdus[1].size(), true, static_cast<std::uint32_t>(first.size()));
    stream[second_end - 1] ^= 0x01;
    b.receive(stream.data(), stream.size());
    ASSERT_EQ(b.ulpdus.items.size(), 1u);  // the first FPDU only
    EXPECT_EQ(b.ulpdus.items[0].data, ulpdus[0]);
    EXPECT_EQ(b.stat("crc_errors"), 1u);
    EXPECT_EQ(b.stat("framing_errors"), 0u);
    // RFC 5044 §8: the RDMAP layer is told (code 2, CRC error) and the firmware sees the error.
    EXPECT_EQ(b.events.llp_codes, std::vector<std::uint8_t>{2});
    EXPECT_EQ(b.events.framing_errors.size(), 1u);
    // Nothing after the bad FPDU is delivered.
    const bytes more = codec_stream({write_ulpdu(10, 1)}, false, true);
    b.receive(more.data(), more.size());
    EXPECT_EQ(b.ulpdus.items.size(), 1u);
    EXPECT_EQ(b.stat("rx_bytes_dropped_after_error"), more.size());
}

TEST(MpaFramerTb, CrcOffDoesNotCheckTheCrcField) {
    framer_bench b("b", mpa_framer_params{});
    b.full(false, false);
    bytes stream = codec_stream({write_ulpdu(20, 1)}, false, false);
    stream.back() = 0x5a;  // not zero, not a CRC: ignored without C (RFC 5044 §7.1.1)
    b.receive(stream.data(), stream.size());
    EXPECT_EQ(b.ulpdus.items.size(), 1u);
    EXPECT_EQ(b.stat("crc_errors"), 0u);
}

TEST(MpaFramerTb, BadMarkerIsAFramingErrorWithCode3) {
    framer_bench b("b", mpa_framer_params{});
    b.full(true, true);
    const auto ulpdus = sample_ulpdus();
    bytes stream = codec_stream(ulpdus, true, true);
    stream[512 + 3] ^= 0x40;  // FPDUPTR of the Marker at 512
    b.receive(stream.data(), stream.size());
    EXPECT_LT(b.ulpdus.items.size(), ulpdus.size());
    EXPECT_EQ(b.stat("crc_errors") + b.stat("framing_errors"), 1u);
    ASSERT_EQ(b.events.llp_codes.size(), 1u);
}

TEST(MpaFramerTb, ReceiveChargesTheReceiveDatapathPerFpdu) {
    framer_bench b("b", mpa_framer_params{});
    b.full(false, true);
    const bytes stream = codec_stream({write_ulpdu(86, 1), write_ulpdu(86, 2)}, false, true);
    // Two 108-byte FPDUs: 8 cycles of 2 ns each, one after the other.
    // The call returns when its last ULPDU has been handed on (behind the RDMA engine: placed in host
    // memory), for the TCP engine's bound on placements still on the bus (rnic.tcp.rx_placement_backlog).
    EXPECT_EQ(b.receive(stream.data(), stream.size()), ns(32));
    ASSERT_EQ(b.ulpdus.items.size(), 2u);
    EXPECT_EQ(b.ulpdus.items[0].at, ns(16));
    EXPECT_EQ(b.ulpdus.items[1].at, ns(32));
    EXPECT_EQ(b.stat("rx_datapath_beats"), 14u);
}

// ---- IFT (seed 001) ----------------------------------------------------------------------------

framing_params ift_params() {
    framing_params p;
    p.kind = framing_kind::ift;
    return p;
}

TEST(MpaFramerTb, IftFramesMatchTheCodecBitForBit) {
    framer_bench b("b", mpa_framer_params{}, ift_params());
    elaborate();
    b.full(true, false, 1454);  // IFT ignores both: no Markers, CRCs always (seed 001 §3.1, §5.3)
    // 12 bytes of IFT overhead where MPA's MULPDU allowed for 6 + PAD.
    EXPECT_EQ(b.framer.ctl_in->ulpdu_limit(kConn), 1448u);
    std::vector<bytes> ulpdus;
    for (const bytes& u : sample_ulpdus()) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        if (u.size() > 1448) {
            EXPECT_EQ(b.send(u, d), tlm::TLM_GENERIC_ERROR_RESPONSE);  // fits MPA's MULPDU, not IFT's
            continue;
        }
        ASSERT_EQ(b.send(u, d), tlm::TLM_OK_RESPONSE);
        ulpdus.push_back(u);
    }
    ASSERT_EQ(ulpdus.size(), sample_ulpdus().size() - 1);
    ASSERT_EQ(b.fpdus.items.size(), ulpdus.size());
    for (std::size_t i = 0; i < ulpdus.size(); ++i) {
        const bytes& u = ulpdus[i];
        bytes want;
        ASSERT_TRUE(ift::encode(u.data(), ddp::kTaggedHeaderSize, u.data() + ddp::kTaggedHeaderSize,
                                u.size() - ddp::kTaggedHeaderSize, want));
        EXPECT_EQ(b.fpdus.items[i].data, want);
        std::string error;
        const auto f = ift::decode(b.fpdus.items[i].data.data(), b.fpdus.items[i].data.size(), &error);
        ASSERT_TRUE(f) << error;
        EXPECT_EQ(f->header, bytes(u.begin(), u.begin() + ddp::kTaggedHeaderSize));
        EXPECT_EQ(f->payload, bytes(u.begin() + ddp::kTaggedHeaderSize, u.end()));
    }
}

bytes ift_stream(const std::vector<bytes>& ulpdus) {
    bytes s;
    for (const bytes& u : ulpdus) {
        ift::encode(u.data(), ddp::kTaggedHeaderSize, u.data() + ddp::kTaggedHeaderSize,
                    u.size() - ddp::kTaggedHeaderSize, s);
    }
    return s;
}

TEST(MpaFramerTb, IftSplitAndCoalescedInputGiveTheSameUlpdus) {
    const auto ulpdus = sample_ulpdus();
    const bytes stream = ift_stream(ulpdus);
    int n = 0;
    for (const auto& chunks : chunkings(stream.size())) {
        framer_bench b(("b" + std::to_string(n++)).c_str(), mpa_framer_params{}, ift_params());
        b.full(false, true);
        std::size_t at = 0;
        for (std::size_t c : chunks) {
            b.receive(stream.data() + at, c);
            at += c;
        }
        EXPECT_EQ(b.ulpdus.ulpdus(), ulpdus) << chunks.size() << " chunks";
    }
}

TEST(MpaFramerTb, IftCrcErrorsAreDetectedAndReported) {
    const auto ulpdus = sample_ulpdus();
    const bytes good = ift_stream(ulpdus);
    const std::size_t second = ift::frame_length_at(good.data(), good.size());
    // A flipped DDP header byte (Header CRC) and a flipped payload byte (Payload CRC), each in the
    // second frame (payload 1 byte: header 14 at +4, Header CRC, then the payload).
    const std::size_t header_byte = second + 4 + 5;
    const std::size_t payload_byte = second + 4 + ddp::kTaggedHeaderSize + 4;
    int n = 0;
    for (const std::size_t at : {header_byte, payload_byte}) {
        framer_bench b(("b" + std::to_string(n++)).c_str(), mpa_framer_params{}, ift_params());
        b.full(false, true);
        bytes stream = good;
        stream[at] ^= 0x80;
        b.receive(stream.data(), stream.size());
        EXPECT_EQ(b.ulpdus.items.size(), 1u);
        EXPECT_EQ(b.stat("crc_errors"), 1u);
        EXPECT_EQ(b.events.llp_codes, std::vector<std::uint8_t>{2});
        EXPECT_EQ(b.events.framing_errors.size(), 1u);
    }
}

// ---- out-of-order placement ---------------------------------------------------------------------

TEST(MpaFramerTb, MarkersLocateFpdusInAnOutOfOrderSegmentAndDeliveryStaysInOrder) {
    mpa_framer_params p;
    p.path = rx_path::markers;
    framer_bench b("b", p);
    b.full(true, true);
    const auto ulpdus = sample_ulpdus();
    const bytes stream = codec_stream(ulpdus, true, true);
    // A segment starting in the middle of the stream (not at an FPDU): its Markers point back at
    // the FPDU each belongs to (RFC 5044 §4.3); whole FPDUs from the first one located are placed.
    const std::size_t seg = 1200, seg_len = stream.size() - seg;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    const std::size_t placed = b.framer.ooo_in->place_out_of_order(kConn, seg, stream.data() + seg, seg_len, d);
    EXPECT_GT(placed, 0u);
    EXPECT_GT(d, sc_core::SC_ZERO_TIME);
    const std::size_t n_placed = b.ulpdus.items.size();
    ASSERT_GT(n_placed, 0u);
    for (const auto& it : b.ulpdus.items) EXPECT_EQ(it.kind, stream_kind::out_of_order);
    // They are the last ULPDUs of the stream, in order.
    EXPECT_EQ(b.ulpdus.items.back().data, ulpdus.back());
    EXPECT_EQ(b.stat("ooo_fpdus_placed"), n_placed);
    EXPECT_EQ(b.placed.placed_pending(kConn), placed);
    // In order, every ULPDU is delivered once more, those placed marked as such (RFC 5041 §5).
    b.receive(stream.data(), stream.size());
    ASSERT_EQ(b.ulpdus.items.size(), n_placed + ulpdus.size());
    std::size_t already = 0;
    for (std::size_t i = 0; i < ulpdus.size(); ++i) {
        const auto& it = b.ulpdus.items[n_placed + i];
        EXPECT_EQ(it.data, ulpdus[i]);
        EXPECT_EQ(it.kind, stream_kind::data);
        already += it.already_placed;
    }
    EXPECT_EQ(already, n_placed);
    EXPECT_EQ(b.placed.placed_pending(kConn), 0u);
    EXPECT_EQ(b.stat("in_order_already_placed"), n_placed);
}

TEST(MpaFramerTb, AlignedPathRejectsASegmentThatDoesNotStartWithAnFpdu) {
    mpa_framer_params p;
    p.path = rx_path::aligned;
    framer_bench b("b", p);
    b.full(false, true);
    const bytes stream = codec_stream(sample_ulpdus(), false, true);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(b.framer.ooo_in->place_out_of_order(kConn, 5, stream.data() + 5, 600, d), 0u);
    EXPECT_EQ(b.stat("ooo_false_candidates"), 1u);
    EXPECT_TRUE(b.ulpdus.items.empty());
    // One the RDMA engine refuses is counted and not recorded as placed.
    b.ulpdus.refuse_out_of_order = true;
    EXPECT_EQ(b.framer.ooo_in->place_out_of_order(kConn, 0, stream.data(), stream.size(), d), 0u);
    EXPECT_EQ(b.stat("ooo_refused_by_rdma"), sample_ulpdus().size());
    EXPECT_EQ(b.placed.placed_pending(kConn), 0u);
}

TEST(MpaFramerTb, OutOfOrderPlacementChargesTheReceiveDatapathNotTheTransmitOne) {
    mpa_framer_params p;
    p.path = rx_path::aligned;
    framer_bench b("b", p);
    elaborate();
    b.full(false, true);
    // Twenty 1008-byte FPDUs keep the transmit datapath busy for 20 x 64 cycles = 2560 ns.
    for (int i = 0; i < 20; ++i) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        ASSERT_EQ(b.send(write_ulpdu(986, 1), d), tlm::TLM_OK_RESPONSE);
    }
    // An out-of-order segment holding one 108-byte FPDU is checked on the receive side's CRC unit
    // (8 cycles); the transmit side's backlog has nothing to do with it.
    const bytes stream = codec_stream({write_ulpdu(86, 1), write_ulpdu(86, 2)}, false, true);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(b.framer.ooo_in->place_out_of_order(kConn, 108, stream.data() + 108, 108, d), 108u);
    EXPECT_EQ(d, ns(16));
    // The in-order FPDUs then queue behind that check in the same receive datapath.
    b.receive(stream.data(), stream.size());
    ASSERT_EQ(b.ulpdus.items.size(), 3u);
    EXPECT_EQ(b.ulpdus.items[1].at, ns(32));
    EXPECT_EQ(b.ulpdus.items[2].at, ns(48));
    EXPECT_TRUE(b.ulpdus.items[2].already_placed);
}

TEST(MpaFramerTb, BufferingPathPlacesNothingEarly) {
    framer_bench b("b", mpa_framer_params{});  // rx_path::buffering
    b.full(true, true);
    const bytes stream = codec_stream(sample_ulpdus(), true, true);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(b.framer.ooo_in->place_out_of_order(kConn, 0, stream.data(), stream.size(), d), 0u);
    EXPECT_EQ(d, sc_core::SC_ZERO_TIME);
    EXPECT_TRUE(b.ulpdus.items.empty());
}

// ---- RDMA/TCP (seed 000) ------------------------------------------------------------------------

framing_params rdmatcp_params(std::uint64_t seed) {
    framing_params p;
    p.kind = framing_kind::rdmatcp;
    p.seed = seed;
    return p;
}

// Two framers (the two NICs): a's ULPDUs become seed segments on a's send stream, b deframes them.
TEST(MpaFramerTb, RdmaTcpSegmentsGoThroughTheFramerAndBack) {
    namespace rt = proto::rdmatcp;
    framer_bench a("a", mpa_framer_params{}, rdmatcp_params(1));
    framer_bench b("b", mpa_framer_params{}, rdmatcp_params(2));
    elaborate();
    a.full(true, false, 1454);  // RDMA/TCP ignores both: no Markers, the CRC always (seed 000 §3.4)
    b.full(true, false, 1454);
    EXPECT_EQ(a.framer.ctl_in->ulpdu_limit(kConn), 1430u);  // 24 bytes more per frame than MPA's
    std::vector<bytes> sent;
    for (const bytes& u : sample_ulpdus()) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        if (u.size() > 1430) {
            EXPECT_EQ(a.send(u, d), tlm::TLM_GENERIC_ERROR_RESPONSE);  // fits MPA's MULPDU only
            continue;
        }
        ASSERT_EQ(a.send(u, d), tlm::TLM_OK_RESPONSE);
        sent.push_back(u);
    }
    // An RFC 7306 Atomic Request: no seed type carries it, the framer refuses it and counts it.
    ddp::header h;
    h.opcode = ddp::opcode::atomic_request;
    h.queue = ddp::kQueueReadRequest;
    bytes atomic(h.size() + ddp::kAtomicRequestSize);
    ddp::encode(h, atomic.data());
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(a.send(atomic, d), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(a.stat("tx_ulpdus_refused_by_framing"), 1u);
    ASSERT_EQ(a.fpdus.items.size(), sent.size());
    bytes stream;
    std::uint64_t id = 0;
    for (std::size_t i = 0; i < sent.size(); ++i) {
        const bytes& wire = a.fpdus.items[i].data;
        std::string error;
        const auto v = rt::parse(wire.data(), wire.size(), &error);
        ASSERT_TRUE(v) << error;
        EXPECT_EQ(v->header.type, rt::message_type::rdma_write);
        EXPECT_EQ(v->payload_len, sent[i].size() - ddp::kTaggedHeaderSize);
        EXPECT_LE(wire.size(), 1460u);  // one frame per TCP segment at EMSS 1460 (§2)
        if (i == 0) id = v->header.connection_id;
        EXPECT_EQ(v->header.connection_id, id);
        stream.insert(stream.end(), wire.begin(), wire.end());
    }
    for (std::size_t at = 0; at < stream.size(); at += 333)
        b.receive(stream.data() + at, std::min<std::size_t>(333, stream.size() - at));
    EXPECT_EQ(b.ulpdus.ulpdus(), sent);
    EXPECT_EQ(b.stat("crc_errors") + b.stat("framing_errors"), 0u);
    EXPECT_TRUE(b.events.llp_codes.empty());
    // A damaged segment: the CRC-32 catches it, reported as RFC 5044 §8 code 2 (a CRC error).
    bytes bad = a.fpdus.items[0].data;
    bad[40] ^= 1;
    b.receive(bad.data(), bad.size());
    EXPECT_EQ(b.stat("crc_errors"), 1u);
    ASSERT_EQ(b.events.llp_codes.size(), 1u);
    EXPECT_EQ(b.events.llp_codes[0], 2u);
}

TEST(MpaFramerTb, RdmaTcpAlignedPathPlacesCheckedSegmentsAndCountsFalseCandidates) {
    framer_bench a("a", mpa_framer_params{}, rdmatcp_params(1));
    mpa_framer_params p;
    p.path = rx_path::aligned;
    framer_bench b("b", p, rdmatcp_params(2));
    elaborate();
    a.full(false, true);
    b.full(false, true);
    std::vector<bytes> sent;
    for (std::uint8_t i = 1; i <= 4; ++i) {
        sent.push_back(write_ulpdu(1000, i));
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        ASSERT_EQ(a.send(sent.back(), d), tlm::TLM_OK_RESPONSE);
    }
    std::vector<std::uint64_t> at = {0};
    bytes stream;
    for (const auto& f : a.fpdus.items) {
        stream.insert(stream.end(), f.data.begin(), f.data.end());
        at.push_back(stream.size());
    }
    b.receive(stream.data(), at[1]);  // the first segment in order: b learns the Connection ID
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    // The second is lost; the third arrives: aligned, checked, placed (§5).
    EXPECT_EQ(b.framer.ooo_in->place_out_of_order(kConn, at[2], stream.data() + at[2], at[3] - at[2], d),
              at[3] - at[2]);
    EXPECT_EQ(b.stat("ooo_fpdus_placed"), 1u);
    // The fourth re-cut by a middlebox: its TCP segment starts 8 bytes in, a false candidate.
    EXPECT_EQ(b.framer.ooo_in->place_out_of_order(kConn, at[3] + 8, stream.data() + at[3] + 8, at[4] - at[3] - 8, d),
              0u);
    EXPECT_EQ(b.stat("ooo_false_candidates"), 1u);
    // The hole fills: everything is delivered in order, the third marked as already placed.
    b.receive(stream.data() + at[1], stream.size() - at[1]);
    EXPECT_EQ(b.ulpdus.ulpdus(), (std::vector<bytes>{sent[0], sent[2], sent[1], sent[2], sent[3]}));
    EXPECT_EQ(b.stat("in_order_already_placed"), 1u);
    EXPECT_EQ(b.stat("framing_errors"), 0u);
}

}  // namespace
}  // namespace rnic::test
