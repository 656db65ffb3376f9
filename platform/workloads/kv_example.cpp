// A key-value store over one-sided RDMA, written as a walk-through of the verbs API.
// Read it top to bottom: the server's side first (set up, register, advertise, accept), then the
// client's (set up, connect, look up by RDMA Read, update under a CmpSwap lock), then the checks.
// Header: kv_example.h (table layout and what the example proves).
#include "workloads/kv_example.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "proto/bytes.h"

namespace rnic::examples {

namespace acc = regmap::mr_access;
using platform::remote_buffer;

const std::vector<std::string>& kv_keys() {
    static const std::vector<std::string> keys = {"alpha", "bravo",   "charlie", "delta",
                                                  "echo",  "foxtrot", "golf",    "hotel"};
    return keys;
}

std::uint64_t kv_hash(const std::string& key) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ULL;
    return h;
}

namespace {

// Simulated time with no completion after which the example gives up.
constexpr std::uint64_t kStallPs = 20'000'000'000ULL;  // 20 ms

// Each client's scratch memory (host a): where the device puts what atomics return and what Reads
// fetch, and where the CPU prepares what a Write sends.
constexpr std::uint64_t kSessionArea = 1024;
namespace local_off {
constexpr std::uint64_t kLockOriginal = 0;      // 8 bytes: CmpSwap's original value (taking the lock)
constexpr std::uint64_t kSlot = 64;             // kSlotSize bytes: an RDMA Read of one slot
constexpr std::uint64_t kValue = 256;           // slot_off::value_len bytes: the new value to Write
constexpr std::uint64_t kUnlockOriginal = 512;  // 8 bytes: CmpSwap's original value (releasing)
}  // namespace local_off

// The text an update stores, so that anyone reading the table sees who wrote which version.
std::string value_text(const std::string& key, std::uint64_t version, std::uint64_t writer) {
    if (writer == 0) return key + " = initial";
    return key + " = v" + std::to_string(version) + " by client " + std::to_string(writer);
}

void put_string(std::uint8_t* dst, std::size_t len, const std::string& s) {
    std::memset(dst, 0, len);
    std::memcpy(dst, s.data(), std::min(len - 1, s.size()));
}

std::string get_string(const std::uint8_t* src, std::size_t len) {
    return std::string(reinterpret_cast<const char*>(src), strnlen(reinterpret_cast<const char*>(src), len));
}

// The table as the server lays it out: each key in the first free slot from its hash on.
std::vector<std::uint8_t> initial_table() {
    std::vector<std::uint8_t> t(kSlots * kSlotSize, 0);
    for (const std::string& key : kv_keys()) {
        std::uint64_t i = kv_hash(key) % kSlots;
        while (t[i * kSlotSize + slot_off::kEy] != 0) i = (i + 1) % kSlots;
        std::uint8_t* slot = t.data() + i * kSlotSize;
        put_string(slot + slot_off::kEy, kKeyLen, key);
        put_string(slot + slot_off::kText, kTextLen, value_text(key, 0, 0));
    }
    return t;
}

// How many updates key `k` gets in the whole run: client c's update j goes to key j % kHotKeys.
std::uint64_t updates_of_key(const kv_example_config& cfg, std::uint32_t k) {
    const std::uint64_t per_client = cfg.updates / kHotKeys + (k < cfg.updates % kHotKeys ? 1 : 0);
    return per_client * cfg.clients;
}

// An 8-byte value the device placed in our memory.
std::uint64_t read_u64(drv::host_bus& bus, std::uint64_t addr) {
    std::uint8_t b[8];
    bus.mem_read(addr, b, sizeof b);
    return proto::get_le64(b);
}

std::uint32_t next_pow2(std::uint64_t n) {
    std::uint32_t p = 2;
    while (p < n) p <<= 1;
    return p;
}

}  // namespace

kv_example::kv_example(const kv_example_config& cfg, platform::oob_channel& oob, std::function<void()> on_done)
    : cfg_(cfg), oob_(oob), on_done_(std::move(on_done)) {}

