// control_processor through its sockets and ports, running the real firmware: commands are put in a
// ring in a small host memory behind dma_out, the command doorbell comes through doorbell_in, and the
// engines behind rdma_out / toe_out / framer_out / regs_out are recording stubs. Checks each command's
// result, the engine call it makes, the completion and its MSI-X (vector 0), and the time it takes:
// fetch (one DMA read) + the per-command cycles at the CP clock + the status write; events from the
// TCP engine cost their cycles and drive the MPA exchange (RFC 5044 §7.1.2: the initiator sends the
// Request once TCP is up).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstring>
#include <map>

#include "cp/control_processor.h"
#include "firmware/firmware.h"
#include "proto/bytes.h"
#include "proto/mpa.h"
#include "rnic/regmap.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

using bytes = std::vector<std::uint8_t>;
using regmap::cmd_status;
using regmap::command;
sc_core::sc_time ns(double v) {
    return sc_core::sc_time(v, sc_core::SC_NS);
}

constexpr std::uint64_t kRing = 0x1000;
constexpr std::uint32_t kEntries = 8;
const sc_core::sc_time kMemLatency = ns(100);

// The host's memory: 64 KiB, 100 ns per access.
struct host_mem : rnic::test::tb_memory {
    explicit host_mem(const sc_core::sc_module_name& n) : tb_memory(n, 64 * 1024, kMemLatency) {}
};

// The engines and the register file, as the firmware reaches them through the CP's ports.
struct engine_stubs : sc_core::sc_module, rdma_ctl_if, toe_ctl_if, framer_ctl_if, regfile_if {
    std::map<std::uint32_t, std::uint32_t> regs;
    std::vector<cq_config> cqs;
    std::vector<std::uint32_t> failed_streams;
    std::vector<std::uint32_t> released;
    std::vector<std::uint16_t> unlistened;  // tcp_unlisten's ports, in order
    std::vector<tcp_open_params> connects;
    std::vector<std::uint8_t> empty;
    explicit engine_stubs(const sc_core::sc_module_name& n) : sc_module(n) {}
    // regfile_if
    std::uint32_t fw_read(std::uint32_t off) const override {
        const auto it = regs.find(off);
        return it == regs.end() ? 0 : it->second;
    }
    void fw_write(std::uint32_t off, std::uint32_t v) override { regs[off] = v; }
    // rdma_ctl_if
    int create_cq(const cq_config& c) override {
        cqs.push_back(c);
        return 4 + static_cast<int>(cqs.size());
    }
    int create_qp(const qp_config&) override { return -1; }
    std::int64_t register_mr(const mr_config&) override { return -1; }
    bool deregister_mr(std::uint32_t) override { return false; }
    bool qp_valid(std::uint32_t q) const override { return q == 2; }
    bool qp_idle(std::uint32_t q) const override { return q == 2; }
    bool qp_connect(std::uint32_t, const qp_stream&) override { return true; }
    bool qp_modify(std::uint32_t, std::uint8_t) override { return false; }
    std::int64_t qp_query(std::uint32_t) const override { return -1; }
    int destroy_qp(std::uint32_t) override { return -1; }
    int destroy_cq(std::uint32_t) override { return -1; }
    void llp_terminate(std::uint32_t, std::uint8_t) override {}
    void stream_failed(std::uint32_t conn, const char*) override { failed_streams.push_back(conn); }
    counter_snapshot counters() const override { return {11, 12, 13, 14, 15}; }
    bool has_objects() const override { return objects; }
    void reset_objects() override { ++resets; }
    bool objects = false;
    int resets = 0;
    // toe_ctl_if
    int tcp_connect(const tcp_open_params& p) override {
        connects.push_back(p);
        return 9;
    }
    bool tcp_listen(std::uint16_t) override { return true; }
    bool tcp_unlisten(std::uint16_t port) override {
        unlistened.push_back(port);
        return true;
    }
    void tcp_close(std::uint32_t) override {}
    void tcp_abort(std::uint32_t) override {}
    void tcp_release(std::uint32_t conn) override { released.push_back(conn); }
    std::uint64_t tcp_send_stream_end(std::uint32_t) const override { return 0; }
    std::size_t tcp_send_space(std::uint32_t) const override { return 1 << 20; }
    std::uint16_t tcp_effective_mss(std::uint32_t) const override { return 1460; }
    std::uint16_t tcp_local_port(std::uint32_t) const override { return 50000; }
    tcp_addresses tcp_addresses_of(std::uint32_t) const override { return {}; }
    void tcp_one_fpdu_per_segment(std::uint32_t, bool) override {}
    std::uint64_t tcp_retransmitted_bytes() const override { return 16; }
    // framer_ctl_if
    const std::vector<std::uint8_t>& startup_bytes(std::uint32_t) const override { return empty; }
    void full_operation(std::uint32_t, const mpa_settings&, std::size_t) override {}
    std::size_t ulpdu_limit(std::uint32_t) const override { return 1454; }
};

