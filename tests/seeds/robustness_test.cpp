// Untrusted input: every parser, deframer and the recovery get random bytes and randomly
// mutated valid frames, in buffers of exactly the stated length (so that a sanitizer build
// catches any read past the end). Each call must either succeed or name an error.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "proto/seeds/ift.h"
#include "proto/seeds/rdmatcp.h"
#include "proto/seeds/vitcp.h"
#include "seeds_test_util.h"

namespace rnic::proto {
namespace {

using seeds_test::bytes;

// A heap copy of exactly `v.size()` bytes.
std::unique_ptr<std::uint8_t[]> exact(const bytes& v) {
    auto p = std::make_unique<std::uint8_t[]>(v.size() + (v.empty() ? 1 : 0));
    std::copy(v.begin(), v.end(), p.get());
    return p;
}

bytes mutate(bytes v, std::mt19937_64& rng) {
    switch (rng() % 4) {
    case 0:  // flip a few bytes
        for (int i = 0, n = static_cast<int>(1 + rng() % 4); i < n && !v.empty(); ++i)
            v[rng() % v.size()] = static_cast<std::uint8_t>(rng());
        break;
    case 1:  // truncate
        v.resize(v.empty() ? 0 : rng() % v.size());
        break;
    case 2: {  // extend with junk
        const bytes junk = seeds_test::random_bytes(rng, rng() % 64);
        v.insert(v.end(), junk.begin(), junk.end());
        break;
    }
    default:  // rewrite the length-bearing first word
        for (std::size_t i = 0; i < 4 && i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(rng());
        break;
    }
    return v;
}

std::vector<bytes> corpus(std::mt19937_64& rng) {
    std::vector<bytes> c;
    for (int i = 0; i < 20; ++i) {
        c.push_back(ift::encode(
            ift::frame{seeds_test::random_bytes(rng, rng() % 30), seeds_test::random_bytes(rng, rng() % 200)}));
        rdmatcp::segment r;
        r.header.type = static_cast<rdmatcp::message_type>(rng() % 4);
        r.control = seeds_test::random_bytes(rng, 4 * (rng() % 3));
        if (r.header.type != rdmatcp::message_type::read_request)
            r.payload = seeds_test::random_bytes(rng, rng() % 200);
        if (r.header.type == rdmatcp::message_type::rdma_write)
            r.header.rdma_length = static_cast<std::uint32_t>(r.payload.size());
        c.push_back(rdmatcp::encode(r));
        vitcp::segment v;
        v.header.type = static_cast<vitcp::segment_type>(rng() % 9);
        v.crc = (rng() & 1) != 0;
        if (vitcp::has_rdma_header(v.header.type)) v.rdma = vitcp::rdma_header{};
        if (vitcp::has_ce_header(v.header.type)) {
            v.ce = vitcp::ce_header{};
            v.ce->options.push_back({0x0042, seeds_test::random_bytes(rng, rng() % 8)});
            if (v.crc) v.ce->options.push_back({vitcp::kOptionCrc, {}});
        }
        if (vitcp::has_payload(v.header.type)) v.payload = seeds_test::random_bytes(rng, rng() % 200);
        c.push_back(vitcp::encode(v));
    }
    return c;
}

TEST(SeedsRobustness, ParsersNeverReadPastTheEndAndAlwaysNameTheError) {
    std::mt19937_64 rng(0xF022);
    const auto base = corpus(rng);
    for (int iter = 0; iter < 30000; ++iter) {
        const bytes input =
            iter % 3 == 0 ? seeds_test::random_bytes(rng, rng() % 300) : mutate(base[rng() % base.size()], rng);
        const auto buf = exact(input);
        const std::uint8_t* p = buf.get();
        const std::size_t n = input.size();
        std::string err;
        {
            ift::error_code code = ift::error_code::none;
            const auto f = ift::decode(p, n, &err, &code);
            EXPECT_EQ(f.has_value(), code == ift::error_code::none);
        }
        {
            rdmatcp::error_code code = rdmatcp::error_code::none;
            const auto s = rdmatcp::decode(p, n, &err, &code);
            EXPECT_EQ(s.has_value(), code == rdmatcp::error_code::none);
            rdmatcp::decode_options lax;
            lax.check_crc = false;
            lax.ignore_reserved_bits = true;
            const auto s2 = rdmatcp::decode(p, n, &err, &code, lax);
            EXPECT_EQ(s2.has_value(), code == rdmatcp::error_code::none);
            if (s2) {
                EXPECT_LE(s2->header.size() + s2->control.size() + s2->payload.size(), n);
            }
        }
        for (const bool crc : {false, true}) {
            vitcp::error_code code = vitcp::error_code::none;
            vitcp::decode_options lax;
            lax.check_crc = iter % 2 == 0;
            lax.ignore_reserved_bits = iter % 2 == 0;
            const auto s = vitcp::decode(p, n, crc, &err, &code, lax);
            EXPECT_EQ(s.has_value(), code == vitcp::error_code::none);
            if (s) {
                EXPECT_LE(s->payload.size(), n);
            }
        }
        rdmatcp::recovery::settings rc;
        rc.strategy = rdmatcp::recovery::strategy::scan_words;
        rc.check_crc = iter % 2 == 0;
        rdmatcp::recovery r(rc);
        const auto a = r.assess(p, n, static_cast<std::uint32_t>(rng()));
        EXPECT_LE(a.accepted_end, n);
    }
}

TEST(SeedsRobustness, DeframersSurviveMutatedStreams) {
    std::mt19937_64 rng(0xF023);
    const auto base = corpus(rng);
    for (int iter = 0; iter < 300; ++iter) {
        bytes stream;
        for (int i = 0; i < 10; ++i) {
            const bytes part = (rng() % 3 == 0) ? mutate(base[rng() % base.size()], rng) : base[rng() % base.size()];
            stream.insert(stream.end(), part.begin(), part.end());
        }
        const auto buf = exact(stream);
        ift::deframer::config ic;
        ic.stop_on_payload_crc_error = (iter & 1) != 0;
        ift::deframer::handler_set ih;
        ih.frame = [](const ift::frame_view&, bool) {};
        ih.payload_piece = [](std::size_t, const std::uint8_t*, std::size_t) {};
        ift::deframer id(ic, ih);
        rdmatcp::deframer::config rcfg;
        rcfg.check_crc = (iter & 2) != 0;
        rdmatcp::deframer rd(rcfg, [](const rdmatcp::segment_view&) {});
        vitcp::deframer::config vcfg;
        vcfg.crc_negotiated = (iter & 4) != 0;
        vitcp::deframer vd(vcfg, [](const vitcp::segment_view&) {});
        std::size_t pos = 0;
        while (pos < stream.size()) {
            const std::size_t chunk = std::min<std::size_t>(1 + rng() % 200, stream.size() - pos);
            // Each chunk in its own exact-size heap buffer.
            const auto piece = exact(bytes(buf.get() + pos, buf.get() + pos + chunk));
            id.feed(piece.get(), chunk);
            rd.feed(piece.get(), chunk);
            vd.feed(piece.get(), chunk);
            pos += chunk;
        }
        if (id.error() != ift::error_code::none) {
            EXPECT_FALSE(id.error_detail().empty());
        }
        if (rd.error() != rdmatcp::error_code::none) {
            EXPECT_FALSE(rd.error_detail().empty());
        }
        if (vd.error() != vitcp::error_code::none) {
            EXPECT_FALSE(vd.error_detail().empty());
        }
        EXPECT_LE(id.bytes_consumed(), stream.size());
        EXPECT_LE(rd.bytes_consumed(), stream.size());
        EXPECT_LE(vd.bytes_consumed(), stream.size());
    }
}

}  // namespace
}  // namespace rnic::proto
