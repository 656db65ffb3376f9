// qp_ready_set without the kernel: the transmit thread's round robin visits the marked QPs in the
// order a walk over every slot from its position would, wraps around once, and sees a QP cleared by
// the visit of another or marked past the words it had.
#include <gtest/gtest.h>

#include <vector>

#include "rdma/qp_ready_set.h"

namespace rnic::test {
namespace {

std::vector<std::uint32_t> visit_all(qp_ready_set& s, std::uint32_t from, std::uint32_t slots) {
    std::vector<std::uint32_t> seen;
    s.find_from(from, slots, [&](std::uint32_t qpn) {
        seen.push_back(qpn);
        return false;
    });
    return seen;
}

TEST(QpReadySet, VisitsMarkedQpsFromThePositionAndWrapsAroundOnce) {
    qp_ready_set s;
    for (std::uint32_t qpn : {3u, 64u, 65u, 130u, 4095u}) s.mark(qpn);
    EXPECT_EQ(visit_all(s, 65, 4096), (std::vector<std::uint32_t>{65, 130, 4095, 3, 64}));
    EXPECT_EQ(visit_all(s, 0, 4096), (std::vector<std::uint32_t>{3, 64, 65, 130, 4095}));
    // Only slots below `slots` exist; a position at or past them starts from 0.
    EXPECT_EQ(visit_all(s, 200, 131), (std::vector<std::uint32_t>{3, 64, 65, 130}));
}

TEST(QpReadySet, StopsAtTheFirstQpTheVisitTakes) {
    qp_ready_set s;
    for (std::uint32_t qpn : {1u, 5u, 9u}) s.mark(qpn);
    std::vector<std::uint32_t> seen;
    const std::int64_t found = s.find_from(6, 16, [&](std::uint32_t qpn) {
        seen.push_back(qpn);
        return qpn == 1;
    });
    EXPECT_EQ(found, 1);
    EXPECT_EQ(seen, (std::vector<std::uint32_t>{9, 1}));
    EXPECT_EQ(s.find_from(0, 16, [](std::uint32_t) { return false; }), -1);
}

TEST(QpReadySet, AQpClearedDuringTheVisitIsGoneAndOthersInItsWordStay) {
    qp_ready_set s;
    for (std::uint32_t qpn : {2u, 3u, 4u, 70u}) s.mark(qpn);
    s.find_from(0, 128, [&](std::uint32_t qpn) {
        if (qpn == 2) s.clear(4);  // a later QP of the same word, cleared before the walk gets there
        if (qpn == 3) s.clear(3);  // the QP being visited
        return false;
    });
    EXPECT_EQ(visit_all(s, 0, 128), (std::vector<std::uint32_t>{2, 70}));
    EXPECT_FALSE(s.contains(3));
    EXPECT_TRUE(s.contains(70));
    s.clear(100000);  // past every word: nothing to do
    EXPECT_FALSE(s.contains(100000));
}

}  // namespace
}  // namespace rnic::test
