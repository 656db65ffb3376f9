// What a network does to frames on their way: random loss, bursty loss (Gilbert-Elliott), loss from a
// trace, reordering, duplication, bit corruption, and a middlebox that re-segments TCP payloads.
// Plain C++ (no SystemC): the link model asks it what becomes of each frame; tests call it directly.
// Every decision comes from one seeded generator per direction, so runs repeat bit for bit.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace rnic {

struct fault_config {
    double loss = 0.0;  // independent loss probability per frame
    // Gilbert-Elliott two-state burst loss: per-frame transition probabilities and loss in each state.
    double ge_good_to_bad = 0.0;
    double ge_bad_to_good = 1.0;
    double ge_loss_good = 0.0;
    double ge_loss_bad = 0.0;
    std::set<std::uint64_t> trace_drops;  // 1-based frame numbers (in this direction) to drop
    double reorder = 0.0;                 // probability a frame is held back
    std::uint64_t reorder_delay_ps = 0;   // how long it is held back
    double duplicate = 0.0;               // probability a frame is sent twice
    double corrupt = 0.0;                 // probability one bit of the frame flips
    // A corrupting middlebox that also rewrites the TCP checksum: the MPA CRC must catch it.
    bool corrupt_fixes_checksum = false;
    double resegment = 0.0;  // probability a TCP data segment is split at a random point

    bool active() const;
};

// Parses a loss trace: one 1-based frame number per line, '#' starts a comment. Returns false and sets
// *error (naming the file and line) on bad input.
bool load_loss_trace(const std::string& path, std::set<std::uint64_t>* drops, std::string* error);

class fault_injector {
public:
    enum class cause { none, random, burst, trace };

    struct outcome {
        cause dropped = cause::none;
        bool corrupted = false;
        bool duplicated = false;
        std::uint64_t extra_delay_ps = 0;
        // The frames that go on the wire instead of the input (empty when dropped; two or more when
        // re-segmented or duplicated).
        std::vector<std::vector<std::uint8_t>> frames;
    };

    struct counters {
        std::uint64_t frames = 0, dropped_random = 0, dropped_burst = 0, dropped_trace = 0, reordered = 0,
                      duplicated = 0, corrupted = 0, resegmented = 0;
    };

    fault_injector(const fault_config& cfg, std::uint64_t seed);

    outcome apply(std::vector<std::uint8_t> frame);
    // No fault is configured (the configuration is fixed for the run): apply() would hand every
    // frame back unchanged, and its random draws could never matter. A link may then skip it and
    // count the frame with pass(), without apply()'s draws and outcome list.
    bool inert() const { return inert_; }
    void pass() { ++stats_.frames; }
    const counters& stats() const { return stats_; }

private:
    double uniform();  // [0, 1)
    std::uint64_t next();
    void corrupt_bit(std::vector<std::uint8_t>& frame);
    bool split_tcp(const std::vector<std::uint8_t>& frame, std::vector<std::vector<std::uint8_t>>& out);

    fault_config cfg_;
    bool inert_;
    std::uint64_t state_[4];
    bool ge_bad_ = false;
    counters stats_;
};

}  // namespace rnic
