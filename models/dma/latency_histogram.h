// A latency histogram with fixed bucket edges in nanoseconds (plain C++): the DMA engine keeps one
// of DMA read round trips. Buckets are "at most N ns"; the last one counts everything above.
#pragma once

#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <vector>

namespace rnic {

class latency_histogram {
public:
    latency_histogram()
        : edges_ns_({250, 500, 550, 600, 650, 700, 800, 900, 1000, 1250, 1500, 2000, 3000, 5000, 10000, 20000, 50000,
                     100000}),
          counts_(edges_ns_.size() + 1, 0) {}

    void add(std::uint64_t ps) {
        const double ns = static_cast<double>(ps) / 1000.0;
        const auto it = std::lower_bound(edges_ns_.begin(), edges_ns_.end(), ns);
        ++counts_[static_cast<std::size_t>(it - edges_ns_.begin())];
        if (count_ == 0 || ps < min_ps_) min_ps_ = ps;
        if (ps > max_ps_) max_ps_ = ps;
        sum_ps_ += ps;
        ++count_;
    }
    std::uint64_t count() const { return count_; }
    const std::vector<std::uint64_t>& counts() const { return counts_; }
    const std::vector<double>& edges_ns() const { return edges_ns_; }

    // {"count", "min_ns", "mean_ns", "max_ns", "buckets": [{"le_ns": edge or "inf", "count"}]}
    boost::json::object json() const {
        boost::json::object o;
        o["count"] = count_;
        o["min_ns"] = count_ ? static_cast<double>(min_ps_) / 1000.0 : 0.0;
        o["mean_ns"] = count_ ? static_cast<double>(sum_ps_) / static_cast<double>(count_) / 1000.0 : 0.0;
        o["max_ns"] = static_cast<double>(max_ps_) / 1000.0;
        boost::json::array b;
        for (std::size_t i = 0; i < counts_.size(); ++i) {
            if (i < edges_ns_.size()) {
                b.push_back({{"le_ns", edges_ns_[i]}, {"count", counts_[i]}});
            } else {
                b.push_back({{"le_ns", "inf"}, {"count", counts_[i]}});
            }
        }
        o["buckets"] = std::move(b);
        return o;
    }

private:
    std::vector<double> edges_ns_;
    std::vector<std::uint64_t> counts_;
    std::uint64_t count_ = 0, min_ps_ = 0, max_ps_ = 0, sum_ps_ = 0;
};

}  // namespace rnic
