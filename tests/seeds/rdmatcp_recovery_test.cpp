// RDMA/TCP §5 framing recovery: after a lost TCP segment, assume the next TCP segment starts
// with an RDMA segment, validate the header, otherwise fall back to buffering. Tested when the
// sender's alignment holds (one or more whole RDMA segments per TCP segment), when a middlebox
// re-segmented the stream (candidates at wrong offsets must be rejected by the header check, or
// are counted here as false matches against the known true boundaries), and with payload that
// deliberately embeds valid-looking headers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "proto/bytes.h"
#include "proto/seeds/rdmatcp.h"
#include "seeds_test_util.h"

namespace rnic::proto::rdmatcp {
namespace {

using seeds_test::bytes;
using reason_code = recovery::reason;
using verdict = recovery::verdict;

constexpr std::uint64_t kConn = 0x5EC0DE5EED000001ull;

struct packet {
    std::uint32_t stream_offset;
    seeds_test::bytes bytes;
};

struct stream {
    seeds_test::bytes bytes;
    std::set<std::size_t> starts;  // true segment starts (stream offsets)
    std::vector<std::uint32_t> message_numbers;
};

bytes make_segment(message_type t, std::uint32_t msg, const bytes& payload, std::uint64_t conn = kConn) {
    segment s;
    s.header.type = t;
    s.header.connection_id = conn;
    s.header.message_number = msg;
    s.header.begin = s.header.end = true;
    if (t != message_type::read_request) s.payload = payload;
    if (t == message_type::rdma_write) s.header.rdma_length = static_cast<std::uint32_t>(s.payload.size());
    return encode(s);
}

void append(stream& st, const bytes& seg, std::uint32_t msg) {
    st.starts.insert(st.bytes.size());
    st.message_numbers.push_back(msg);
    st.bytes.insert(st.bytes.end(), seg.begin(), seg.end());
}

// The sender as §2 recommends: each TCP segment carries exactly one RDMA segment of at most EMSS.
std::vector<packet> aligned_packets(std::mt19937_64& rng, std::size_t count, std::size_t emss, stream& st,
                                    std::uint32_t first_msg) {
    std::vector<packet> packets;
    for (std::size_t i = 0; i < count; ++i) {
        const auto t = i % 3 == 0 ? message_type::rdma_write : message_type::send;
        const std::size_t p = seeds_test::uniform(rng, 1, max_payload(emss, t));
        const std::uint32_t msg = first_msg + static_cast<std::uint32_t>(i);
        const bytes seg = make_segment(t, msg, seeds_test::random_bytes(rng, p));
        EXPECT_LE(seg.size(), emss);
        packets.push_back({static_cast<std::uint32_t>(st.bytes.size()), seg});
        append(st, seg, msg);
    }
    return packets;
}

recovery::settings base_config() {
    recovery::settings c;
    c.connection_id = kConn;
    return c;
}

TEST(RdmaTcpRecovery, AlignedTcpSegmentsAfterALossAreAccepted) {
    std::mt19937_64 rng(50);
    stream st;
    const auto packets = aligned_packets(rng, 40, 1460, st, 1000);
    recovery::settings cfg = base_config();
    cfg.check_message_number = true;
    cfg.next_message_number = 1003;  // packet 3 was lost: message 1003 is the oldest incomplete one
    cfg.message_window = 64;
    recovery r(cfg);
    for (std::size_t i = 4; i < packets.size(); ++i) {
        for (const bool with_offset : {true, false}) {
            const auto a = with_offset
                               ? r.assess(packets[i].bytes.data(), packets[i].bytes.size(), packets[i].stream_offset)
                               : r.assess(packets[i].bytes.data(), packets[i].bytes.size());
            EXPECT_EQ(a.verdict, verdict::aligned) << i;
            ASSERT_EQ(a.candidates.size(), 1u);
            EXPECT_EQ(a.candidates[0].reason, reason_code::accepted) << a.candidates[0].detail;
            EXPECT_TRUE(a.candidates[0].crc_checked);
            EXPECT_TRUE(a.candidates[0].complete);
            EXPECT_EQ(a.candidates[0].header.message_number, 1000 + i);
            EXPECT_EQ(a.segments, 1u);
            EXPECT_EQ(a.first_segment, 0u);
            EXPECT_EQ(a.accepted_end, packets[i].bytes.size());
            EXPECT_FALSE(a.partial_tail);
        }
    }
    EXPECT_EQ(r.stats().aligned, r.stats().assessed);
    // Outside the message-number window the same packet is buffered.
    r.config().next_message_number = 5000;
    const auto a = r.assess(packets[10].bytes.data(), packets[10].bytes.size(), packets[10].stream_offset);
    EXPECT_EQ(a.verdict, verdict::buffer);
    EXPECT_EQ(a.candidates[0].reason, reason_code::message_number);
}

TEST(RdmaTcpRecovery, FollowsTheLengthRuleThroughSeveralSegmentsAndAPartialTail) {
    std::mt19937_64 rng(51);
    bytes three;
    std::vector<std::size_t> ends;
    for (int i = 0; i < 3; ++i) {
        const bytes s = make_segment(message_type::send, 7 + i, seeds_test::random_bytes(rng, 37 + i));
        three.insert(three.end(), s.begin(), s.end());
        ends.push_back(three.size());
    }
    recovery r(base_config());
    auto a = r.assess(three.data(), three.size(), 0);
    EXPECT_EQ(a.verdict, verdict::aligned);
    EXPECT_EQ(a.segments, 3u);
    EXPECT_EQ(a.accepted_end, three.size());
    ASSERT_EQ(a.candidates.size(), 3u);
    EXPECT_EQ(a.candidates[1].offset, ends[0]);
    EXPECT_EQ(a.candidates[2].offset, ends[1]);

    // The TCP segment ends in the middle of the third RDMA segment.
    const std::size_t cut = ends[1] + 30;
    a = r.assess(three.data(), cut, 0);
    EXPECT_EQ(a.verdict, verdict::aligned);
    EXPECT_EQ(a.segments, 3u);
    EXPECT_TRUE(a.partial_tail);
    EXPECT_FALSE(a.candidates[2].crc_checked);
    EXPECT_EQ(a.accepted_end, cut);
    r.config().accept_partial = false;
    a = r.assess(three.data(), cut, 0);
    EXPECT_EQ(a.segments, 2u);
    EXPECT_EQ(a.candidates[2].reason, reason_code::incomplete);
    EXPECT_EQ(a.accepted_end, ends[1]);
    // The next header itself cut: truncated_header, the rest is to be buffered.
    a = r.assess(three.data(), ends[1] + 10, 0);
    EXPECT_EQ(a.candidates[2].reason, reason_code::truncated_header);
    EXPECT_EQ(a.accepted_end, ends[1]);

    // A good segment followed by garbage: the chain stops at the garbage.
    bytes garbage = three;
    garbage.resize(ends[0]);
    const bytes junk = seeds_test::random_bytes(rng, 200);
    garbage.insert(garbage.end(), junk.begin(), junk.end());
    a = r.assess(garbage.data(), garbage.size(), 0);
    EXPECT_EQ(a.verdict, verdict::aligned);
    EXPECT_EQ(a.segments, 1u);
    EXPECT_EQ(a.accepted_end, ends[0]);
    EXPECT_NE(a.candidates.back().reason, reason_code::accepted);
}

// A middlebox re-cut the byte stream at arbitrary points. Every TCP segment is assessed as if
// its predecessor had been lost; an accepted candidate at an offset that is not a true segment
// start is a false match.
struct middlebox_result {
    std::size_t packets = 0, true_start_packets = 0, aligned = 0, resynchronized = 0, false_matches = 0;
    std::size_t missed_true_starts = 0;
    std::map<reason_code, std::size_t> reasons;
};

middlebox_result run_middlebox(std::uint64_t seed, recovery::strategy strategy, bool pass_offset) {
    std::mt19937_64 rng(seed);
    stream st;
    std::uint32_t msg = 1;
    while (st.bytes.size() < 300000) {
        const auto t = static_cast<message_type>(rng() % 4);
        const bytes seg = make_segment(t, msg, seeds_test::random_bytes(rng, seeds_test::uniform(rng, 0, 1400)));
        append(st, seg, msg++);
    }
    recovery::settings cfg = base_config();
    cfg.strategy = strategy;
    recovery r(cfg);
    middlebox_result res;
    std::size_t pos = 0;
    while (pos < st.bytes.size()) {
        const std::size_t len = std::min(seeds_test::uniform(rng, 1, 1500), st.bytes.size() - pos);
        const std::uint8_t* p = st.bytes.data() + pos;
        const auto a = pass_offset ? r.assess(p, len, static_cast<std::uint32_t>(pos)) : r.assess(p, len);
        ++res.packets;
        if (st.starts.count(pos)) ++res.true_start_packets;
        for (const auto& c : a.candidates) {
            ++res.reasons[c.reason];
            if (c.reason == reason_code::accepted && !st.starts.count(pos + c.offset)) ++res.false_matches;
        }
        if (a.verdict == verdict::aligned) ++res.aligned;
        if (a.verdict == verdict::resynchronized) ++res.resynchronized;
        // With scanning, the first true start whose header fits must be found.
        if (strategy == recovery::strategy::scan_words) {
            for (auto it = st.starts.lower_bound(pos); it != st.starts.end() && *it < pos + len; ++it) {
                const std::size_t off = *it - pos;
                const auto type = static_cast<message_type>(st.bytes[*it + 1] & 3);
                if (off + header_size(type) > len) continue;
                if (a.first_segment != off) ++res.missed_true_starts;
                break;
            }
        }
        pos += len;
    }
    const auto& s = r.stats();
    std::uint64_t sum = 0;
    for (auto n : s.by_reason) sum += n;
    EXPECT_EQ(sum, s.candidates);
    EXPECT_EQ(s.assessed, s.aligned + s.resynchronized + s.buffered);
    return res;
}

TEST(RdmaTcpRecovery, MiddleboxResegmentationAssumeAligned) {
    for (const bool pass_offset : {true, false}) {
        const auto res = run_middlebox(60, recovery::strategy::assume_aligned, pass_offset);
        EXPECT_EQ(res.false_matches, 0u);
        // Only packets that happen to begin at a true segment start can be aligned (and are,
        // unless that header is cut by the packet end).
        EXPECT_LE(res.aligned, res.true_start_packets);
        EXPECT_GT(res.packets - res.aligned, res.packets / 2);  // most of them must be buffered
        if (pass_offset) {
            EXPECT_GT(res.reasons.at(reason_code::misaligned), 0u);  // 3 in 4 cut points are not 4-aligned
        } else {
            EXPECT_EQ(res.reasons.count(reason_code::misaligned), 0u);
        }
        // False candidates fall at the first checks: version byte or Connection ID.
        EXPECT_GT(res.reasons.at(reason_code::bad_version), 0u);
        EXPECT_EQ(res.reasons.count(reason_code::crc), 0u) << "nothing got as far as the CRC by chance";
    }
}

TEST(RdmaTcpRecovery, MiddleboxResegmentationScanWords) {
    for (const bool pass_offset : {true, false}) {
        const auto res = run_middlebox(61, recovery::strategy::scan_words, pass_offset);
        EXPECT_EQ(res.false_matches, 0u);
        EXPECT_EQ(res.missed_true_starts, 0u);
        EXPECT_GT(res.resynchronized, res.packets / 3);
        EXPECT_GT(res.reasons.at(reason_code::bad_version), 1000u);
    }
}

// Payload that carries a complete, valid RDMA/TCP segment of the same connection (e.g. a client
// protocol tunnelling one): a packet cut right at the embedded copy passes every check the
// draft lists. It can only be caught by the message-number plausibility, or it is a false match.
TEST(RdmaTcpRecovery, EmbeddedSegmentIsAFalseMatchUnlessTheMessageNumberGivesItAway) {
    const bytes inner = make_segment(message_type::send, 900000, seeds_test::text("inner segment payload"));
    const bytes outer = make_segment(message_type::send, 41, inner);
    const std::size_t inner_at = header_size(message_type::send);  // payload offset of the outer one
    const bytes cut(outer.begin() + static_cast<std::ptrdiff_t>(inner_at), outer.end());
    const std::uint32_t stream_offset = 4096 + static_cast<std::uint32_t>(inner_at);  // 4-aligned: not rejected

    recovery r(base_config());
    auto a = r.assess(cut.data(), cut.size(), stream_offset);
    ASSERT_EQ(a.candidates.size(), 2u);  // the embedded segment, then the outer CRC as a candidate
    EXPECT_EQ(a.verdict, verdict::aligned);
    EXPECT_EQ(a.candidates[0].reason, reason_code::accepted);
    EXPECT_TRUE(a.candidates[0].crc_checked);
    std::size_t false_matches =
        a.candidates[0].reason == reason_code::accepted ? 1 : 0;  // offset 0 is not a true start
    EXPECT_EQ(false_matches, 1u);
    EXPECT_NE(a.candidates[1].reason, reason_code::accepted);  // the outer CRC: 4 bytes, no header fits

    recovery::settings cfg = base_config();
    cfg.check_message_number = true;
    cfg.next_message_number = 40;
    cfg.message_window = 16;
    recovery checked(cfg);
    a = checked.assess(cut.data(), cut.size(), stream_offset);
    EXPECT_EQ(a.verdict, verdict::buffer);
    EXPECT_EQ(a.candidates[0].reason, reason_code::message_number);
}

TEST(RdmaTcpRecovery, EmbeddedHeaderWithBadCrcOrRunningPastThePacket) {
    bytes inner = make_segment(message_type::send, 41, bytes(64, 0x33));
    inner[inner.size() - 1] ^= 0x55;  // CRC wrong
    const bytes outer = make_segment(message_type::send, 40, inner);
    const bytes cut(outer.begin() + 24, outer.end());
    recovery r(base_config());
    auto a = r.assess(cut.data(), cut.size(), 24);
    EXPECT_EQ(a.verdict, verdict::buffer);
    EXPECT_EQ(a.candidates[0].reason, reason_code::crc);

    // Only the embedded header fits in the packet: nothing but the header can be checked.
    const bytes head(cut.begin(), cut.begin() + 40);
    a = r.assess(head.data(), head.size(), 24);
    EXPECT_EQ(a.verdict, verdict::aligned);  // a false match: the header alone cannot tell
    EXPECT_FALSE(a.candidates[0].crc_checked);
    EXPECT_TRUE(a.partial_tail);
    r.config().accept_partial = false;
    a = r.assess(head.data(), head.size(), 24);
    EXPECT_EQ(a.verdict, verdict::buffer);
    EXPECT_EQ(a.candidates[0].reason, reason_code::incomplete);
}

TEST(RdmaTcpRecovery, EachRejectionReason) {
    recovery r(base_config());
    const bytes good = make_segment(message_type::send, 5, bytes(10, 1));
    auto reason = [&](const bytes& b, std::optional<std::uint32_t> off = std::nullopt) {
        return r.examine(b.data(), b.size(), 0, off).reason;
    };
    EXPECT_EQ(reason(good), reason_code::accepted);
    EXPECT_EQ(reason(good, 8), reason_code::accepted);
    EXPECT_EQ(reason(good, 2), reason_code::misaligned);
    EXPECT_EQ(reason(bytes(good.begin(), good.begin() + 23)), reason_code::truncated_header);
    EXPECT_EQ(reason({}), reason_code::truncated_header);
    bytes b = good;
    b[0] = 2;
    EXPECT_EQ(reason(b), reason_code::bad_version);
    b = good;
    b[11] ^= 1;
    EXPECT_EQ(reason(b), reason_code::connection_id);
    b = good;
    b[18] = 1;
    EXPECT_EQ(reason(b), reason_code::reserved_bits);
    r.config().ignore_reserved_bits = true;
    EXPECT_EQ(reason(b), reason_code::crc);  // now the CRC objects to the edit
    r.config().ignore_reserved_bits = false;
    b = good;
    put_be32(b.data() + 20, 4);  // B set with Data Offset 4
    EXPECT_EQ(reason(b), reason_code::inconsistent_header);
    b = good;
    b[30] ^= 1;
    EXPECT_EQ(reason(b), reason_code::crc);
    r.config().check_crc = false;
    EXPECT_EQ(reason(b), reason_code::accepted);
    r.config().check_crc = true;
    // Read responses are checked against our outstanding read requests.
    const bytes resp = make_segment(message_type::read_response, 77, bytes(8, 2));
    r.config().check_message_number = true;
    r.config().read_response_first = 70;
    r.config().read_responses_outstanding = 8;
    EXPECT_EQ(reason(resp), reason_code::accepted);
    r.config().read_responses_outstanding = 7;
    EXPECT_EQ(reason(resp), reason_code::message_number);
    r.config().read_response_first = 0xFFFFFFF0u;  // windows wrap around 2^32
    r.config().read_responses_outstanding = 100;
    EXPECT_EQ(reason(resp), reason_code::accepted);
    for (int i = 0; i < static_cast<int>(recovery::kReasonCount); ++i)
        EXPECT_STRNE(recovery::to_string(static_cast<reason_code>(i)), "unknown");
    for (verdict v : {verdict::aligned, verdict::resynchronized, verdict::buffer})
        EXPECT_STRNE(recovery::to_string(v), "unknown");
}

// A different connection's segments (another random Connection ID) are never accepted.
TEST(RdmaTcpRecovery, OtherConnectionsAreRejectedByConnectionId) {
    std::mt19937_64 rng(70);
    recovery r(base_config());
    for (int i = 0; i < 500; ++i) {
        const bytes s = make_segment(message_type::send, 1, seeds_test::random_bytes(rng, 100), rng());
        const auto a = r.assess(s.data(), s.size(), 0);
        EXPECT_EQ(a.verdict, verdict::buffer);
        EXPECT_EQ(a.candidates[0].reason, reason_code::connection_id);
    }
}

}  // namespace
}  // namespace rnic::proto::rdmatcp