void kv_example::check(const std::string& what, bool ok, const std::string& detail) {
    platform::record_check(result_, what, ok, detail);
}

void kv_example::fail(const std::string& what) {
    platform::record_failure(result_, what);
}

// =================================================================================================
// The server (host b): owns the table, then stays out of the way.
// =================================================================================================

void kv_example::server(drv::host_bus& bus, const drv::station_config& station) {
    // A verbs context is the application's handle on the device (ibv_open_device). open() resets
    // and initialises the RNIC: command ring, MSI-X, station MAC/IPv4 address.
    drv::context ctx(bus);
    std::uint32_t pd = 0;
    std::uint64_t table = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    std::vector<drv::queue_pair*> qps(cfg_.clients, nullptr);
    bool ok = ctx.open(station) == drv::status::ok &&
              // A protection domain groups the regions and QPs that may be used together: a peer
              // reaches a region only through a QP of the same domain (ibv_alloc_pd).
              ctx.alloc_pd(&pd) == drv::status::ok &&
              // Pinned host memory for the table (the device DMAs into it, so it must stay put).
              ctx.alloc_buffer(kSlots * kSlotSize, &table) == drv::status::ok;
    if (ok) {
        // The CPU fills the table before anyone can see it.
        const std::vector<std::uint8_t> image = initial_table();
        bus.mem_write(table, image.data(), image.size());
        // Registering the table gives it an STag, the key a peer puts in its RDMA requests, and says
        // what peers may do: read (lookups), write (updates) and atomics (the lock words). Nothing
        // local writes it, so no local_write (ibv_reg_mr).
        ok = ctx.reg_mr(pd, table, kSlots * kSlotSize, acc::remote_read | acc::remote_write | acc::remote_atomic,
                        &mr) == drv::status::ok &&
             // A completion queue for the QPs. The server posts no work, so nothing will arrive on it
             // but a QP error, if a connection fails.
             ctx.create_cq(16, &cq) == drv::status::ok;
    }
    for (std::uint32_t q = 0; ok && q < cfg_.clients; ++q) {
        // One queue pair per client connection. Its send and receive rings can be minimal: one-sided
        // operations from the peer consume nothing here (ibv_create_qp).
        ok = ctx.create_qp(pd, cq, cq, 2, 2, &qps[q]) == drv::status::ok;
    }
    if (!ok) {
        fail("kv server: set-up failed (see the log)");
        return;
    }
    // Tell the clients where the table is: the STag and the tagged offset of its first byte (here
    // the host address: a VA-based region). Real applications send this over a socket or in the
    // private data of the connection request; the platform's out-of-band channel stands in for it.
    oob_.publish("kv-table", {station.ipv4, cfg_.port, mr.stag, mr.to_base, mr.length});
    // Passive side of connection set-up, one accept per client in the order they connect: each
    // waits for a TCP connection on the port and answers its MPA Request; the QP is then in RTS
    // (rdma_accept).
    for (std::uint32_t q = 0; q < cfg_.clients; ++q) {
        if (ctx.accept(qps[q], cfg_.port) != drv::status::ok) {
            fail("kv server: accept failed (connection " + std::to_string(q + 1) + ")");
            return;
        }
    }
    // From here on the clients read, write and lock the table with one-sided operations: the
    // server's CPU does nothing until they are done.
    oob_.wait_for("kv-clients-done");

    // The server's own look at its memory: every lock free, every key where it was, the hot keys
    // at the version the updates must have reached, the others untouched.
    std::vector<std::uint8_t> now(kSlots * kSlotSize);
    bus.mem_read(table, now.data(), now.size());
    const std::vector<std::uint8_t> before = initial_table();
    std::string bad;
    for (std::uint32_t i = 0; i < kSlots && bad.empty(); ++i) {
        const std::uint8_t* s = now.data() + i * kSlotSize;
        const std::uint8_t* b = before.data() + i * kSlotSize;
        const std::string key = get_string(s + slot_off::kEy, kKeyLen);
        if (proto::get_le64(s + slot_off::kLock) != 0)
            bad = "slot " + std::to_string(i) + " still locked";
        else if (std::memcmp(s + slot_off::kEy, b + slot_off::kEy, kKeyLen) != 0)
            bad = "slot " + std::to_string(i) + " key changed";
        const auto hot = std::find(kv_keys().begin(), kv_keys().begin() + kHotKeys, key);
        if (bad.empty() && hot != kv_keys().begin() + kHotKeys) {
            const std::uint64_t want = updates_of_key(cfg_, static_cast<std::uint32_t>(hot - kv_keys().begin()));
            if (proto::get_le64(s + slot_off::kVersion) != want) {
                bad = key + " at version " + std::to_string(proto::get_le64(s + slot_off::kVersion)) + ", expected " +
                      std::to_string(want);
            }
        } else if (bad.empty() && std::memcmp(s, b, kSlotSize) != 0) {
            bad = "slot " + std::to_string(i) + " (" + (key.empty() ? "unused" : key) + ") changed without an update";
        }
    }
    // Locks free, versions reached, untouched slots unchanged.
    check("server table check", bad.empty(), bad);
    oob_.publish("kv-server-done", {});
}

