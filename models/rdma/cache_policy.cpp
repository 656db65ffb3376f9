#include "rdma/cache_policy.h"

#include <stdexcept>

namespace rnic {

std::string cache_policy::check(const config& c) {
    if (c.entries == 0) return "a cache needs at least one entry";
    if (c.associativity == 0 || c.associativity > c.entries) {
        return "associativity " + std::to_string(c.associativity) + " is not in 1.." + std::to_string(c.entries);
    }
    if (c.entries % c.associativity != 0) {
        return std::to_string(c.entries) + " entries do not split into sets of " + std::to_string(c.associativity);
    }
    return "";
}

cache_policy::replacement cache_policy::parse(const std::string& name) {
    if (name == "lru") return replacement::lru;
    if (name == "fifo") return replacement::fifo;
    if (name == "random") return replacement::random;
    throw std::invalid_argument("unknown replacement policy \"" + name + "\"");
}

cache_policy::cache_policy(const config& c)
    : cfg_(c), sets_(0), rng_(c.seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL) {
    const std::string why = check(c);
    if (!why.empty()) throw std::invalid_argument(why);
    sets_ = c.entries / c.associativity;
    lines_.resize(c.entries);
}

int cache_policy::find(std::uint64_t key) const {
    const std::uint32_t base = static_cast<std::uint32_t>(key % sets_) * cfg_.associativity;
    for (std::uint32_t w = 0; w < cfg_.associativity; ++w) {
        const line_state& l = lines_[base + w];
        if (l.valid && l.key == key) return static_cast<int>(base + w);
    }
    return -1;
}

bool cache_policy::contains(std::uint64_t key) const {
    return find(key) >= 0;
}

std::uint64_t cache_policy::next_random() {
    // splitmix64: deterministic for a seed, independent of the platform's other generators.
    std::uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint32_t cache_policy::victim(std::uint32_t set) {
    const std::uint32_t base = set * cfg_.associativity;
    for (std::uint32_t w = 0; w < cfg_.associativity; ++w) {
        if (!lines_[base + w].valid) return base + w;
    }
    if (cfg_.policy == replacement::random) {
        return base + static_cast<std::uint32_t>(next_random() % cfg_.associativity);
    }
    // lru and fifo both take the smallest stamp; they differ in when the stamp is set.
    std::uint32_t oldest = base;
    for (std::uint32_t w = 1; w < cfg_.associativity; ++w) {
        if (lines_[base + w].stamp < lines_[oldest].stamp) oldest = base + w;
    }
    return oldest;
}

cache_policy::outcome cache_policy::access(std::uint64_t key, bool write) {
    outcome o;
    ++clock_;
    const int at = find(key);
    if (at >= 0) {
        line_state& l = lines_[static_cast<std::size_t>(at)];
        if (cfg_.policy == replacement::lru) l.stamp = clock_;
        l.dirty = l.dirty || write;
        ++hits_;
        o.hit = true;
        o.line = static_cast<std::uint32_t>(at);
        return o;
    }
    ++misses_;
    o.line = victim(static_cast<std::uint32_t>(key % sets_));
    line_state& l = lines_[o.line];
    if (l.valid) {
        ++evictions_;
        o.evicted = true;
        o.victim_key = l.key;
        o.victim_dirty = l.dirty;
        if (l.dirty) ++writebacks_;
    }
    l = {true, write, key, clock_};
    return o;
}

bool cache_policy::invalidate(std::uint64_t key) {
    const int at = find(key);
    if (at < 0) return false;
    lines_[static_cast<std::size_t>(at)] = line_state{};
    return true;
}

}  // namespace rnic
