// The out-of-order bytes a connection holds, as its owner reads them to join frames split across
// segments (Connection::held_run_start / held_run_end / copy_held, in receive-stream offsets).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "hand_pair.h"

namespace {

namespace tcp = rnic::proto::tcp;

// B holds segments 2 and 3 of A's first five (segment 1 lost), and segment 5 (segment 4 lost).
struct held : handpair::hand_pair<> {
    std::vector<std::uint8_t> pattern = std::vector<std::uint8_t>(5 * 1000);
    held() {
        for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::uint8_t>(i * 7 + 3);
        handshake();
        a.conn->on_send_data(now, 1000);
        for (int i = 1; i < 5; ++i) {
            a.conn->mark_boundary(1000 * static_cast<std::uint64_t>(i));
            a.conn->on_send_data(now, 1000);
        }
        for (int i = 0; i < 5; ++i) {
            const handpair::segment s = a.out.front();
            a.out.pop_front();
            if (i == 0 || i == 3) continue;  // lost
            now += 1000;
            b.conn->on_segment(now, s.h, pattern.data() + 1000 * i, s.len);
        }
    }
};

TEST(TcpHeldRuns, RunsAroundAnOffsetAndTheirBytes) {
    held h;
    ASSERT_EQ(h.b.conn->receive_stream_delivered(), 0u);
    ASSERT_EQ(h.b.conn->out_of_order_bytes(), 3000u);
    // Held: [1000, 3000) and [4000, 5000).
    EXPECT_EQ(h.b.conn->held_run_start(3000), 1000u);  // the run ending at 3000
    EXPECT_EQ(h.b.conn->held_run_start(2000), 1000u);  // inside it
    EXPECT_EQ(h.b.conn->held_run_start(1000), 1000u);  // nothing below 1000
    EXPECT_EQ(h.b.conn->held_run_start(4000), 4000u);  // the hole [3000, 4000) is not held
    EXPECT_EQ(h.b.conn->held_run_end(4000), 5000u);
    EXPECT_EQ(h.b.conn->held_run_end(1000), 3000u);
    EXPECT_EQ(h.b.conn->held_run_end(3000), 3000u);
    EXPECT_EQ(h.b.conn->held_run_end(5000), 5000u);
    std::vector<std::uint8_t> out(2000);
    ASSERT_TRUE(h.b.conn->copy_held(1000, 3000, out.data()));
    EXPECT_EQ(out, std::vector<std::uint8_t>(h.pattern.begin() + 1000, h.pattern.begin() + 3000));
    ASSERT_TRUE(h.b.conn->copy_held(4500, 5000, out.data()));
    EXPECT_EQ(std::vector<std::uint8_t>(out.begin(), out.begin() + 500),
              std::vector<std::uint8_t>(h.pattern.begin() + 4500, h.pattern.end()));
    EXPECT_FALSE(h.b.conn->copy_held(2500, 4500, out.data()));  // spans the hole
    EXPECT_FALSE(h.b.conn->copy_held(0, 10, out.data()));       // not held
    EXPECT_TRUE(h.b.conn->copy_held(10, 10, out.data()));       // empty
}

TEST(TcpHeldRuns, OffsetsFollowDelivery) {
    held h;
    // The first segment arrives: [0, 3000) is delivered, [4000, 5000) stays held.
    h.a.conn->on_timer(h.now + 10'000'000'000ULL);  // RTO: the first segment again
    ASSERT_FALSE(h.a.out.empty());
    const handpair::segment s = h.a.out.back();
    h.b.conn->on_segment(h.now + 10'000'000'000ULL, s.h, h.pattern.data(), s.len);
    ASSERT_EQ(h.b.conn->receive_stream_delivered(), 3000u);
    EXPECT_EQ(h.b.conn->out_of_order_bytes(), 1000u);
    EXPECT_EQ(h.b.conn->held_run_end(4000), 5000u);
    EXPECT_EQ(h.b.conn->held_run_start(5000), 4000u);
    std::vector<std::uint8_t> out(1000);
    ASSERT_TRUE(h.b.conn->copy_held(4000, 5000, out.data()));
    EXPECT_EQ(out, std::vector<std::uint8_t>(h.pattern.begin() + 4000, h.pattern.end()));
}

}  // namespace
