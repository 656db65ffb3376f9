// The TCP engine's out-of-order receive path: what an out-of-order segment may keep in NIC buffer
// memory once the framer has placed what it could, and FPDUs joined across segments (markers). The
// state it leaves (placed frames, held bytes, the pool's accounting) is reassembly_'s (reassembly.h).
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/sim_log.h"
#include "toe/tcp_engine_connection.h"

namespace rnic {

using toe_detail::time_ns;

bool tcp_engine::admit_out_of_order(connection& c, const net::parsed_tcp_frame& f, const std::uint8_t* payload,
                                    sc_core::sc_time& delay) {
    if (f.payload_len == 0 || c.tcp().state() != tcp::state::established) return true;
    const std::uint64_t delivered = c.tcp().receive_stream_delivered();
    const std::uint32_t rcv_nxt = c.tcp().irs() + 1 + static_cast<std::uint32_t>(delivered);
    const auto ahead = static_cast<std::int32_t>(f.tcp.seq - rcv_nxt);
    if (ahead <= 0) return true;  // in order (or old data that TCP will trim)
    ++rx_ooo_segments_;
    // The receive path decides what needs NIC buffer: with markers or the alignment assumption,
    // whole FPDUs found in the segment are placed straight into host memory.
    if ((f.tcp.flags & net::tcp_flags::kUrg) != 0) {
        ooo_out->urgent_pointer(c.id(), delivered + static_cast<std::uint64_t>(ahead), f.tcp.urgent_pointer);
    }
    const std::size_t placed = ooo_out->place_out_of_order(c.id(), delivered + static_cast<std::uint64_t>(ahead),
                                                           payload, f.payload_len, delay);
    note_placed_out_of_order();
    const std::size_t need = placed >= f.payload_len ? 0 : f.payload_len - placed;
    if (!reassembly_.fits(need)) {
        // No room to hold it: drop it as if lost; the peer retransmits (TCP recovers).
        ++rx_drops_buffer_full_;
        RNIC_MLOG_D(debug, toe, delay, "connection " << c.id() << ": NIC buffer full, out-of-order segment dropped");
        return false;
    }
    if (placed < f.payload_len) join_split_fpdus(c, delivered + ahead, payload, f.payload_len, delay);
    return true;
}

void tcp_engine::join_split_fpdus(connection& c, std::uint64_t seg, const std::uint8_t* payload, std::size_t len,
                                  sc_core::sc_time& delay) {
    // RFC 5044 Appendix A: FPDUs cut by the segment's edges may be whole together with the
    // out-of-order bytes already held on either side; the framer places those. It needs at most
    // `reach` held bytes on each side, however long the held run is.
    const std::size_t reach = ooo_out->split_fpdu_reach(c.id());
    if (reach == 0) return;
    const std::uint64_t seg_end = seg + len;
    const std::uint64_t from = std::max(c.tcp().held_run_start(seg), seg > reach ? seg - reach : 0);
    const std::uint64_t to = std::min(c.tcp().held_run_end(seg_end), seg_end + reach);
    if (from == seg && to == seg_end) return;  // nothing held next to it
    join_scratch_.resize(static_cast<std::size_t>(to - from));
    if (!c.tcp().copy_held(from, seg, join_scratch_.data()) ||
        !c.tcp().copy_held(seg_end, to, join_scratch_.data() + (seg_end - from))) {
        return;
    }
    std::memcpy(join_scratch_.data() + (seg - from), payload, len);
    ooo_out->place_split_fpdus(c.id(), from, join_scratch_.data(), join_scratch_.size(), seg, len, delay);
    note_placed_out_of_order();
}

void tcp_engine::note_placed_out_of_order() {
    // Frames placed out of order go over the same write queue to the host bus as the in-order
    // stream: they hold the next segment back while the queue is full (placement_backlog).
    const placement_landing placed = ooo_out->last_placement();
    placing_.add(to_ps(sc_core::sc_time_stamp() + placed.landed), placed.bytes);
}

}  // namespace rnic
