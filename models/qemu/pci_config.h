// The RNIC's PCI configuration space as a conventional PCI function shows it to a QEMU guest through
// x-pci-proxy-dev: a 256-byte type-0 header with the device's identity, one 32-bit non-prefetchable
// memory BAR (BAR0, sized from regmap.h), the Command register's enables, the interrupt line and pin.
// No capability list: the proxy cannot deliver MSI or MSI-X to a TCG guest (docs/architecture.md),
// so none is advertised and the driver polls. Plain C++, no SystemC.
//
// Registers behave as PCI Local Bus 3.0 §6.2 says: read-only fields ignore writes; BAR0's address
// bits below its size read as zero, so writing all-ones and reading back gives the size (how QEMU
// and Linux size BARs); the other BARs and the expansion ROM are not implemented (read as zero).
#pragma once

#include <array>
#include <cstdint>

namespace rnic::qemu {

struct pci_identity {
    std::uint16_t vendor = 0;
    std::uint16_t device = 0;
    std::uint8_t revision = 0;
    std::uint32_t class_code = 0;  // base class << 16 | subclass << 8 | programming interface
    std::uint16_t subsystem_vendor = 0;
    std::uint16_t subsystem = 0;
    std::uint32_t bar0_size = 0;  // a power of two, at least 16
};

// The RNIC's identity from models/rnic/regmap.h (the ID and VERSION registers, kBar0Size); class
// 0x020000 (network controller, Ethernet).
pci_identity rnic_pci_identity();

class pci_config_space {
public:
    // Offsets of the header fields the platform uses.
    static constexpr unsigned kCommand = 0x04;
    static constexpr unsigned kBar0 = 0x10;
    static constexpr std::uint16_t kCommandMemory = 1u << 1;
    static constexpr std::uint16_t kCommandBusMaster = 1u << 2;

    explicit pci_config_space(const pci_identity& id);

    // Accesses of 1, 2 or 4 bytes inside the 256 bytes (the caller checks: mpqemu::decode_config).
    std::uint32_t read(unsigned offset, unsigned length) const;
    void write(unsigned offset, std::uint32_t value, unsigned length);
    // Back to the reset values (device reset).
    void reset();

    std::uint16_t command() const { return static_cast<std::uint16_t>(read(kCommand, 2)); }
    bool memory_enabled() const { return (command() & kCommandMemory) != 0; }
    bool bus_master() const { return (command() & kCommandBusMaster) != 0; }
    // BAR0's guest-physical base (its size bits cleared), and whether `address` of `size` bytes falls
    // inside BAR0 while memory decoding is on; *offset is then the offset into BAR0.
    std::uint32_t bar0_base() const { return read(kBar0, 4) & ~0xfu; }
    bool bar0_decode(std::uint64_t address, unsigned size, std::uint32_t* offset) const;
    const pci_identity& identity() const { return id_; }

private:
    pci_identity id_;
    std::array<std::uint8_t, 256> bytes_{};
    std::array<std::uint8_t, 256> writable_{};  // per byte, the bits a write may change
};

}  // namespace rnic::qemu