struct cp_bench : sc_core::sc_module {
    control_processor cp;
    host_mem host;
    engine_stubs stubs;
    tb_sink irq, startup;
    std::uint32_t produced = 0;

    // The control processor runs the real firmware with `costs` unless given another program.
    explicit cp_bench(const sc_core::sc_module_name& n, control_processor_params p = control_processor_params{},
                      fw::costs costs = fw::costs{}, fw::program_factory program = nullptr)
        : sc_module(n),
          cp(
              "cp", p, program ? program : [costs](fw::hal& h) { return std::make_unique<fw::firmware>(h, costs); }),
          host("host"),
          stubs("stubs"),
          irq("irq"),
          startup("startup") {
        cp.dma_out.bind(host.in);
        cp.irq_out.bind(irq.in);
        cp.startup_tx_out.bind(startup.in);
        cp.rdma_out.bind(stubs);
        cp.toe_out.bind(stubs);
        cp.framer_out.bind(stubs);
        cp.regs_out.bind(stubs);
        stubs.regs[regmap::CMDQ_BASE_LO] = static_cast<std::uint32_t>(kRing);
        stubs.regs[regmap::CMDQ_BASE_HI] = 0;
        stubs.regs[regmap::CMDQ_ENTRIES] = kEntries;
    }
    // Writes the next command into the ring (status pending) and returns its slot.
    std::uint32_t put(command op, std::initializer_list<std::uint64_t> params) {
        const std::uint32_t slot = produced++;
        std::uint8_t* c = host.mem.data() + kRing + (slot % kEntries) * regmap::kCommandSize;
        std::memset(c, 0, regmap::kCommandSize);
        c[regmap::cmd_off::opcode] = static_cast<std::uint8_t>(op);
        int i = 0;
        for (std::uint64_t p : params) proto::put_le64(c + regmap::cmd_off::param + 8 * i++, p);
        proto::put_le32(c + regmap::cmd_off::status, 0xffffffffu);
        return slot;
    }
    void ring(const sc_core::sc_time& delay = sc_core::SC_ZERO_TIME) {
        stubs.regs[regmap::CMDQ_PROD] = produced;
        cp.doorbell_in->command_doorbell(delay);
    }
    std::uint32_t status(std::uint32_t slot) const {
        return proto::get_le32(host.mem.data() + kRing + (slot % kEntries) * regmap::kCommandSize +
                               regmap::cmd_off::status);
    }
    std::uint32_t result(std::uint32_t slot) const {
        return proto::get_le32(host.mem.data() + kRing + (slot % kEntries) * regmap::kCommandSize +
                               regmap::cmd_off::result);
    }
    std::uint64_t stat(const char* key) const {
        boost::json::object o;
        cp.report_stats(o);
        return o[key].to_number<std::uint64_t>();
    }
};

TEST(ControlProcessorTb, NopCostsFetchCommandCyclesAndStatusWrite) {
    cp_bench b("b");
    const std::uint32_t slot = b.put(command::nop, {});
    b.ring();
    sc_core::sc_start(ns(10000));
    EXPECT_EQ(b.stubs.regs[regmap::STATUS] & regmap::status::ready, regmap::status::ready);
    EXPECT_EQ(b.status(slot), static_cast<std::uint32_t>(cmd_status::ok));
    EXPECT_EQ(b.stubs.regs[regmap::CMDQ_CONS], 1u);
    // Fetch 100 ns, 1500 cycles at 1 GHz, status write 100 ns, then the MSI-X of vector 0.
    ASSERT_EQ(b.irq.items.size(), 1u);
    EXPECT_EQ(b.irq.items[0].address, regmap::kMsixCommandVector);
    EXPECT_EQ(b.irq.items[0].at, ns(1700));
    EXPECT_EQ(b.stat("busy_ps"), 1500000u);
    EXPECT_EQ(b.stat("commands_executed"), 1u);
    EXPECT_EQ(b.stat("events_handled"), 1u);
}

// The control processor runs whatever program the device assembly gives it, through the HAL only:
// a program that counts doorbells, spends 300 cycles on each and raises vector 5 runs in place of
// the firmware, and its own counters are what the statistics report.
struct doorbell_counter : fw::program {
    explicit doorbell_counter(fw::hal& h) : hal(h) {}
    [[noreturn]] void run() override {
        for (;;) {
            if (hal.wait_event().kind != fw::event_kind::command_doorbell) continue;
            hal.consume_cycles(300);
            ++doorbells;
            hal.raise_msix(5);
        }
    }
    std::uint64_t commands_executed() const override { return doorbells; }
    bool has_state() const override { return false; }
    std::vector<std::pair<const char*, std::uint64_t>> counters() const override {
        return {{"doorbells_counted", doorbells}};
    }
    fw::hal& hal;
    std::uint64_t doorbells = 0;
};

