// rtl/ift_rx_header_check.sv, Verilated (models/rtl/CMakeLists.txt), against the IFT codec of
// models/proto/seeds (seed 001, draft-williams-iwarp-ift-00 §3.1, §5.1): frames built by
// proto::ift::encode pass with the codec's Header CRC, sizes and wire length; every single-bit
// flip of the size fields, the DDP header or the Header CRC fails, as the codec's Deframer says;
// flips in the payload leave the header good (the Payload CRC is not this block's). Random word
// fill (first words shorter than the size fields, idle cycles), a stream delineated by the block's
// own frame_len, and an abandoned header. Both bus widths (8 and 16 bytes).
// Plain calls (no sc_start), like rtl_blocks_test.cpp: the model is clocked here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "Vift_rx_header_check_w16.h"
#include "Vift_rx_header_check_w8.h"
#include "proto/bytes.h"
#include "proto/crc32c.h"
#include "proto/seeds/ift.h"

namespace {

namespace ift = rnic::proto::ift;
using bytes = std::vector<std::uint8_t>;

bytes random_bytes(std::mt19937& rng, std::size_t n) {
    bytes b(n);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    return b;
}

bytes make_frame(std::mt19937& rng, std::size_t header_size, std::size_t payload_size) {
    bytes out;
    const bytes h = random_bytes(rng, header_size), p = random_bytes(rng, payload_size);
    EXPECT_TRUE(ift::encode(h.data(), h.size(), p.data(), p.size(), out));
    return out;
}

// What the block reports for one frame.
struct verdict {
    int dones = 0;  // done pulses seen
    bool good = false, bad = false;
    std::uint32_t crc_calc = 0, crc_recv = 0;
    std::uint32_t header_size = 0, payload_size = 0, frame_len = 0;
    std::uint64_t cycle = 0;  // cycles from the first word until done was seen
};

// Bus-width specifics: the model class (Verilator's C++ output) and how a word is put on its data
// port (a QData up to 64 bits, 32-bit words of a VlWide above; lane 0 is the low byte).
template <int W>
struct width;
template <>
struct width<8> {
    using model_t = Vift_rx_header_check_w8;
    static void put(QData& port, const std::uint8_t* b, std::size_t n) {
        QData v = 0;
        for (std::size_t i = 0; i < n; ++i) v |= QData{b[i]} << (8 * i);
        port = v;
    }
};
template <>
struct width<16> {
    using model_t = Vift_rx_header_check_w16;
    static void put(VlWide<4>& port, const std::uint8_t* b, std::size_t n) {
        std::uint8_t w[16] = {};
        std::copy(b, b + n, w);
        for (int k = 0; k < 4; ++k) port[k] = rnic::proto::get_le32(w + 4 * k);
    }
};

// The block, clocked by hand.
class header_checker {
public:
    virtual ~header_checker() = default;
    virtual unsigned bytes() const = 0;
    // Next clock: a word of `n` bytes (lanes 0..n-1) or, with n == 0 and !valid, an idle cycle.
    virtual void cycle(bool valid, const std::uint8_t* b, std::size_t n, bool sof) = 0;
    virtual bool done() const = 0;
    virtual bool busy() const = 0;
    virtual verdict read() const = 0;
};

template <int W>
class checker final : public header_checker {
    using types = width<W>;

public:
    explicit checker(const char* name) : m_(new typename types::model_t(name)) {
        for (int level : {1, 0, 1}) {  // asynchronous reset: a falling edge, then release
            m_->rst_n = level;
            m_->eval();
        }
    }
    unsigned bytes() const override { return W; }
    void cycle(bool valid, const std::uint8_t* b, std::size_t n, bool sof) override {
        m_->in_valid = valid;
        types::put(m_->in_data, b, n);
        // One enable bit per byte lane: the port is 8, 16 or 32 bits wide with W.
        const std::uint32_t enables = n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1u;
        m_->in_be = static_cast<std::remove_reference_t<decltype(m_->in_be)>>(enables);
        m_->in_sof = sof;
        m_->clk = 0;
        m_->eval();
        m_->clk = 1;
        m_->eval();
    }
    bool done() const override { return m_->done; }
    bool busy() const override { return m_->busy; }
    verdict read() const override {
        verdict v;
        v.good = m_->hdr_good;
        v.bad = m_->hdr_bad;
        v.crc_calc = m_->crc_calc;
        v.crc_recv = m_->crc_recv;
        v.header_size = m_->header_size;
        v.payload_size = m_->payload_size;
        v.frame_len = m_->frame_len;
        return v;
    }

private:
    std::unique_ptr<typename types::model_t> m_;
};

// One model per width per process, never destroyed (Verilator's thread context is a static of
// its own and must outlive the models), as in rtl_blocks_test.cpp.
header_checker& dut(unsigned w) {
    static header_checker* w8 = nullptr;
    static header_checker* w16 = nullptr;
    if (w == 8) {
        if (w8 == nullptr) w8 = new checker<8>("ift_hdr_w8");
        return *w8;
    }
    if (w16 == nullptr) w16 = new checker<16>("ift_hdr_w16");
    return *w16;
}

// How many bytes the next word carries: full words (what a bus delivers) or a random fill.
using filler = std::function<std::size_t(std::size_t left)>;

// Streams `len` bytes as one frame (in_sof on the first word) until done, or until the bytes run
// out (then a few idle cycles more). With `idle` the source pauses at random.
verdict check_frame(header_checker& d, const std::uint8_t* p, std::size_t len, const filler& fill,
                    std::mt19937* idle = nullptr) {
    verdict v;
    std::size_t at = 0;
    bool first = true;
    while (v.cycle < 2 * len + 64) {
        if (idle != nullptr && !first && (*idle)() % 4 == 0) {
            d.cycle(false, nullptr, 0, false);
        } else if (at < len) {
            const std::size_t n = std::min<std::size_t>(fill(len - at), len - at);
            d.cycle(true, p + at, n, first);
            at += n;
            first = false;
        } else {
            d.cycle(false, nullptr, 0, false);
        }
        ++v.cycle;
        if (d.done()) {
            const std::uint64_t c = v.cycle;
            const int dones = v.dones + 1;
            v = d.read();
            v.cycle = c;
            v.dones = dones;
            // One more cycle: done is a pulse, and stays quiet while the payload streams by.
            d.cycle(false, nullptr, 0, false);
            if (d.done()) ++v.dones;
            return v;
        }
        if (at >= len && v.cycle > (len + d.bytes() - 1) / d.bytes() + 8) break;
    }
    return v;
}

// The codec's answers for a frame at the start of `p` (at least 8 + header_size bytes).
struct expected {
    std::size_t header_size, payload_size, frame_len;
    std::uint32_t crc_calc, crc_recv;
    bool good;
};
expected codec_header(const std::uint8_t* p) {
    expected e{};
    e.header_size = rnic::proto::get_be16(p);
    e.payload_size = rnic::proto::get_be16(p + 2);
    e.frame_len = ift::frame_length_at(p, ift::kPrefixSize);
    // The codec's Header CRC: crc32c over the size fields and the DDP header (ift.cpp encode/parse),
    // the field least significant byte first.
    e.crc_calc = rnic::proto::crc32c(p, ift::kPrefixSize + e.header_size);
    e.crc_recv = rnic::proto::get_le32(p + ift::kPrefixSize + e.header_size);
    e.good = e.crc_calc == e.crc_recv;
    return e;
}

// The codec's streaming receiver on the same bytes: did it accept the header?
ift::error_code codec_deframer(const std::uint8_t* p, std::size_t len, bool* header_seen) {
    ift::deframer::config cfg;
    ift::deframer::handler_set h;
    *header_seen = false;
    h.header = [&](const std::uint8_t*, std::size_t, std::size_t) { *header_seen = true; };
    ift::deframer d(cfg, h);
    return d.feed(p, len);
}

class IftHeaderCheck : public ::testing::TestWithParam<unsigned> {
protected:
    unsigned width_bytes() const { return GetParam(); }
    header_checker& d() { return dut(GetParam()); }
    filler full() const {
        const std::size_t w = GetParam();
        return [w](std::size_t) { return w; };
    }
};

INSTANTIATE_TEST_SUITE_P(Widths, IftHeaderCheck, ::testing::Values(8u, 16u),
                         [](const auto& p) { return "w" + std::to_string(p.param); });

// The §3.1 example frame of tests/seeds/ift_test.cpp (14-byte DDP header, Header CRC 0x8bd46316
// at offset 18), built by the codec.
TEST_P(IftHeaderCheck, Section31ExampleFrame) {
    bytes header;
    for (int i = 0; i < 14; ++i) header.push_back(static_cast<std::uint8_t>(0x80 + i));
    const std::string text = "IFT!abc";
    const bytes wire = ift::encode(ift::frame{header, bytes(text.begin(), text.end())});
    ASSERT_EQ(wire.size(), 33u);
    const verdict v = check_frame(d(), wire.data(), wire.size(), full());
    EXPECT_EQ(v.dones, 1);
    EXPECT_TRUE(v.good);
    EXPECT_FALSE(v.bad);
    EXPECT_EQ(v.crc_calc, 0x8BD46316u);
    EXPECT_EQ(v.crc_recv, 0x8BD46316u);
    EXPECT_EQ(v.header_size, 14u);
    EXPECT_EQ(v.payload_size, 7u);
    EXPECT_EQ(v.frame_len, 33u);
    // Header and CRC are bytes 0..21: ceil(22 / W) words, the verdict one cycle later.
    EXPECT_EQ(v.cycle, (22 + width_bytes() - 1) / width_bytes());
}

// Good frames of every header size 0..80 and a few large ones, random payloads: the block agrees
// with the codec on the CRC, the sizes and the wire length, and with parse() on the verdict.
TEST_P(IftHeaderCheck, GoodFramesPassBitExact) {
    std::mt19937 rng(101);
    std::vector<std::size_t> sizes;
    for (std::size_t h = 0; h <= 80; ++h) sizes.push_back(h);
    for (std::size_t h : {127u, 128u, 255u, 1000u, 4093u, 65535u}) sizes.push_back(h);
    for (std::size_t hs : sizes) {
        for (int rep = 0; rep < 3; ++rep) {
            const std::size_t ps = rep == 0 ? 0 : rng() % (rep == 1 ? 64 : 3000);
            const bytes f = make_frame(rng, hs, ps);
            std::string err;
            ASSERT_TRUE(ift::parse(f.data(), f.size(), &err)) << err;
            const expected e = codec_header(f.data());
            ASSERT_TRUE(e.good);
            const verdict v = check_frame(d(), f.data(), f.size(), full());
            ASSERT_EQ(v.dones, 1) << "header_size " << hs;
            ASSERT_TRUE(v.good) << "header_size " << hs;
            ASSERT_FALSE(v.bad);
            ASSERT_EQ(v.crc_calc, e.crc_calc) << "header_size " << hs;
            ASSERT_EQ(v.crc_recv, e.crc_recv);
            ASSERT_EQ(v.header_size, hs);
            ASSERT_EQ(v.payload_size, ps);
            ASSERT_EQ(v.frame_len, f.size());
            ASSERT_EQ(v.frame_len, e.frame_len);
            ASSERT_EQ(v.cycle, (8 + hs + width_bytes() - 1) / width_bytes()) << "header_size " << hs;
        }
    }
}

// Every single-bit flip of the size fields, the DDP header and the Header CRC is a Header CRC
// error for the block and for the codec's Deframer, with the same computed and received values.
// A flipped header_size moves the Header CRC field; the frame is followed by more stream bytes so
// that the header the flipped size describes is complete (up to 65535 + 8 bytes). Flips in the
// payload and the Payload CRC leave the header good (the codec's Payload CRC catches them).
TEST_P(IftHeaderCheck, SingleBitFlipsFailLikeTheCodec) {
    std::mt19937 rng(102);
    for (std::size_t hs : {0u, 3u, 14u, 18u, 29u}) {
        const bytes f = make_frame(rng, hs, 40);
        bytes stream = f;
        const bytes tail = random_bytes(rng, 65535 + 8);
        stream.insert(stream.end(), tail.begin(), tail.end());
        for (std::size_t bit = 0; bit < f.size() * 8; ++bit) {
            bytes bad = stream;
            bad[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
            const expected e = codec_header(bad.data());
            bool header_seen = false;
            const ift::error_code codec = codec_deframer(bad.data(), bad.size(), &header_seen);
            const bool in_header = bit / 8 < ift::kPrefixSize + hs + ift::kCrcSize;
            const verdict v = check_frame(d(), bad.data(), bad.size(), full());
            ASSERT_EQ(v.dones, 1) << "header_size " << hs << " bit " << bit;
            ASSERT_EQ(v.crc_calc, e.crc_calc) << "header_size " << hs << " bit " << bit;
            ASSERT_EQ(v.crc_recv, e.crc_recv) << "header_size " << hs << " bit " << bit;
            ASSERT_EQ(v.header_size, e.header_size);
            ASSERT_EQ(v.frame_len, e.frame_len);
            if (in_header) {
                ASSERT_TRUE(v.bad) << "header_size " << hs << " bit " << bit;
                ASSERT_FALSE(v.good);
                ASSERT_EQ(codec, ift::error_code::header_crc_mismatch) << "bit " << bit;
                ASSERT_FALSE(header_seen);
            } else {
                ASSERT_TRUE(v.good) << "header_size " << hs << " bit " << bit;
                ASSERT_FALSE(v.bad);
                ASSERT_TRUE(header_seen);
                ASSERT_EQ(codec, ift::error_code::payload_crc_mismatch) << "bit " << bit;
            }
        }
    }
}

// Words of any fill 1..W (first words shorter than the 4 size bytes included) with idle cycles:
// the same verdicts and values as with full words, good and damaged.
TEST_P(IftHeaderCheck, AnyWordFillAndIdleCycles) {
    std::mt19937 rng(103);
    std::mt19937 pauses(104);
    const std::size_t w = width_bytes();
    const filler any = [&rng, w](std::size_t) { return 1 + rng() % w; };
    for (int trial = 0; trial < 3000; ++trial) {
        const std::size_t hs = trial % 5 == 0 ? rng() % 600 : rng() % 40;
        bytes f = make_frame(rng, hs, rng() % 100);
        const bool damage = trial % 2 == 1;
        if (damage) {
            // A flip in the DDP header or the Header CRC (the sizes stay: the frame stays whole).
            const std::size_t at = ift::kPrefixSize + rng() % (hs + ift::kCrcSize);
            f[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        }
        const expected e = codec_header(f.data());
        ASSERT_EQ(e.good, !damage);
        const verdict v = check_frame(d(), f.data(), f.size(), any, trial % 3 == 0 ? &pauses : nullptr);
        ASSERT_EQ(v.dones, 1) << "trial " << trial;
        ASSERT_EQ(v.good, e.good) << "trial " << trial;
        ASSERT_EQ(v.bad, !e.good) << "trial " << trial;
        ASSERT_EQ(v.crc_calc, e.crc_calc) << "trial " << trial;
        ASSERT_EQ(v.crc_recv, e.crc_recv) << "trial " << trial;
        ASSERT_EQ(v.frame_len, f.size());
    }
}

// A stream of frames back to back, delineated by the block itself: the source takes at most 12
// bytes (the smallest frame) in a frame's first word, and from then on stops at frame_len, which
// the block shows once the size fields are in; the next frame starts right after. Every byte of
// the stream goes through the block (payload words are ignored). The headers it vouched for are
// the codec Deframer's.
TEST_P(IftHeaderCheck, StreamDelineatedByFrameLen) {
    std::mt19937 rng(105);
    bytes stream;
    std::vector<std::pair<std::size_t, std::size_t>> sizes;
    for (int i = 0; i < 300; ++i) {
        const std::size_t hs = rng() % 3 == 0 ? 14 : rng() % 60;
        const std::size_t ps = rng() % 4 == 0 ? 0 : rng() % 1500;
        const bytes f = make_frame(rng, hs, ps);
        stream.insert(stream.end(), f.begin(), f.end());
        sizes.emplace_back(hs, ps);
    }
    std::vector<std::pair<std::size_t, std::size_t>> codec_sizes;
    ift::deframer::handler_set h;
    h.header = [&](const std::uint8_t*, std::size_t hs, std::size_t ps) { codec_sizes.emplace_back(hs, ps); };
    ift::deframer ref(ift::deframer::config{}, h);
    ASSERT_EQ(ref.feed(stream.data(), stream.size()), ift::error_code::none);
    ASSERT_EQ(codec_sizes, sizes);

    std::vector<std::pair<std::size_t, std::size_t>> rtl_sizes;
    std::size_t start = 0;
    while (start < stream.size()) {
        std::size_t at = start, end = start + ift::kOverhead;
        int verdicts = 0;
        bool first = true;
        while (at < end) {
            const std::size_t n = std::min<std::size_t>({width_bytes(), end - at, stream.size() - at});
            ASSERT_GT(n, 0u) << "frame at " << start << " runs past the stream";
            d().cycle(true, stream.data() + at, n, first);
            first = false;
            at += n;
            end = start + d().read().frame_len;  // the size fields are in (at least 4 bytes taken)
            if (d().done()) {
                const verdict v = d().read();
                ASSERT_TRUE(v.good) << "frame at " << start;
                rtl_sizes.emplace_back(v.header_size, v.payload_size);
                ++verdicts;
            }
        }
        ASSERT_EQ(verdicts, 1) << "frame at " << start;
        ASSERT_EQ(at, end);
        start = end;
    }
    EXPECT_EQ(start, stream.size());
    EXPECT_EQ(rtl_sizes, codec_sizes);
}

// A new in_sof while a header is still streaming in abandons it: no verdict for the first frame,
// the second one checks as usual.
TEST_P(IftHeaderCheck, NewFrameAbandonsUnfinishedHeader) {
    std::mt19937 rng(106);
    const bytes a = make_frame(rng, 200, 10);
    const bytes b = make_frame(rng, 5, 10);
    d().cycle(true, a.data(), width_bytes(), true);
    d().cycle(true, a.data() + width_bytes(), width_bytes(), false);
    EXPECT_TRUE(d().busy());
    EXPECT_FALSE(d().done());
    const verdict v = check_frame(d(), b.data(), b.size(), full());
    EXPECT_EQ(v.dones, 1);
    EXPECT_TRUE(v.good);
    EXPECT_EQ(v.header_size, 5u);
    EXPECT_EQ(v.crc_calc, codec_header(b.data()).crc_calc);
    EXPECT_FALSE(d().busy());
}

}  // namespace
