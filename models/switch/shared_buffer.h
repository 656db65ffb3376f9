// Admission and accounting of a shared-buffer switch: one pool of buffer memory shared by every
// output queue, with the Dynamic Threshold of Choudhury & Hahne ("Dynamic queue length thresholds
// for shared-memory packet switches", IEEE/ACM ToN 6(2), 1998), the "alpha" of shared-buffer switch
// ASICs; optional ECN marking (RFC 3168) and priority flow control (IEEE 802.1Qbb, priority 0 only).
// Plain C++ (no SystemC): the switch model asks it whether a frame may enter and tells it when a
// frame has left; the unit tests call it directly.
//
// Quantities are bytes of the frame as carried by the model (Ethernet header to payload end, no
// preamble/FCS/IFG; a real ASIC counts cells, we count bytes). Every copy of a frame (a flooded
// frame has one per output port) is admitted, charged and released on its own.
//
// Admission of a frame of L bytes from ingress port p to output queue i:
//
//  * PFC off. The whole buffer B is shared. With q_i the bytes in output queue i and Q the bytes
//    in all output queues (both before this frame), the frame is admitted iff
//        q_i + L <= alpha * (B - Q)   and   Q + L <= B
//    and dropped otherwise (drop-tail): cause dt_threshold when the first test fails, buffer_full
//    when only the second fails. The comparison is done in double precision (exact for byte counts
//    below 2^53 when alpha is a power of two, as with the 2^k alphas of ASIC configurations).
//  * PFC on. Each ingress port has `pfc_headroom` bytes of its own, so the shared part is
//    S = B - ports * headroom. The rule above is applied to the shared part only: q_i is then the
//    bytes of queue i charged to the shared part, Q the bytes of all queues charged to it and B is
//    replaced by S. A frame the shared part refuses is charged to its ingress port's headroom if it
//    fits there (headroom bytes of p + L <= pfc_headroom), and dropped otherwise (cause
//    headroom_full). Each frame remembers the part it was charged to and gives the bytes back there.
//
// ECN (when on): a frame admitted to output queue i is "congested" iff q_i >= ecn_threshold, where
// q_i is all bytes queued for output i (shared and headroom) BEFORE this frame is enqueued. The
// switch then sets CE if the packet is ECN-capable IPv4 (proto::net::mark_ecn_ce: ECT(0)/ECT(1) ->
// CE, Not-ECT and non-IPv4 untouched, CE stays CE).
//
// PFC (when on), per ingress port p with I_p = bytes of frames from p still buffered (both parts):
//  * XOFF: p enters the paused state, and the switch must send a PAUSE (quanta 0xFFFF) to p's
//    sender, when after an admission attempt I_p > pfc_xoff, or when a frame from p had to go to
//    (or was refused by) the headroom: the headroom holds what is in flight after a pause, so
//    using it means the sender must stop, whatever xoff says.
//  * XON: a paused ingress port leaves the paused state, and the switch sends a PAUSE with quanta 0,
//    when after a release I_p <= pfc_xon.
//  Re-sending the PAUSE before it expires while p stays paused is the switch's job (it has the clock).
#pragma once

#include <cstdint>
#include <vector>

namespace rnic {

struct shared_buffer_config {
    int ports = 1;
    std::uint64_t buffer_bytes = 0;  // B
    double alpha = 1.0;              // Dynamic Threshold factor
    bool ecn = false;
    std::uint64_t ecn_threshold = 0;  // bytes in the output queue (before enqueue) from which to mark
    bool pfc = false;
    std::uint64_t pfc_xoff = 0;      // pause the ingress's sender when its bytes exceed this
    std::uint64_t pfc_xon = 0;       // resume it when they fall to this or below
    std::uint64_t pfc_headroom = 0;  // bytes reserved per ingress port
};

class shared_buffer {
public:
    enum class verdict { admitted, dt_threshold, buffer_full, headroom_full };
    enum class part : std::uint8_t { shared, headroom };
    enum class pfc_signal { none, xoff, xon };

    struct admission {
        verdict result = verdict::admitted;
        part charged = part::shared;  // where the bytes went (when admitted)
        bool ecn_congested = false;   // mark CE (if the packet is ECN-capable)
        pfc_signal pfc = pfc_signal::none;
        bool admitted() const { return result == verdict::admitted; }
    };

    // Throws std::invalid_argument on an inconsistent configuration (no ports, no buffer, alpha <= 0,
    // xon above xoff, headrooms that leave no shared part).
    explicit shared_buffer(const shared_buffer_config& cfg);

    admission admit(int ingress, int output, std::uint32_t len);
    // Gives back the bytes of a frame admitted with admit(ingress, output, len) -> charged.
    pfc_signal release(int ingress, int output, std::uint32_t len, part charged);

    const shared_buffer_config& config() const { return cfg_; }
    std::uint64_t shared_capacity() const { return shared_capacity_; }  // S (B when PFC is off)
    std::uint64_t queue_bytes(int output) const { return queue_[output] + queue_headroom_[output]; }
    std::uint64_t queue_shared_bytes(int output) const { return queue_[output]; }
    std::uint64_t ingress_bytes(int ingress) const { return ingress_[ingress]; }
    std::uint64_t ingress_headroom_bytes(int ingress) const { return headroom_[ingress]; }
    std::uint64_t shared_used() const { return shared_used_; }
    std::uint64_t total_used() const { return total_used_; }
    bool paused(int ingress) const { return paused_[ingress]; }  // PFC: XOFF sent, XON not yet

    std::uint64_t total_peak() const { return total_peak_; }
    std::uint64_t queue_peak(int output) const { return queue_peak_[output]; }
    std::uint64_t ingress_peak(int ingress) const { return ingress_peak_[ingress]; }

private:
    verdict shared_verdict(int output, std::uint32_t len) const;

    shared_buffer_config cfg_;
    std::uint64_t shared_capacity_ = 0;
    std::uint64_t shared_used_ = 0, total_used_ = 0, total_peak_ = 0;
    std::vector<std::uint64_t> queue_, queue_headroom_, queue_peak_;  // per output
    std::vector<std::uint64_t> ingress_, headroom_, ingress_peak_;    // per ingress
    std::vector<bool> paused_;
};

// The maximum of a piecewise-constant quantity (a queue's occupancy) over each interval
// [k*T, (k+1)*T) of simulated time, kept without a timer: the owner reports every change, in time
// order, and the intervals in between are closed when the next change (or a read) comes. A value
// held for no time (set twice at the same instant) still counts. Times in picoseconds; T = 0 keeps
// nothing.
class interval_max_trace {
public:
    explicit interval_max_trace(std::uint64_t interval_ps = 0) : interval_(interval_ps) {}

    // The quantity is `value` from `t_ps` on (t_ps never decreases from one call to the next).
    void set(std::uint64_t t_ps, std::uint64_t value);
    // One maximum per interval from time 0 to the one holding `now_ps` (in progress, last).
    std::vector<std::uint64_t> maxima(std::uint64_t now_ps) const;
    std::uint64_t interval_ps() const { return interval_; }

private:
    void close_until(std::uint64_t t_ps, bool changes_at_t);

    std::uint64_t interval_ = 0;
    std::uint64_t value_ = 0, current_max_ = 0, index_ = 0;
    std::vector<std::uint64_t> closed_;
};

}  // namespace rnic