TEST(ControlProcessorTb, RunsTheProgramItIsGiven) {
    cp_bench b("b", control_processor_params{}, fw::costs{},
               [](fw::hal& h) { return std::make_unique<doorbell_counter>(h); });
    b.ring();
    b.ring(ns(1000));
    sc_core::sc_start(ns(10000));
    ASSERT_EQ(b.irq.items.size(), 2u);
    EXPECT_EQ(b.irq.items[0].at, ns(300));  // 300 cycles at 1 GHz
    EXPECT_EQ(b.irq.items[1].at, ns(1300));
    EXPECT_EQ(b.cp.commands_executed(), 2u);
    EXPECT_EQ(b.stat("doorbells_counted"), 2u);
    boost::json::object o;
    b.cp.report_stats(o);
    EXPECT_FALSE(o.contains("commands_executed"));      // the firmware's counters are the firmware's
    EXPECT_EQ(b.stubs.regs.count(regmap::STATUS), 0u);  // nothing but the program writes registers
}

TEST(ControlProcessorTb, NoProgramIsRefusedAtConstruction) {
    EXPECT_THROW(control_processor("cp", control_processor_params{}, fw::program_factory{}), std::invalid_argument);
    const auto makes_nothing = [](fw::hal&) { return std::unique_ptr<fw::program>{}; };
    EXPECT_THROW(control_processor("cp2", control_processor_params{}, makes_nothing), std::invalid_argument);
}

TEST(ControlProcessorTb, CommandCostScalesWithTheClockAndTheCostTable) {
    control_processor_params p;
    p.clock_hz = 500e6;
    fw::costs costs;
    costs.command = 1000;
    cp_bench b("b", p, costs);
    b.put(command::nop, {});
    b.ring();
    sc_core::sc_start(ns(10000));
    ASSERT_EQ(b.irq.items.size(), 1u);
    EXPECT_EQ(b.irq.items[0].at, ns(100 + 2000 + 100));  // 1000 cycles of 2 ns
}

TEST(ControlProcessorTb, DoorbellIsSeenWhenItsWriteArrives) {
    cp_bench b("b");
    b.put(command::nop, {});
    b.ring(ns(500));  // the MMIO write reaches the device 500 ns from now
    sc_core::sc_start(ns(10000));
    ASSERT_EQ(b.irq.items.size(), 1u);
    EXPECT_EQ(b.irq.items[0].at, ns(2200));
}

TEST(ControlProcessorTb, CommandsOfOneDoorbellRunOneAfterAnother) {
    cp_bench b("b");
    b.put(command::nop, {});
    b.put(command::nop, {});
    b.put(command::nop, {});
    b.ring();
    sc_core::sc_start(ns(20000));
    ASSERT_EQ(b.irq.items.size(), 3u);
    EXPECT_EQ(b.irq.items[0].at, ns(1700));
    EXPECT_EQ(b.irq.items[1].at, ns(3400));
    EXPECT_EQ(b.irq.items[2].at, ns(5100));
    EXPECT_EQ(b.stubs.regs[regmap::CMDQ_CONS], 3u);
    EXPECT_EQ(b.stat("busy_ps"), 4500000u);
}

TEST(ControlProcessorTb, CreateCqProgramsTheEngineAndReturnsItsNumber) {
    cp_bench b("b");
    const std::uint32_t good = b.put(command::create_cq, {0x8000, 64, 3});
    const std::uint32_t bad = b.put(command::create_cq, {0x8000, 48, 3});  // not a power of two
    b.ring();
    sc_core::sc_start(ns(10000));
    EXPECT_EQ(b.status(good), static_cast<std::uint32_t>(cmd_status::ok));
    EXPECT_EQ(b.result(good), 5u);
    ASSERT_EQ(b.stubs.cqs.size(), 1u);  // the bad one never reaches the engine
    EXPECT_EQ(b.stubs.cqs[0].ring, 0x8000u);
    EXPECT_EQ(b.stubs.cqs[0].entries, 64u);
    EXPECT_EQ(b.stubs.cqs[0].msix_vector, 3u);
    EXPECT_EQ(b.status(bad), static_cast<std::uint32_t>(cmd_status::bad_parameter));
}

TEST(ControlProcessorTb, UnknownOpcodeIsRefused) {
    cp_bench b("b");
    const std::uint32_t slot = b.put(static_cast<command>(0x77), {});
    b.ring();
    sc_core::sc_start(ns(10000));
    EXPECT_EQ(b.status(slot), static_cast<std::uint32_t>(cmd_status::bad_opcode));
}

