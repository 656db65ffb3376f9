#include "toe/reassembly.h"

#include <algorithm>

namespace rnic {

reassembly::connection_state& reassembly::state(std::uint32_t conn) {
    if (conn >= conns_.size()) conns_.resize(static_cast<std::size_t>(conn) + 1);
    return conns_[conn];
}

const reassembly::connection_state* reassembly::find(std::uint32_t conn) const {
    return conn < conns_.size() ? &conns_[conn] : nullptr;
}

void reassembly::note_placed(std::uint32_t conn, std::uint64_t key, std::uint32_t wire_len) {
    connection_state& st = state(conn);
    st.placed[key] = wire_len;
    st.placed_bytes += wire_len;
}

bool reassembly::is_placed(std::uint32_t conn, std::uint64_t key) const {
    const connection_state* st = find(conn);
    return st != nullptr && st->placed.count(key) != 0;
}

bool reassembly::take_placed(std::uint32_t conn, std::uint64_t key) {
    if (conn >= conns_.size()) return false;
    connection_state& st = conns_[conn];
    const auto it = st.placed.find(key);
    if (it == st.placed.end()) return false;
    st.placed_bytes -= it->second;
    st.placed.erase(it);
    return true;
}

void reassembly::open(std::uint32_t conn) {
    connection_state& st = state(conn);
    set_hole(st, false);
    held_total_ -= st.held;
    st = connection_state{};
}

void reassembly::set_hole(connection_state& st, bool hole) {
    if (hole == st.hole) return;
    st.hole = hole;
    if (hole) {
        ++with_hole_;
        with_hole_peak_ = std::max(with_hole_peak_, with_hole_);
    } else {
        --with_hole_;
    }
}

void reassembly::account(std::uint32_t conn, std::uint64_t out_of_order, sc_core::sc_time& delay) {
    connection_state& st = state(conn);
    // Directly placed bytes need no NIC buffer; the rest of what TCP holds past RCV.NXT does.
    const std::uint64_t buffered = out_of_order > st.placed_bytes ? out_of_order - st.placed_bytes : 0;
    if (buffered > st.held) {
        const std::uint64_t more = buffered - st.held;
        if (!pool_.reserve_rx(more)) {
            // Admission checked the space; a retransmission overlapping held data can still differ
            // by a few bytes. Account what fits.
            pool_.reserve_rx(pool_.rx_free());
        }
        bytes_buffered_ += more;
        pool_.charge(more, delay);  // written into the reassembly store
    } else if (buffered < st.held) {
        const std::uint64_t less = st.held - buffered;
        pool_.release_rx(less);
        pool_.charge(less, delay);  // read back out when the hole was filled
    }
    held_total_ = held_total_ - st.held + buffered;
    st.held = buffered;
    st.peak = std::max(st.peak, buffered);
    set_hole(st, out_of_order > 0);
    if (held_total_ > held_total_peak_) {
        held_total_peak_ = held_total_;
        with_hole_at_pool_peak_ = with_hole_;
    }
}

void reassembly::forget(std::uint32_t conn) {
    if (conn >= conns_.size()) return;
    connection_state& st = conns_[conn];
    if (st.held > 0) {
        // Out-of-order bytes a reset left in the pool.
        pool_.release_rx(st.held);
        held_total_ -= st.held;
        st.held = 0;
    }
    set_hole(st, false);
    st.placed.clear();
    st.placed_bytes = 0;
}

std::uint64_t reassembly::held(std::uint32_t conn) const {
    const connection_state* st = find(conn);
    return st != nullptr ? st->held : 0;
}

std::uint64_t reassembly::peak(std::uint32_t conn) const {
    const connection_state* st = find(conn);
    return st != nullptr ? st->peak : 0;
}

std::uint64_t reassembly::placed_pending(std::uint32_t conn) const {
    const connection_state* st = find(conn);
    return st != nullptr ? st->placed_bytes : 0;
}

}  // namespace rnic
