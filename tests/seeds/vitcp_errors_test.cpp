// VI/TCP reliability levels against error classes (seed 003 §3.3, §3.6 option 2, §3.2 Transmit
// Error; the VI Architecture's reliability attributes), without SystemC: which errors each level
// survives, the codec's Deframer going on past a CRC error only when told to, and the in-order
// rules taking a Transmit Error bit only where the level survives it.
#include "proto/seeds/vitcp_errors.h"

#include <gtest/gtest.h>

#include "proto/ddp_rdmap.h"
#include "proto/seeds/vitcp_ddp.h"

namespace rnic::proto::vitcp_map {
namespace {

namespace vt = proto::vitcp;
using level = vitcp_ce::reliability;
using bytes = std::vector<std::uint8_t>;

constexpr message_error kAllErrors[] = {message_error::crc,        message_error::transmit_error,
                                        message_error::protection, message_error::descriptor,
                                        message_error::read_limit, message_error::framing};
constexpr vt::segment_type kDataTypes[] = {vt::segment_type::send, vt::segment_type::rdma_write,
                                           vt::segment_type::read_request, vt::segment_type::read_response,
                                           vt::segment_type::nop};

TEST(ViTcpErrors, ReliableLevelsCloseOnEveryErrorInEveryMessage) {
    // §3.6 option 2: "closed immediately if the mode is Reliable Delivery or Reliable Reception".
    for (const level l : {level::reliable_delivery, level::reliable_reception}) {
        for (const message_error e : kAllErrors) {
            for (const vt::segment_type t : kDataTypes) {
                EXPECT_FALSE(connection_survives(l, e, t))
                    << vitcp_ce::to_string(l) << " " << to_string(e) << " " << vt::to_string(t);
            }
        }
    }
}

TEST(ViTcpErrors, UnreliableSurvivesOnlyErrorsOfOneSendOrWrite) {
    // This test's own table of the choices in vitcp_errors.h (survives at Unreliable Delivery).
    struct row {
        message_error e;
        bool send, write;
    };
    const row table[] = {
        {message_error::crc, true, true},             // §3.6 "may continue if in Unreliable mode"
        {message_error::transmit_error, true, true},  // §3.2: the message is in error, not the stream
        {message_error::protection, false, true},     // a bad Memory Handle drops the Write
        {message_error::descriptor, true, false},     // no or too small receive descriptor
        {message_error::read_limit, false, false},    // §2.2.2.2.6: Reads only on reliable levels
        {message_error::framing, false, false},       // the stream's boundaries are lost
    };
    for (const row& r : table) {
        EXPECT_EQ(connection_survives(level::unreliable, r.e, vt::segment_type::send), r.send) << to_string(r.e);
        EXPECT_EQ(connection_survives(level::unreliable, r.e, vt::segment_type::rdma_write), r.write) << to_string(r.e);
        for (const vt::segment_type t :
             {vt::segment_type::read_request, vt::segment_type::read_response, vt::segment_type::nop}) {
            EXPECT_FALSE(connection_survives(level::unreliable, r.e, t)) << to_string(r.e) << " " << vt::to_string(t);
        }
    }
}

bytes send_segments(bool corrupt_first, bool corrupt_length) {
    bytes wire;
    for (std::uint32_t i = 0; i < 2; ++i) {
        vt::segment s;
        s.header.type = vt::segment_type::send;
        s.header.eom = true;
        s.header.message_number = 100 + i;
        s.payload.assign(64, static_cast<std::uint8_t>(0x30 + i));
        s.crc = true;
        const bytes b = vt::encode(s);
        wire.insert(wire.end(), b.begin(), b.end());
    }
    if (corrupt_first) wire[40] ^= 0x04;                                   // a payload byte of the first segment
    if (corrupt_length) wire[3] = static_cast<std::uint8_t>(wire[3] + 8);  // its Segment Length
    return wire;
}

TEST(ViTcpErrors, DeframerGoesPastACrcErrorOnlyWhenTold) {
    for (const bool go_on : {false, true}) {
        std::vector<bool> crc_ok;
        vt::deframer d(vt::deframer::config{true, {}, go_on},
                       [&](const vt::segment_view& v) { crc_ok.push_back(v.crc_ok); });
        const bytes wire = send_segments(true, false);
        const vt::error_code e = d.feed(wire.data(), wire.size());
        if (go_on) {
            EXPECT_EQ(e, vt::error_code::none);
            EXPECT_EQ(crc_ok, (std::vector<bool>{false, true}));  // the bad one flagged, the next good
        } else {
            EXPECT_EQ(e, vt::error_code::crc_mismatch);
            EXPECT_TRUE(crc_ok.empty());
        }
    }
}

TEST(ViTcpErrors, ACorruptedSegmentLengthStillStopsTheDeframer) {
    // The length was the corrupted field: the CRC mismatch is forgiven, the next "segment" is not.
    std::size_t delivered = 0;
    vt::deframer d(vt::deframer::config{true, {}, true}, [&](const vt::segment_view&) { ++delivered; });
    const bytes wire = send_segments(false, true);
    const vt::error_code e = d.feed(wire.data(), wire.size());
    EXPECT_NE(e, vt::error_code::none);
    EXPECT_LE(delivered, 1u);
}

TEST(ViTcpErrors, TransmitErrorBitIsTakenInOrderOnlyWhereTheLevelSurvivesIt) {
    for (const level l : {level::unreliable, level::reliable_delivery, level::reliable_reception}) {
        for (const vt::segment_type t : {vt::segment_type::send, vt::segment_type::rdma_write}) {
            session rx;
            rx.level = l;
            vt::segment s;
            s.header.type = t;
            s.header.eom = true;
            s.header.transmit_error = true;
            s.header.message_number = 7;
            s.payload.assign(32, 0);
            if (t == vt::segment_type::rdma_write) s.rdma = vt::rdma_header{0x1000, 5, 32};
            const bytes wire = vt::encode(s);
            std::string err;
            const auto v = vt::parse(wire.data(), wire.size(), false, &err);
            ASSERT_TRUE(v) << err;
            bytes ulpdu;
            std::string why;
            const bool ok = accept_in_order(rx, *v, ulpdu, &why);
            EXPECT_EQ(ok, l == level::unreliable) << vitcp_ce::to_string(l) << " " << vt::to_string(t) << ": " << why;
            if (ok) {
                EXPECT_FALSE(ulpdu.empty());  // delivered (flagged in error by the framing)
            }
        }
    }
    // A Read Request with the bit never survives (no Reads at Unreliable Delivery).
    session rx;
    rx.level = level::unreliable;
    vt::segment s;
    s.header.type = vt::segment_type::read_request;
    s.header.eom = true;
    s.header.transmit_error = true;
    s.rdma = vt::rdma_header{0x1000, 5, 32};
    const bytes wire = vt::encode(s);
    const auto v = vt::parse(wire.data(), wire.size(), false, nullptr);
    ASSERT_TRUE(v);
    bytes ulpdu;
    std::string why;
    EXPECT_FALSE(accept_in_order(rx, *v, ulpdu, &why));
    EXPECT_NE(why.find("Transmit Error"), std::string::npos) << why;
}

}  // namespace
}  // namespace rnic::proto::vitcp_map