TEST(ControlProcessorTb, UnlistenReachesTheTcpEngine) {
    cp_bench b("b");
    const std::uint32_t slot = b.put(command::unlisten, {0, 18515});
    b.ring();
    sc_core::sc_start(ns(10000));
    EXPECT_EQ(b.status(slot), static_cast<std::uint32_t>(cmd_status::ok));
    EXPECT_EQ(b.stubs.unlistened, std::vector<std::uint16_t>{18515});
}

TEST(ControlProcessorTb, QueryStatsWritesTheEnginesCountersToHostMemory) {
    cp_bench b("b");
    const std::uint32_t slot = b.put(command::query_stats, {0x4000, 8 * regmap::kDeviceCounterCount});
    b.ring();
    sc_core::sc_start(ns(10000));
    EXPECT_EQ(b.status(slot), static_cast<std::uint32_t>(cmd_status::ok));
    EXPECT_EQ(b.result(slot), regmap::kDeviceCounterCount);
    using c = regmap::device_counter;
    auto counter = [&](c which) { return proto::get_le64(b.host.mem.data() + 0x4000 + 8 * static_cast<int>(which)); };
    EXPECT_EQ(counter(c::wqes), 11u);
    EXPECT_EQ(counter(c::placed_bytes), 15u);
    EXPECT_EQ(counter(c::tcp_retransmitted_bytes), 16u);
    EXPECT_EQ(counter(c::commands), 0u);  // this one not yet counted
    // Read, command cycles, the counters' write, the status write.
    ASSERT_EQ(b.irq.items.size(), 1u);
    EXPECT_EQ(b.irq.items[0].at, ns(1800));
}

TEST(ControlProcessorTb, UnreadableRingCountsADmaErrorAndCompletesNothing) {
    cp_bench b("b");
    b.stubs.regs[regmap::CMDQ_BASE_LO] = 0x100000;  // beyond the host memory
    b.put(command::nop, {});
    b.ring();
    sc_core::sc_start(ns(10000));
    EXPECT_TRUE(b.irq.items.empty());
    EXPECT_EQ(b.stat("dma_errors"), 1u);
    EXPECT_EQ(b.stat("commands_executed"), 0u);
}

TEST(ControlProcessorTb, ConnectOpensTcpAndTheEstablishedEventSendsTheMpaRequest) {
    control_processor_params p;
    p.mpa.revision = 2;
    p.mpa.timeout_ps = 1000000000;  // 1 ms: the negotiation timer stays out of the way
    cp_bench b("b", p);
    const std::uint32_t slot = b.put(command::connect, {2, 0x0a000002ull | 4791ull << 32, 50000, 0});
    b.ring();
    sc_core::sc_start(ns(2000));
    ASSERT_EQ(b.stubs.connects.size(), 1u);
    EXPECT_EQ(b.stubs.connects[0].remote_ip, 0x0a000002u);
    EXPECT_EQ(b.stubs.connects[0].remote_port, 4791u);
    EXPECT_EQ(b.stubs.connects[0].local_port, 50000u);
    EXPECT_EQ(b.status(slot), 0xffffffffu);  // pending until the negotiation ends
    // TCP is up at 2 us: the event costs 400 cycles, building the Request 2500 (RFC 5044 §7.1.2).
    b.cp.toe_events_in->on_tcp_event(9, toe_event::established, 50000);
    sc_core::sc_start(ns(10000));
    ASSERT_EQ(b.startup.items.size(), 1u);
    EXPECT_EQ(b.startup.items[0].conn, 9);
    EXPECT_EQ(b.startup.items[0].at, ns(2000 + 400 + 2500));
    std::string error;
    const auto req = proto::mpa::decode(b.startup.items[0].data.data(), b.startup.items[0].data.size(), &error);
    ASSERT_TRUE(req) << error;
    EXPECT_TRUE(req->request);
    EXPECT_EQ(req->revision, 2);
    EXPECT_EQ(b.stat("events_handled"), 2u);
    // The connection is lost before the Reply: the command fails and the engine is told.
    b.cp.toe_events_in->on_tcp_event(9, toe_event::reset, 50000);
    sc_core::sc_start(ns(10000));
    EXPECT_EQ(b.status(slot), static_cast<std::uint32_t>(cmd_status::connection_refused));
    EXPECT_EQ(b.stubs.failed_streams, std::vector<std::uint32_t>{9});
    EXPECT_EQ(b.stat("connections_failed"), 1u);
    EXPECT_EQ(b.stat("events_handled"), 3u);
}

}  // namespace
}  // namespace rnic::test
