// The placement and replacement policy of the RDMA engine's context cache (context_cache.h): a
// set-associative array of tags with valid and dirty bits, no data and no SystemC. `entries` lines
// in entries / associativity sets; a key lives in set key % sets. associativity 1 is direct mapped,
// associativity == entries fully associative. Replacement picks, in a full set, the least recently
// used line (lru), the oldest fill (fifo) or a line drawn from a seeded generator (random); an
// invalid line is always taken first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rnic {

class cache_policy {
public:
    enum class replacement { lru, fifo, random };
    struct config {
        std::uint32_t entries = 16;
        std::uint32_t associativity = 1;
        replacement policy = replacement::lru;
        std::uint64_t seed = 1;
    };
    // What one access did.
    struct outcome {
        bool hit = false;
        std::uint32_t line = 0;     // the line that now holds the key (0 .. entries - 1)
        bool evicted = false;       // a valid line of another key was replaced
        bool victim_dirty = false;  // ... and it had been written: it must be written back first
        std::uint64_t victim_key = 0;
    };

    // "" when `c` is a valid geometry, else why not.
    static std::string check(const config& c);
    static replacement parse(const std::string& name);  // "lru", "fifo", "random"
    explicit cache_policy(const config& c);

    // Looks `key` up; on a miss fills a line (evicting one if the set is full). `write` marks it dirty.
    outcome access(std::uint64_t key, bool write);
    // Drops `key` without writing it back (its context was re-created or destroyed); false if absent.
    bool invalidate(std::uint64_t key);
    bool contains(std::uint64_t key) const;

    std::uint32_t sets() const { return sets_; }
    std::uint64_t hits() const { return hits_; }
    std::uint64_t misses() const { return misses_; }
    std::uint64_t evictions() const { return evictions_; }
    std::uint64_t writebacks() const { return writebacks_; }

private:
    struct line_state {
        bool valid = false, dirty = false;
        std::uint64_t key = 0;
        std::uint64_t stamp = 0;  // lru: last use; fifo: fill
    };
    int find(std::uint64_t key) const;  // line index, -1
    std::uint32_t victim(std::uint32_t set);
    std::uint64_t next_random();

    config cfg_;
    std::uint32_t sets_;
    std::vector<line_state> lines_;  // set s holds lines s*ways .. s*ways + ways - 1
    std::uint64_t clock_ = 0, rng_;
    std::uint64_t hits_ = 0, misses_ = 0, evictions_ = 0, writebacks_ = 0;
};

}  // namespace rnic
