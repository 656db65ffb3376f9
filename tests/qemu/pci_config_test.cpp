// The RNIC's PCI configuration space: identity from regmap.h, BAR0 sizing as QEMU and Linux do it,
// read-only fields, the Command register's enables and BAR0 decoding.
#include <gtest/gtest.h>

#include "qemu/pci_config.h"
#include "rnic/regmap.h"

namespace rnic::test {
namespace {

using qemu::pci_config_space;

TEST(PciConfig, IdentityComesFromTheRegisterMap) {
    const qemu::pci_identity id = qemu::rnic_pci_identity();
    EXPECT_EQ(id.vendor, 0x1a4e);
    EXPECT_EQ(id.device, 0x0001);
    EXPECT_EQ(id.bar0_size, regmap::kBar0Size);
    pci_config_space cfg(id);
    EXPECT_EQ(cfg.read(0x00, 4), 0x00011a4eu);
    EXPECT_EQ(cfg.read(0x0a, 2), 0x0200u) << "network controller, Ethernet";
    EXPECT_EQ(cfg.read(0x0e, 1), 0u) << "type-0 header";
    EXPECT_EQ(cfg.read(0x3d, 1), 1u) << "INTA#";
    EXPECT_EQ(cfg.read(0x34, 1), 0u) << "no capability list";
    EXPECT_EQ(cfg.read(0x06, 2) & 0x10, 0u) << "Status.CapList clear";
}

TEST(PciConfig, Bar0SizesByWritingAllOnes) {
    pci_config_space cfg(qemu::rnic_pci_identity());
    cfg.write(0x10, 0xffffffff, 4);
    EXPECT_EQ(cfg.read(0x10, 4), ~(regmap::kBar0Size - 1));  // 32-bit, non-prefetchable memory: low bits 0
    EXPECT_EQ(~(cfg.read(0x10, 4) & ~0xfu) + 1, regmap::kBar0Size);
    cfg.write(0x10, 0xfebc0000, 4);
    EXPECT_EQ(cfg.bar0_base(), 0xfebc0000u);
    cfg.write(0x10, 0xfebc1234, 4);  // bits below the size do not stick
    EXPECT_EQ(cfg.bar0_base(), 0xfebc0000u);
    for (unsigned bar = 0x14; bar <= 0x24; bar += 4) {
        cfg.write(bar, 0xffffffff, 4);
        EXPECT_EQ(cfg.read(bar, 4), 0u) << "BAR at " << bar << " is not implemented";
    }
    cfg.write(0x30, 0xffffffff, 4);
    EXPECT_EQ(cfg.read(0x30, 4), 0u) << "no expansion ROM";
}

TEST(PciConfig, ReadOnlyFieldsIgnoreWrites) {
    pci_config_space cfg(qemu::rnic_pci_identity());
    cfg.write(0x00, 0x12345678, 4);
    EXPECT_EQ(cfg.read(0x00, 4), 0x00011a4eu);
    cfg.write(0x08, 0xffffffff, 4);
    EXPECT_EQ(cfg.read(0x09, 3), 0x020000u);
    cfg.write(0x3c, 0xffffffff, 4);
    EXPECT_EQ(cfg.read(0x3c, 1), 0xffu) << "interrupt line is read/write";
    EXPECT_EQ(cfg.read(0x3d, 1), 1u) << "interrupt pin is read-only";
    cfg.write(0xfc, 0xffffffff, 4);
    EXPECT_EQ(cfg.read(0xfc, 4), 0u);
}

TEST(PciConfig, CommandGatesDecodingAndBusMastering) {
    pci_config_space cfg(qemu::rnic_pci_identity());
    cfg.write(0x10, 0xfe000000, 4);
    std::uint32_t off = 0;
    EXPECT_FALSE(cfg.memory_enabled());
    EXPECT_FALSE(cfg.bar0_decode(0xfe000000, 4, &off)) << "memory decoding off after reset";
    cfg.write(0x04, 0x0006, 2);
    EXPECT_TRUE(cfg.memory_enabled());
    EXPECT_TRUE(cfg.bus_master());
    ASSERT_TRUE(cfg.bar0_decode(0xfe00002c, 4, &off));
    EXPECT_EQ(off, 0x2cu);
    EXPECT_TRUE(cfg.bar0_decode(0xfe000000 + regmap::kBar0Size - 8, 8, &off));
    EXPECT_FALSE(cfg.bar0_decode(0xfe000000 + regmap::kBar0Size - 2, 4, &off)) << "runs past the BAR";
    EXPECT_FALSE(cfg.bar0_decode(0xfdfffffc, 4, &off));
    EXPECT_FALSE(cfg.bar0_decode(0xfe000000 + regmap::kBar0Size, 4, &off));
    cfg.write(0x04, 0xffff, 2);
    EXPECT_EQ(cfg.command(), 0x0547) << "only the implemented Command bits stick";
    cfg.reset();
    EXPECT_EQ(cfg.command(), 0u);
    EXPECT_EQ(cfg.bar0_base(), 0u);
}

}  // namespace
}  // namespace rnic::test
