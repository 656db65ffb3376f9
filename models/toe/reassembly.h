// The one owner of the NIC's out-of-order receive state (docs/architecture.md, "Who owns
// out-of-order state"): per connection, the frames the framer placed straight into host memory
// ahead of RCV.NXT, and the out-of-order bytes held in NIC buffer memory for the rest, with their
// accounting against the buffer's reassembly pool. The held bytes themselves are the TCP state
// machine's receive queue (proto::tcp::Connection, RFC 9293 §3.10.7.4); this part of the TCP engine
// counts what of them needs modelled memory.
//  reassembly_if        framer -> TCP engine (export reasm_in): frames placed, and found again in order.
//  reassembly_pool_if   TCP engine -> buffer memory: the pool's bytes and its port's time.
#pragma once

#include <cstdint>
#include <map>
#include <systemc>
#include <vector>

#include "buffer/reassembly_pool.h"

namespace rnic {

// The framer's side: what it placed out of order and what it meets again in the in-order stream.
// A frame is named by its connection and its receive-stream key (the framer's: the TCP stream
// offset of the frame's first byte, as the framer counts it from full operation).
class reassembly_if : public virtual sc_core::sc_interface {
public:
    // A frame of `wire_len` stream bytes at `key` was placed in host memory out of order.
    virtual void note_placed(std::uint32_t conn, std::uint64_t key, std::uint32_t wire_len) = 0;
    // Whether the frame at `key` was placed out of order and not yet met in order (a duplicate).
    virtual bool is_placed(std::uint32_t conn, std::uint64_t key) const = 0;
    // The in-order stream reached the frame at `key`: true when it was placed out of order, which
    // is then forgotten (delivery still happens in order, RFC 5041 §5, without a second DMA).
    virtual bool take_placed(std::uint32_t conn, std::uint64_t key) = 0;
};

class reassembly : public reassembly_if {
public:
    explicit reassembly(reassembly_pool_if& pool) : pool_(pool) {}

    // reassembly_if
    void note_placed(std::uint32_t conn, std::uint64_t key, std::uint32_t wire_len) override;
    bool is_placed(std::uint32_t conn, std::uint64_t key) const override;
    bool take_placed(std::uint32_t conn, std::uint64_t key) override;

    // The TCP engine's side.
    // A new connection under `conn`: it starts with nothing held and no peak.
    void open(std::uint32_t conn);
    // Whether `need` more bytes fit in the pool now (an out-of-order segment's unplaced bytes).
    bool fits(std::uint64_t need) const { return need <= pool_.rx_free(); }
    // After TCP took a segment: `out_of_order` bytes are held past RCV.NXT; those not placed
    // directly occupy the pool (written in, or read back out once the hole is filled).
    void account(std::uint32_t conn, std::uint64_t out_of_order, sc_core::sc_time& delay);
    // Bytes past RCV.NXT the connection could hold: what it holds in the pool plus the pool's free
    // bytes (rnic.tcp.window_clamp: the window never invites more).
    std::uint64_t window_cap(std::uint32_t conn) const { return held(conn) + pool_.rx_free(); }
    // The connection was freed: its pool bytes go back and its placed frames are forgotten; its
    // peak stays readable until `conn` is opened again.
    void forget(std::uint32_t conn);

    std::uint64_t held(std::uint32_t conn) const;                     // bytes in the pool now
    std::uint64_t peak(std::uint32_t conn) const;                     // the most at once
    std::uint64_t placed_pending(std::uint32_t conn) const;           // placed, not yet delivered in order
    std::uint64_t bytes_buffered() const { return bytes_buffered_; }  // written into the pool, all connections

    // How many connections hold bytes past RCV.NXT (a hole before them) at once, at most; and how
    // many did when the bytes held in the pool, over all connections, reached their peak. Study
    // (f): the buffer a receiver needs is the port's rate times a hole's lifetime times the share
    // of arriving bytes behind a hole, which these two measure instead of assuming.
    std::uint32_t connections_with_hole_peak() const { return with_hole_peak_; }
    std::uint32_t connections_with_hole_at_pool_peak() const { return with_hole_at_pool_peak_; }
    std::uint64_t pool_held_peak() const { return held_total_peak_; }

private:
    struct connection_state {
        std::map<std::uint64_t, std::uint32_t> placed;  // frames placed out of order: key -> wire length
        std::uint64_t placed_bytes = 0;                 // sum of their wire lengths
        std::uint64_t held = 0;                         // out-of-order bytes in the pool
        std::uint64_t peak = 0;
        bool hole = false;  // bytes held past RCV.NXT (placed or in the pool)
    };
    void set_hole(connection_state& st, bool hole);
    connection_state& state(std::uint32_t conn);
    const connection_state* find(std::uint32_t conn) const;

    reassembly_pool_if& pool_;
    std::vector<connection_state> conns_;  // by connection id (ids are table slots, reused)
    std::uint64_t bytes_buffered_ = 0;
    std::uint64_t held_total_ = 0;  // sum of every connection's `held`
    std::uint64_t held_total_peak_ = 0;
    std::uint32_t with_hole_ = 0;
    std::uint32_t with_hole_peak_ = 0;
    std::uint32_t with_hole_at_pool_peak_ = 0;
};

}  // namespace rnic
