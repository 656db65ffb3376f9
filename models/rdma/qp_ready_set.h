// The QPs the RDMA engine's transmit thread may find work on: every QP that was given something to
// send (a doorbell, a Read or atomic to answer, an RTR, a report owed to the peer) since the thread
// last found it with nothing. The thread visits only these, in QP-number order from its round-robin
// position, instead of every QP slot on every turn, so a turn costs the same with 4096 QPs as with
// one. It is a superset: a QP stays in it until the thread sees it has nothing (qp_ready_set users
// mark a QP whenever they give it work), so the QPs the thread serves, and the order, are the same
// as a walk over every slot would give.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rnic {

class qp_ready_set {
public:
    void mark(std::uint32_t qpn) {
        const std::size_t word = qpn / kBits;
        if (word >= words_.size()) words_.resize(word + 1, 0);
        words_[word] |= bit(qpn);
    }
    void clear(std::uint32_t qpn) {
        const std::size_t word = qpn / kBits;
        if (word < words_.size()) words_[word] &= ~bit(qpn);
    }
    bool contains(std::uint32_t qpn) const {
        const std::size_t word = qpn / kBits;
        return word < words_.size() && (words_[word] & bit(qpn)) != 0;
    }
    // Calls visit(qpn) for each marked QP below `slots`, ascending from `from` and then from 0 up to
    // `from`, until visit returns true; returns that QP, or -1. visit may clear the QP it is given.
    template <typename Visit>
    std::int64_t find_from(std::uint32_t from, std::uint32_t slots, Visit&& visit) {
        const std::int64_t found = find_in(from, slots, visit);
        return found >= 0 ? found : find_in(0, from < slots ? from : slots, visit);
    }

private:
    static constexpr std::uint32_t kBits = 64;
    static std::uint64_t bit(std::uint32_t qpn) { return std::uint64_t{1} << (qpn % kBits); }
    template <typename Visit>
    std::int64_t find_in(std::uint32_t begin, std::uint32_t end, Visit& visit) {
        for (std::uint32_t qpn = begin; qpn < end;) {
            const std::size_t word = qpn / kBits;
            if (word >= words_.size()) break;
            // The bits of this word at or after qpn (read afresh each time: visit may clear one).
            const std::uint64_t pending = words_[word] & (~std::uint64_t{0} << (qpn % kBits));
            if (pending == 0) {
                qpn = static_cast<std::uint32_t>((word + 1) * kBits);
                continue;
            }
            qpn = static_cast<std::uint32_t>(word * kBits + static_cast<std::uint32_t>(__builtin_ctzll(pending)));
            if (qpn >= end) break;
            if (visit(qpn)) return qpn;
            ++qpn;
        }
        return -1;
    }

    std::vector<std::uint64_t> words_;  // bit qpn % 64 of word qpn / 64
};

}  // namespace rnic