// =================================================================================================
// The clients (host a): one session per QP, all driven by one thread and one completion queue.
// =================================================================================================

struct kv_example::session {
    std::uint32_t index = 0;
    std::uint64_t id = 0;  // the value this client puts in a lock word it holds (never 0)
    drv::queue_pair* qp = nullptr;
    std::uint64_t local = 0;  // this session's scratch area in the client's registered buffer
    enum class step { waiting, locking, reading, writing, unlocking, done } at = step::waiting;
    std::uint32_t completed = 0;    // updates done
    std::uint32_t key = 0;          // the key of the update in progress
    std::uint64_t started_ps = 0;   // when the update in progress began (first lock attempt)
    std::uint64_t retry_at_ps = 0;  // step::waiting: when to try the lock (again)
    std::uint32_t refused_in_a_row = 0;
    std::uint64_t rng = 0;  // back-off jitter
};

void kv_example::client(drv::host_bus& bus, const drv::station_config& station, std::uint32_t server_ip) {
    drv::context ctx(bus);
    std::uint32_t pd = 0;
    std::uint64_t buf = 0;
    drv::memory_region mr;
    drv::completion_queue* cq = nullptr;
    const std::uint64_t buf_len = cfg_.clients * kSessionArea + kSlots * kSlotSize;
    std::vector<drv::queue_pair*> qps(cfg_.clients, nullptr);
    bool ok = ctx.open(station) == drv::status::ok && ctx.alloc_pd(&pd) == drv::status::ok &&
              ctx.alloc_buffer(buf_len, &buf) == drv::status::ok &&
              // The client's scratch memory is written by its own device (Read data, the originals
              // atomics return), which takes local_write; peers get no rights to it.
              ctx.reg_mr(pd, buf, buf_len, acc::local_write, &mr) == drv::status::ok &&
              // One CQ for every QP: each session has at most one work request outstanding, so
              // clients + a few entries are enough.
              ctx.create_cq(next_pow2(2ULL * cfg_.clients + 4), &cq) == drv::status::ok;
    for (std::uint32_t q = 0; ok && q < cfg_.clients; ++q) {
        // Send queue of 4 slots (one request at a time), a token receive queue (nothing is sent to us).
        ok = ctx.create_qp(pd, cq, cq, 4, 2, &qps[q]) == drv::status::ok;
    }
    if (!ok) {
        fail("kv client: set-up failed (see the log)");
        on_done_();
        return;
    }
    // Where the table is (see the server), then the active side of connection set-up: a TCP
    // connection and the MPA Request/Reply per QP (rdma_connect). connect_all numbers the local ports.
    const remote_buffer table = oob_.wait_for("kv-table");
    if (const std::string why = platform::connect_all(ctx, qps, server_ip, table.port, result_); !why.empty()) {
        fail("kv client: " + why);
        on_done_();
        return;
    }

    // ---- Posting a work request and waiting for it ----------------------------------------------
    // Every request here is signaled: the device writes a completion (CQE) when it is done, and
    // poll_cq hands it over (ibv_poll_cq). An RDMA Read or an atomic is done when the data or the
    // original value has been placed in our memory; an RDMA Write when TCP has delivered it.
    // post_send writes the work request into the QP's send ring and rings its doorbell
    // (ibv_post_send); it refuses a full ring or a QP not in RTS.
    auto post = [&](drv::queue_pair* qp, const drv::send_wr& wr) {
        if (ctx.post_send(qp, wr) == drv::status::ok) return true;
        fail("kv client: post_send refused (see the log)");
        return false;
    };
    // Blocking use, for the single-session phases: post, then poll until this request completes.
    auto run = [&](drv::queue_pair* qp, const drv::send_wr& wr) {
        if (!post(qp, wr)) return false;
        const std::uint64_t deadline = bus.now_ps() + kStallPs;
        std::vector<drv::work_completion> wcs;
        while (bus.now_ps() < deadline) {
            int n = 0;
            wcs.clear();
            ctx.poll_cq(cq, 1, &wcs, &n);
            if (n == 0) {
                bus.spend(cfg_.poll_interval_ps);
                continue;
            }
            if (wcs[0].wr_id == wr.wr_id && wcs[0].status == regmap::cqe_status::success) return true;
            fail("kv client: work request " + std::to_string(wcs[0].wr_id) + " completed with " +
                 regmap::to_string(wcs[0].status));
            return false;
        }
        fail("kv client: no completion for work request " + std::to_string(wr.wr_id));
        return false;
    };

    // ---- Lookup: RDMA Read of a key's slot ------------------------------------------------------
    // An RDMA Read names the remote bytes by STag and tagged offset (here: the table's STag and
    // its base + slot * kSlotSize) and the local bytes by address and a local STag with local_write.
    auto read_slot = [&](std::uint64_t wr_id, std::uint32_t slot, std::uint64_t local) {
        drv::send_wr rd;
        rd.wr_id = wr_id;
        rd.opcode = regmap::wr_opcode::rdma_read;
        rd.local_addr = local;
        rd.length = static_cast<std::uint32_t>(kSlotSize);
        rd.local_stag = mr.stag;
        rd.remote_addr = table.addr + slot * kSlotSize;
        rd.remote_stag = table.stag;
        return rd;
    };
    platform::workload_row lookups;
    lookups.op = "lookup (RDMA Read)";
    const std::uint64_t lookup_buf = buf + cfg_.clients * kSessionArea;
    // get(key): the slot the hash names, then the next ones until the key or an empty slot shows.
    // Returns the slot index, or kSlots when the key is not there.
    auto lookup = [&](const std::string& key) -> std::uint32_t {
        std::uint32_t i = static_cast<std::uint32_t>(kv_hash(key) % kSlots);
        for (std::uint32_t probes = 0; probes < kSlots; ++probes, i = (i + 1) % kSlots) {
            const std::uint64_t t0 = bus.now_ps();
            if (!run(qps[0], read_slot(1, i, lookup_buf + i * kSlotSize))) return kSlots;
            lookups.latencies_ps.push_back(bus.now_ps() - t0);
            ++lookups.iterations;
            lookups.bytes += kSlotSize;
            std::uint8_t got[kSlotSize];
            bus.mem_read(lookup_buf + i * kSlotSize, got, sizeof got);  // what the Read placed
            const std::string there = get_string(got + slot_off::kEy, kKeyLen);
            if (there == key) return i;
            if (there.empty()) return kSlots;
        }
        return kSlots;
    };

    const std::vector<std::string>& keys = kv_keys();
    std::vector<std::uint32_t> slot_of(keys.size(), kSlots);
    std::string missing;
    const std::uint64_t lookup_t0 = bus.now_ps();
    std::string not_initial;
    for (std::size_t k = 0; k < keys.size(); ++k) {
        slot_of[k] = lookup(keys[k]);
        if (slot_of[k] == kSlots) {
            if (missing.empty()) missing = keys[k];
            continue;
        }
        // Before any update every value is the server's initial one.
        std::uint8_t got[kSlotSize];
        bus.mem_read(lookup_buf + slot_of[k] * kSlotSize, got, sizeof got);
        if ((proto::get_le64(got + slot_off::kVersion) != 0 ||
             get_string(got + slot_off::kText, kTextLen) != value_text(keys[k], 0, 0)) &&
            not_initial.empty()) {
            not_initial = keys[k];
        }
    }
    lookups.elapsed_ps = bus.now_ps() - lookup_t0;
    lookups.integrity.ok = missing.empty() && not_initial.empty() && result_.error.empty();
    lookups.integrity.detail = !missing.empty()       ? "key " + missing + " not found"
                               : !not_initial.empty() ? "key " + not_initial + " does not hold its initial value"
                                                      : "";
    lookups.integrity.bytes_checked = lookups.bytes;
    result_.rows.push_back(lookups);
    if (!lookups.integrity.ok) fail("kv client: lookup: " + lookups.integrity.detail);

    // ---- Locked updates, all sessions at once ---------------------------------------------------
    // Each session walks through: take the lock (CmpSwap 0 -> id), read the slot (RDMA Read), write
    // the new value (RDMA Write), release the lock (CmpSwap id -> 0). Each step posts one work
    // request; its completion moves the session on. The wr_id says which session and step it was.
    using step = session::step;
    std::vector<session> sessions(cfg_.clients);
    for (std::uint32_t q = 0; q < cfg_.clients; ++q) {
        session& s = sessions[q];
        s.index = q;
        s.id = q + 1;
        s.qp = qps[q];
        s.local = buf + q * kSessionArea;
        s.rng = cfg_.seed * 0x9e3779b97f4a7c15ULL + q + 1;
    }
    std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> seen;  // key -> (version, id)
    std::uint64_t refused = 0, stolen = 0;
    platform::workload_row updates;
    updates.op = cfg_.skip_lock ? "update without lock" : "locked update";
    auto wr_id = [](const session& s, step st) { return std::uint64_t{s.index} << 8 | static_cast<std::uint64_t>(st); };

    // CmpSwap on the slot's lock word (RFC 7306): the responder's RNIC compares the 8 bytes at the
    // tagged offset with `compare` and, if equal, writes `operand`, atomically with respect to every
    // other atomic through that RNIC. Either way the original value comes back into local_addr.
    auto post_cmpswap = [&](session& s, std::uint64_t compare, std::uint64_t swap, std::uint64_t local, step st) {
        drv::send_wr cs;
        cs.wr_id = wr_id(s, st);
        cs.opcode = regmap::wr_opcode::atomic_compare_swap;
        cs.local_addr = local;
        cs.length = 8;
        cs.local_stag = mr.stag;
        cs.remote_addr = table.addr + slot_of[s.key] * kSlotSize + slot_off::kLock;  // 8-byte aligned
        cs.remote_stag = table.stag;
        cs.compare = compare;
        cs.operand = swap;
        s.at = st;
        post(s.qp, cs);
    };
    auto take_lock = [&](session& s) {
        if (cfg_.skip_lock) {  // the broken variant: straight to the read
            s.at = step::reading;
            post(s.qp, read_slot(wr_id(s, step::reading), slot_of[s.key], s.local + local_off::kSlot));
            return;
        }
        post_cmpswap(s, 0, s.id, s.local + local_off::kLockOriginal, step::locking);
    };
    auto begin_update = [&](session& s, std::uint64_t now) {
        s.key = s.completed % kHotKeys;
        s.started_ps = now;
        take_lock(s);
    };

    // What each completion means for its session.
    auto on_completion = [&](session& s, const drv::work_completion& wc, std::uint64_t now) {
        switch (s.at) {
        case step::locking: {
            const std::uint64_t original = read_u64(bus, s.local + local_off::kLockOriginal);
            if (original != 0) {
                // Someone else holds it: back off for a random while, longer after each refusal,
                // and try again. The CmpSwap changed nothing.
                ++refused;
                s.refused_in_a_row = std::min<std::uint32_t>(s.refused_in_a_row + 1, 5);
                s.rng ^= s.rng << 13, s.rng ^= s.rng >> 7, s.rng ^= s.rng << 17;
                s.retry_at_ps = now + 300'000 + s.rng % (500'000ULL << s.refused_in_a_row);
                s.at = step::waiting;
                return;
            }
            // The lock is ours: read the current value.
            s.refused_in_a_row = 0;
            s.at = step::reading;
            post(s.qp, read_slot(wr_id(s, step::reading), slot_of[s.key], s.local + local_off::kSlot));
            return;
        }
        case step::reading: {
            // The Read placed the slot in our scratch area. Compute the new value there and
            // RDMA Write it back: version + 1, our id, the text. The lock word and the key are
            // not part of the Write.
            std::uint8_t slot[kSlotSize];
            bus.mem_read(s.local + local_off::kSlot, slot, sizeof slot);
            const std::uint64_t version = proto::get_le64(slot + slot_off::kVersion);
            seen[s.key].push_back({version, s.id});
            std::uint8_t value[slot_off::kValueLen] = {};
            proto::put_le64(value + (slot_off::kVersion - slot_off::kValue), version + 1);
            proto::put_le64(value + (slot_off::kWriter - slot_off::kValue), s.id);
            put_string(value + (slot_off::kText - slot_off::kValue), kTextLen,
                       value_text(keys[s.key], version + 1, s.id));
            bus.mem_write(s.local + local_off::kValue, value, sizeof value);
            drv::send_wr wr;
            wr.wr_id = wr_id(s, step::writing);
            wr.opcode = regmap::wr_opcode::rdma_write;
            wr.local_addr = s.local + local_off::kValue;
            wr.length = static_cast<std::uint32_t>(slot_off::kValueLen);
            wr.local_stag = mr.stag;
            wr.remote_addr = table.addr + slot_of[s.key] * kSlotSize + slot_off::kValue;
            wr.remote_stag = table.stag;
            s.at = step::writing;
            post(s.qp, wr);
            return;
        }
        case step::writing:
            // The new value has been delivered. Release with CmpSwap(id -> 0) rather than a plain
            // Write of 0: the original that comes back proves we still held the lock. (The
            // responder executes it after the Write, which came first on the same stream.)
            if (!cfg_.skip_lock) {
                post_cmpswap(s, s.id, 0, s.local + local_off::kUnlockOriginal, step::unlocking);
                return;
            }
            break;
        case step::unlocking:
            if (read_u64(bus, s.local + local_off::kUnlockOriginal) != s.id) ++stolen;
            break;
        case step::waiting:
        case step::done:
            fail("kv client: unexpected completion " + std::to_string(wc.wr_id));
            return;
        }
        // One update done.
        updates.latencies_ps.push_back(now - s.started_ps);
        updates.bytes += kSlotSize + slot_off::kValueLen + (cfg_.skip_lock ? 0 : 16);
        ++s.completed;
        if (s.completed == cfg_.updates)
            s.at = step::done;
        else
            begin_update(s, now);
    };

    const std::uint64_t t0 = bus.now_ps();
    for (session& s : sessions) begin_update(s, t0);
    std::uint64_t last_progress = t0;
    std::vector<drv::work_completion> wcs;
    while (result_.error.empty()) {
        const bool all_done =
            std::all_of(sessions.begin(), sessions.end(), [](const session& s) { return s.at == step::done; });
        if (all_done) break;
        const std::uint64_t now = bus.now_ps();
        if (now - last_progress > kStallPs) {
            fail("kv client: no completion for 20 ms of simulated time");
            break;
        }
        int n = 0;
        wcs.clear();
        ctx.poll_cq(cq, 16, &wcs, &n);
        for (const drv::work_completion& wc : wcs) {
            const std::uint64_t index = wc.wr_id >> 8;
            if (wc.status != regmap::cqe_status::success || index >= sessions.size()) {
                fail("kv client: work request " + std::to_string(wc.wr_id) + " completed with " +
                     regmap::to_string(wc.status));
                break;
            }
            on_completion(sessions[index], wc, bus.now_ps());
            last_progress = bus.now_ps();
        }
        // Sessions whose back-off is over try the lock again.
        for (session& s : sessions) {
            if (s.at == step::waiting && s.completed < cfg_.updates && bus.now_ps() >= s.retry_at_ps) {
                take_lock(s);
                last_progress = bus.now_ps();
            }
        }
        if (n == 0) bus.spend(cfg_.poll_interval_ps);
    }
    updates.elapsed_ps = bus.now_ps() - t0;
    updates.iterations = updates.latencies_ps.size();
    updates.integrity.ok = result_.error.empty();
    result_.rows.push_back(updates);
    platform::workload_row contention;
    contention.op = "lock refused, retry";
    contention.iterations = refused;
    contention.integrity.ok = true;
    result_.rows.push_back(contention);

    // ---- The checks ---------------------------------------------------------------------------------
    if (result_.error.empty()) {
        // Mutual exclusion: on each key, the versions the updates read are exactly 0..n-1, each once.
        // Two clients inside the lock at once would both read the same version, and one of their
        // updates would be lost.
        std::string lost;
        for (std::uint32_t k = 0; k < kHotKeys && lost.empty(); ++k) {
            std::vector<std::uint64_t> versions;
            for (const auto& v : seen[k]) versions.push_back(v.first);
            std::sort(versions.begin(), versions.end());
            const std::uint64_t n = updates_of_key(cfg_, k);
            if (versions.size() != n)
                lost = keys[k] + ": " + std::to_string(versions.size()) + " updates, expected " + std::to_string(n);
            for (std::uint64_t i = 0; i < versions.size() && lost.empty(); ++i) {
                if (versions[i] < i) {
                    lost = keys[k] + ": version " + std::to_string(versions[i]) + " was read by two updates (one lost)";
                } else if (versions[i] > i) {
                    lost = keys[k] + ": no update read version " + std::to_string(i);
                }
            }
        }
        check("no lost update", lost.empty(), lost);  // each version read exactly once
        if (!cfg_.skip_lock)
            check("lock held at release", stolen == 0, std::to_string(stolen) + " releases found another holder");

        // Verification by lookup: read every key again; the hot keys hold the last update (version
        // n, by whoever read version n - 1), the others their initial value; no lock is held.
        std::string wrong;
        for (std::size_t k = 0; k < keys.size() && wrong.empty(); ++k) {
            const std::uint32_t i = lookup(keys[k]);
            if (i == kSlots) {
                wrong = keys[k] + " not found";
                break;
            }
            std::uint8_t got[kSlotSize];
            bus.mem_read(lookup_buf + i * kSlotSize, got, sizeof got);
            std::uint64_t want_version = 0, want_writer = 0;
            if (k < kHotKeys) {
                want_version = updates_of_key(cfg_, static_cast<std::uint32_t>(k));
                for (const auto& v : seen[static_cast<std::uint32_t>(k)]) {
                    if (v.first + 1 == want_version) want_writer = v.second;
                }
            }
            const std::string text = get_string(got + slot_off::kText, kTextLen);
            const std::string want_text = value_text(keys[k], want_version, want_writer);
            if (want_version != 0 && want_writer == 0) {
                wrong = keys[k] + ": no update read version " + std::to_string(want_version - 1) + " (it holds \"" +
                        text + "\")";
            } else if (proto::get_le64(got + slot_off::kLock) != 0)
                wrong = keys[k] + " still locked";
            else if (proto::get_le64(got + slot_off::kVersion) != want_version || text != want_text) {
                wrong = keys[k] + " holds \"" + text + "\" (version " +
                        std::to_string(proto::get_le64(got + slot_off::kVersion)) + "), expected \"" + want_text + "\"";
            }
        }
        // The last update on each hot key, the rest unchanged, no lock held.
        check("final values", wrong.empty(), wrong);
    }
    oob_.publish("kv-clients-done", {});
    oob_.wait_for("kv-server-done");
    result_.finished = result_.error.empty();
    on_done_();
}

}  // namespace rnic::examples
