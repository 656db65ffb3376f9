#include "rdma/context_store.h"

namespace rnic {

namespace {
// STag = 24-bit index << 8 | 8-bit key (RFC 5040 §2.2: the key is the consumer-owned part).
constexpr std::uint32_t stag_index(std::uint32_t stag) {
    return stag >> 8;
}
constexpr std::uint8_t stag_key(std::uint32_t stag) {
    return static_cast<std::uint8_t>(stag & 0xff);
}

// Makes the first free context of `table` a fresh one with `cfg`; its number, or -1 when all are in use.
template <typename Context, typename Config>
int claim_free(std::vector<Context>& table, const Config& cfg) {
    for (std::size_t i = 0; i < table.size(); ++i) {
        if (!table[i].valid) {
            table[i] = Context{};
            table[i].valid = true;
            table[i].cfg = cfg;
            return static_cast<int>(i);
        }
    }
    return -1;
}
}  // namespace

context_store::context_store(std::uint32_t max_qp, std::uint32_t max_cq, std::uint32_t max_mr)
    : qps_(max_qp), cqs_(max_cq), mrs_(max_mr) {}

// ---- queue pairs ---------------------------------------------------------------------------

qp_context* context_store::qp(std::uint32_t qpn) {
    return qpn < qps_.size() && qps_[qpn].valid ? &qps_[qpn] : nullptr;
}
const qp_context* context_store::qp(std::uint32_t qpn) const {
    return const_cast<context_store*>(this)->qp(qpn);
}

int context_store::create_qp(const qp_config& cfg) {
    if (cq(cfg.send_cq) == nullptr || cq(cfg.recv_cq) == nullptr) return -2;
    return claim_free(qps_, cfg);
}

void context_store::destroy_qp(std::uint32_t qpn) {
    for (auto it = conn_to_qp_.begin(); it != conn_to_qp_.end();) {
        it = it->second == qpn ? conn_to_qp_.erase(it) : std::next(it);
    }
    qps_[qpn] = qp_context{};
}

int context_store::qpn_of_connection(std::uint32_t conn) const {
    const auto it = conn_to_qp_.find(conn);
    return it == conn_to_qp_.end() ? -1 : static_cast<int>(it->second);
}

// ---- completion queues ---------------------------------------------------------------------

cq_context* context_store::cq(std::uint32_t cqn) {
    return cqn < cqs_.size() && cqs_[cqn].valid ? &cqs_[cqn] : nullptr;
}

int context_store::create_cq(const cq_config& cfg) {
    return claim_free(cqs_, cfg);
}

int context_store::destroy_cq(std::uint32_t cqn) {
    if (cq(cqn) == nullptr) return -1;
    for (const qp_context& qp : qps_) {
        if (qp.valid && (qp.cfg.send_cq == cqn || qp.cfg.recv_cq == cqn)) return -2;
    }
    cqs_[cqn] = cq_context{};
    return 0;
}

// ---- memory regions ------------------------------------------------------------------------

std::int64_t context_store::register_mr(const mr_config& cfg) {
    const std::size_t entries = cfg.pages != nullptr ? cfg.pages->pages.size() : 0;
    if (page_list_entries_ + entries > regmap::kPageListPoolEntries) return -1;
    // Index 0 is never used so that STag 0 stays invalid.
    for (std::size_t i = 1; i < mrs_.size(); ++i) {
        if (!mrs_[i].valid) {
            mr_context& mr = mrs_[i];
            mr.valid = true;
            mr.cfg = cfg;
            mr.key = static_cast<std::uint8_t>(mr.key + 1);  // a new key each time the index is reused
            page_list_entries_ += entries;
            return static_cast<std::int64_t>((static_cast<std::uint32_t>(i) << 8) | mr.key);
        }
    }
    return -1;
}

mr_context* context_store::lookup_stag(std::uint32_t stag) {
    const std::uint32_t idx = stag_index(stag);
    if (idx == 0 || idx >= mrs_.size() || !mrs_[idx].valid || mrs_[idx].key != stag_key(stag)) return nullptr;
    return &mrs_[idx];
}
const mr_context* context_store::lookup_stag(std::uint32_t stag) const {
    return const_cast<context_store*>(this)->lookup_stag(stag);
}

std::vector<std::uint32_t> context_store::valid_stags() const {
    std::vector<std::uint32_t> out;
    for (std::size_t i = 1; i < mrs_.size(); ++i) {
        if (mrs_[i].valid) out.push_back(static_cast<std::uint32_t>(i) << 8 | mrs_[i].key);
    }
    return out;
}

std::uint32_t context_store::stags_in_use() const {
    std::uint32_t n = 0;
    for (const mr_context& mr : mrs_) n += mr.valid ? 1 : 0;
    return n;
}

bool context_store::invalidate_stag(std::uint32_t stag) {
    mr_context* mr = lookup_stag(stag);
    if (mr == nullptr) return false;
    mr->valid = false;
    if (mr->cfg.pages != nullptr) {
        // Its page-list memory is free again; work already holding the list keeps its copy.
        page_list_entries_ -= mr->cfg.pages->pages.size();
        mr->cfg.pages.reset();
    }
    return true;
}

}  // namespace rnic
