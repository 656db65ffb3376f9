// The hostile peer's generator (platform/workloads/hostile_gen.*), without a simulator: every class
// is drawn, every episode ends in exactly one violation carrying the Terminate the RFCs name, the
// good ULPDUs before it stay inside the grants, and a seed reproduces its stream.
#include <gtest/gtest.h>

#include <set>

#include "proto/ddp_rdmap.h"
#include "proto/mpa.h"
#include "workloads/hostile_gen.h"

namespace rnic::platform::attack {
namespace {

namespace ddp = proto::ddp;

target sample_target() {
    target t;
    t.writable = {0x100, 0x10000, 16384};
    t.atomic = {0x200, 0x20000, 4096};
    t.read_only = {0x300, 0x30000, 8192};
    t.no_remote = {0x400, 0x40000, 8192};
    t.other_pd = {0x500, 0x50000, 8192};
    t.stale = {0x600, 0x60000, 4096};
    t.invalidated = {0x700, 0x70000, 4096};
    return t;
}

bool inside(const region& r, std::uint64_t to, std::uint64_t len) {
    return to >= r.to && len <= r.length && to - r.to <= r.length - len;
}

TEST(HostileGenerator, EveryClassIsDrawnAndEndsTheEpisode) {
    const target t = sample_target();
    generator g(t, 7);
    std::set<std::string> seen;
    for (int e = 0; e < 4000; ++e) {
        const std::vector<fpdu> ep = g.episode(6);
        ASSERT_FALSE(ep.empty());
        const fpdu& last = ep.back();
        seen.insert(last.cls);
        EXPECT_NE(last.expect.what, expectation::kind::none) << last.cls;
        EXPECT_NE(last.expect.what, expectation::kind::unknown) << last.cls;
        std::uint32_t next_send_msn = 1, sends = 0;
        for (std::size_t i = 0; i + 1 < ep.size(); ++i) {
            const fpdu& f = ep[i];
            EXPECT_EQ(f.expect.what, expectation::kind::none) << f.cls;
            EXPECT_EQ(f.cls.rfind("good_", 0), 0u) << f.cls;
            // Every ULPDU can be sent raw: at least 18 bytes, at most the header plus max_payload.
            EXPECT_GE(f.ulpdu.size(), ddp::kUntaggedHeaderSize);
            const auto h = ddp::decode_header(f.ulpdu.data(), f.ulpdu.size(), nullptr);
            ASSERT_TRUE(h);
            EXPECT_LE(f.ulpdu.size() - h->size(), std::max<std::size_t>(t.max_payload, ddp::kAtomicRequestSize));
            if (h->tagged) {
                const std::uint64_t len = f.ulpdu.size() - h->size();
                EXPECT_TRUE((h->stag == t.writable.stag && inside(t.writable, h->tagged_offset, len)) ||
                            (h->stag == t.atomic.stag && inside(t.atomic, h->tagged_offset, len)))
                    << "a good Write outside the grants: STag " << h->stag << " TO " << h->tagged_offset;
            } else if (h->queue == ddp::kQueueSend) {
                EXPECT_EQ(h->msn, next_send_msn++);
                EXPECT_LE(f.ulpdu.size() - h->size(), t.recv_len);
                ++sends;
            }
        }
        EXPECT_LE(sends, t.receives);
    }
    // Framing damage needs the peer to frame its own FPDUs: never drawn when its NIC frames them.
    for (const std::string& c : generator::classes()) {
        if (c.rfind("mpa_", 0) == 0) {
            EXPECT_FALSE(seen.count(c)) << c << " drawn without peer framing";
        } else {
            EXPECT_TRUE(seen.count(c)) << c << " never drawn";
        }
    }
}

// mpa_length_beyond_stream must announce a frame longer than what is sent, whatever the pad: with
// n = 5 bytes sent as 2 + 5 + 1 pad + 4, a declared 6 frames as 2 + 6 + 0 + 4, the same 12 bytes, and
// the receiver rightly answers a CRC error instead of waiting (found by the 10-million-FPDU run).
TEST(HostileGenerator, LengthBeyondTheStreamAlwaysFramesPastTheBytesSent) {
    namespace mpa = proto::mpa;
    for (std::size_t n = 0; n <= 1454; ++n) {
        const auto [first, last] = generator::lengths_beyond_the_stream(n);
        ASSERT_LE(first, last) << n;
        EXPECT_EQ(last, mpa::kMaxUlpduLength);
        const std::vector<std::uint8_t> ulpdu(n, 0x5a);
        std::vector<std::uint8_t> sent;
        mpa::build_fpdu(ulpdu.data(), ulpdu.size(), true, false, 0, sent);
        auto waits = [&](std::size_t declared) {
            std::vector<std::uint8_t> frame = sent;
            frame[0] = static_cast<std::uint8_t>(declared >> 8);
            frame[1] = static_cast<std::uint8_t>(declared);
            std::size_t delivered = 0;
            mpa::deframer d({}, [&](const std::uint8_t*, std::size_t) { ++delivered; });
            return d.feed(frame.data(), frame.size()) == mpa::deframe_error::none && delivered == 0 &&
                   !d.at_fpdu_boundary();
        };
        EXPECT_TRUE(waits(first)) << "n = " << n << ", declared " << first;
        EXPECT_TRUE(waits(first + 1)) << "n = " << n;
        // One less is a whole frame of the size sent (or the length sent itself): not beyond.
        if (first - 1 > n) {
            EXPECT_FALSE(waits(first - 1)) << "n = " << n << ", declared " << first - 1;
        }
    }
}

TEST(HostileGenerator, PeerFramingDamagesTheFramingAndCutsTheStreamEveryWay) {
    // The peer frames its own FPDUs (MPA, CRC, no markers): a receiver's deframer (the project's
    // codec, RFC 5044 §6) must see the damage each class claims, the good FPDUs before it intact,
    // and the cuts must split FPDUs and coalesce them.
    namespace mpa = proto::mpa;
    target t = sample_target();
    t.peer_frames = true;
    t.mulpdu = 1454;
    generator g(t, 21);
    std::set<std::string> seen, cuts;
    std::uint64_t split = 0, coalesced = 0, over_mulpdu = 0, one_byte_segments = 0;
    for (int e = 0; e < 4000; ++e) {
        const std::vector<fpdu> ep = g.episode(6);
        const stream_plan p = g.frame_stream(ep);
        seen.insert(ep.back().cls);
        cuts.insert(p.cut);
        split += p.fpdus_split;
        coalesced += p.segments_coalesced;
        ASSERT_FALSE(p.ends.empty());
        EXPECT_EQ(p.ends.back(), p.bytes.size());
        EXPECT_LE(p.ends.size(), t.max_segments);
        for (std::size_t i = 0; i < p.ends.size(); ++i) {
            const std::size_t from = i == 0 ? 0 : p.ends[i - 1];
            ASSERT_LT(from, p.ends[i]) << "segment ends must ascend";
            one_byte_segments += p.ends[i] - from == 1;
        }
        for (const fpdu& f : ep) {
            if (f.cls != "good_write_over_mulpdu") continue;
            ++over_mulpdu;
            EXPECT_GT(f.ulpdu.size(), t.mulpdu);
            const auto h = ddp::decode_header(f.ulpdu.data(), f.ulpdu.size(), nullptr);
            ASSERT_TRUE(h);
            EXPECT_EQ(h->stag, t.writable.stag);
            EXPECT_TRUE(inside(t.writable, h->tagged_offset, f.ulpdu.size() - h->size()));
        }
        // Feed the stream segment by segment, as the target's TCP delivers it.
        std::vector<std::vector<std::uint8_t>> got;
        mpa::deframer d({}, [&](const std::uint8_t* u, std::size_t n) { got.emplace_back(u, u + n); });
        std::size_t from = 0;
        mpa::deframe_error err = mpa::deframe_error::none;
        for (const std::size_t end : p.ends) {
            err = d.feed(p.bytes.data() + from, end - from);
            from = end;
        }
        const std::string& c = ep.back().cls;
        ASSERT_GE(got.size(), ep.size() - 1) << c;
        for (std::size_t i = 0; i + 1 < ep.size(); ++i) EXPECT_EQ(got[i], ep[i].ulpdu) << c << " FPDU " << i;
        if (c == "mpa_bad_crc" || c == "mpa_length_short" || c == "mpa_length_overrun") {
            EXPECT_EQ(err, mpa::deframe_error::crc_mismatch) << c;
            EXPECT_EQ(got.size(), ep.size() - 1) << c;
            EXPECT_EQ(ep.back().expect.layer, 2);  // RFC 5044 §8 code 2 in an LLP Terminate
            EXPECT_EQ(ep.back().expect.code, 2);
        } else if (c == "mpa_length_beyond_stream") {
            EXPECT_EQ(err, mpa::deframe_error::none);
            EXPECT_FALSE(d.at_fpdu_boundary()) << "the receiver still waits for the rest";
            EXPECT_EQ(got.size(), ep.size() - 1);
            EXPECT_TRUE(p.close_after);
            EXPECT_EQ(ep.back().expect.what, expectation::kind::closed);
        } else {
            EXPECT_EQ(err, mpa::deframe_error::none) << c;
            ASSERT_EQ(got.size(), ep.size()) << c;
            EXPECT_EQ(got.back(), ep.back().ulpdu) << c;
            EXPECT_TRUE(d.at_fpdu_boundary()) << c;
            if (c == "mpa_ulpdu_runt") {
                EXPECT_LT(got.back().size(), ddp::kTaggedHeaderSize);
            }
        }
    }
    for (const std::string& c : generator::classes()) EXPECT_TRUE(seen.count(c)) << c << " never drawn";
    EXPECT_EQ(cuts, (std::set<std::string>{"aligned", "split", "coalesced", "random"}));
    EXPECT_GT(split, 1000u);
    EXPECT_GT(coalesced, 500u);
    EXPECT_GT(over_mulpdu, 100u);
    EXPECT_GT(one_byte_segments, 10u);
}

TEST(HostileGenerator, ExpectationsFollowTheRfcTables) {
    const target t = sample_target();
    generator g(t, 11);
    for (int e = 0; e < 3000; ++e) {
        const fpdu f = g.episode(0).back();
        const auto& x = f.expect;
        if (f.cls == "write_invalid_stag" || f.cls == "write_stale_stag" || f.cls == "write_invalidated_stag") {
            EXPECT_EQ(x.layer, 1);  // RFC 5041 §7.2: DDP, tagged buffer, invalid STag
            EXPECT_EQ(x.etype, 1);
            EXPECT_EQ(x.code, 0);
        } else if (f.cls == "read_invalid_stag") {
            EXPECT_EQ(x.layer, 0);  // RFC 5040 §7.2: RDMAP, remote protection, invalid STag
            EXPECT_EQ(x.etype, 1);
            EXPECT_EQ(x.code, 0);
        } else if (f.cls == "atomic_misaligned") {
            EXPECT_EQ(x.layer, 0);  // RFC 7306 §8.2: remote operation, catastrophic for the stream
            EXPECT_EQ(x.etype, 2);
            EXPECT_EQ(x.code, 7);
            const auto req = ddp::decode_atomic_request(f.ulpdu.data() + 18, f.ulpdu.size() - 18, nullptr);
            ASSERT_TRUE(req);
            EXPECT_NE(req->tagged_offset % 8, 0u);
        } else if (f.cls == "write_to_wrap") {
            const auto h = ddp::decode_header(f.ulpdu.data(), f.ulpdu.size(), nullptr);
            ASSERT_TRUE(h);
            EXPECT_LT(h->tagged_offset + (f.ulpdu.size() - 14), h->tagged_offset) << "must wrap";
            EXPECT_EQ(x.code, 3);
        }
    }
}

TEST(HostileGenerator, SameSeedSameStreamAndMutationChangesOneByte) {
    const target t = sample_target();
    generator a(t, 99), b(t, 99), c(t, 100);
    bool differs = false;
    for (int e = 0; e < 50; ++e) {
        const auto x = a.episode(6), y = b.episode(6), z = c.episode(6);
        ASSERT_EQ(x.size(), y.size());
        for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].ulpdu, y[i].ulpdu);
        differs = differs || x.size() != z.size() || x.back().ulpdu != z.back().ulpdu;
    }
    EXPECT_TRUE(differs);
    const std::vector<fpdu> conv = a.good_conversation(10);
    ASSERT_EQ(conv.size(), 10u);
    for (int m = 0; m < 200; ++m) {
        const std::vector<fpdu> mut = a.mutate(conv);
        ASSERT_EQ(mut.size(), conv.size());
        std::size_t changed = 0;
        for (std::size_t i = 0; i < conv.size(); ++i) {
            ASSERT_EQ(mut[i].ulpdu.size(), conv[i].ulpdu.size());
            for (std::size_t k = 0; k < conv[i].ulpdu.size(); ++k) changed += mut[i].ulpdu[k] != conv[i].ulpdu[k];
        }
        EXPECT_EQ(changed, 1u);
    }
}

}  // namespace
}  // namespace rnic::platform::attack
