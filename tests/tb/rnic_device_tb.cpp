// rnic_device's doorbells: BAR0 writes to the doorbell windows and CMDQ_PROD reach the RDMA engine and
// the control processor through the device's ports bound to their doorbell exports (the control
// paths are narrow interfaces behind ports, docs/architecture.md), not by direct calls; a command
// rung through BAR0 runs on the firmware and completes in host memory with MSI-X vector 0.
#include <gtest/gtest.h>

#include <cstring>

#include "firmware/firmware.h"
#include "rnic/rnic.h"
#include "tb_support.h"

namespace rnic::test {
namespace {

using bytes = std::vector<std::uint8_t>;
sc_core::sc_time ns(double v) {
    return sc_core::sc_time(v, sc_core::SC_NS);
}

// The host's memory: 64 KiB, 100 ns per access.
struct host_mem : rnic::test::tb_memory {
    explicit host_mem(const sc_core::sc_module_name& n) : tb_memory(n, 64 * 1024, ns(100)) {}
};

struct device_bench : sc_core::sc_module {
    rnic_device nic;
    tb_initiator bar0, wire;
    host_mem host;
    tb_sink irq, eth_out;
    explicit device_bench(const sc_core::sc_module_name& n)
        : sc_module(n),
          nic("nic", rnic_params{}, [](fw::hal& h) { return std::make_unique<fw::firmware>(h, fw::costs{}); }),
          bar0("bar0"),
          wire("wire"),
          host("host"),
          irq("irq"),
          eth_out("eth_out") {
        bar0.out.bind(nic.mmio_in);
        nic.dma_out.bind(host.in);
        nic.irq_out.bind(irq.in);
        nic.eth_tx.bind(eth_out.in);
        wire.out.bind(nic.eth_rx);
    }
    void write32(std::uint32_t offset, std::uint32_t value) {
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(offset);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
        gp.set_data_length(4);
        gp.set_streaming_width(4);
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        bar0.out->b_transport(gp, d);
        EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    }
};

// The port named `port` of the device is bound, and its interface is the one `target` exports.
template <typename IF>
void expect_bound_to(const char* port, const char* target) {
    auto* p = dynamic_cast<sc_core::sc_port<IF>*>(sc_core::sc_find_object(port));
    ASSERT_NE(p, nullptr) << port << ": no such port";
    auto* engine = dynamic_cast<IF*>(sc_core::sc_find_object(target));
    ASSERT_NE(engine, nullptr) << target;
    ASSERT_EQ(p->size(), 1);
    EXPECT_EQ(dynamic_cast<IF*>(p->get_interface()), engine);
}

TEST(RnicDeviceTb, DoorbellsGoThroughPortsBoundToTheEnginesExports) {
    device_bench b("b");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaboration resolves the bindings
    expect_bound_to<rdma_doorbell_if>("b.nic.rdma_doorbell_out", "b.nic.rdma");
    expect_bound_to<cp_doorbell_if>("b.nic.cp_doorbell_out", "b.nic.cp");
}

TEST(RnicDeviceTb, CommandDoorbellThroughBar0RunsTheFirmware) {
    device_bench b("b");
    sc_core::sc_start(ns(10));
    constexpr std::uint32_t kRing = 0x1000;
    b.host.mem[kRing + regmap::cmd_off::opcode] = static_cast<std::uint8_t>(regmap::command::nop);
    std::memset(b.host.mem.data() + kRing + regmap::cmd_off::status, 0xff, 4);
    b.write32(regmap::CMDQ_BASE_LO, kRing);
    b.write32(regmap::CMDQ_BASE_HI, 0);
    b.write32(regmap::CMDQ_ENTRIES, 4);
    b.write32(regmap::CMDQ_PROD, 1);
    sc_core::sc_start(ns(20000));
    EXPECT_EQ(b.host.mem[kRing + regmap::cmd_off::status], static_cast<std::uint8_t>(regmap::cmd_status::ok));
    ASSERT_FALSE(b.irq.items.empty());
    EXPECT_EQ(b.irq.items.back().address, regmap::kMsixCommandVector);
    EXPECT_EQ(b.nic.fw_read(regmap::CMDQ_CONS), 1u);
}

}  // namespace
}  // namespace rnic::test
