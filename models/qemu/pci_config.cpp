#include "qemu/pci_config.h"

#include "rnic/regmap.h"

namespace rnic::qemu {

pci_identity rnic_pci_identity() {
    namespace rm = regmap;
    std::uint32_t id = 0, version = 0;
    for (const rm::register_desc& r : rm::kRegisters) {
        if (r.offset == rm::ID) id = r.reset;
        if (r.offset == rm::VERSION) version = r.reset;
    }
    pci_identity p;
    p.vendor = static_cast<std::uint16_t>(id >> 16);
    p.device = static_cast<std::uint16_t>(id & 0xffff);
    p.revision = static_cast<std::uint8_t>(version >> 16);  // the interface's major version
    p.class_code = 0x020000;
    p.subsystem_vendor = p.vendor;
    p.subsystem = p.device;
    p.bar0_size = rm::kBar0Size;
    return p;
}

pci_config_space::pci_config_space(const pci_identity& id) : id_(id) {
    reset();
}

void pci_config_space::reset() {
    bytes_.fill(0);
    writable_.fill(0);
    auto put = [this](unsigned off, std::uint32_t v, unsigned len) {
        for (unsigned i = 0; i < len; ++i) bytes_[off + i] = static_cast<std::uint8_t>(v >> (8 * i));
    };
    put(0x00, id_.vendor, 2);
    put(0x02, id_.device, 2);
    put(0x08, id_.revision, 1);
    put(0x09, id_.class_code, 3);
    put(0x0e, 0x00, 1);  // header type 0, single function
    put(0x2c, id_.subsystem_vendor, 2);
    put(0x2e, id_.subsystem, 2);
    put(0x3d, 0x01, 1);  // interrupt pin INTA#
    // Command: I/O space (no I/O BAR, but the bit is harmless), memory space, bus master, parity
    // error response, SERR# enable, interrupt disable.
    writable_[0x04] = 0x47;
    writable_[0x05] = 0x05;
    writable_[0x0c] = 0xff;  // cache line size
    writable_[0x0d] = 0xff;  // latency timer
    writable_[0x3c] = 0xff;  // interrupt line
    // BAR0: 32-bit memory, not prefetchable (low 4 bits 0); address bits from log2(size) up.
    const std::uint32_t mask = ~(id_.bar0_size - 1) & ~0xfu;
    for (unsigned i = 0; i < 4; ++i) writable_[kBar0 + i] = static_cast<std::uint8_t>(mask >> (8 * i));
}

std::uint32_t pci_config_space::read(unsigned offset, unsigned length) const {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < length && offset + i < bytes_.size(); ++i) {
        v |= static_cast<std::uint32_t>(bytes_[offset + i]) << (8 * i);
    }
    return v;
}

void pci_config_space::write(unsigned offset, std::uint32_t value, unsigned length) {
    for (unsigned i = 0; i < length && offset + i < bytes_.size(); ++i) {
        const auto b = static_cast<std::uint8_t>(value >> (8 * i));
        const std::uint8_t m = writable_[offset + i];
        bytes_[offset + i] = static_cast<std::uint8_t>((bytes_[offset + i] & ~m) | (b & m));
    }
}

bool pci_config_space::bar0_decode(std::uint64_t address, unsigned size, std::uint32_t* offset) const {
    if (!memory_enabled()) return false;
    const std::uint64_t base = bar0_base();
    if (address < base || size > id_.bar0_size || address - base > id_.bar0_size - size) return false;
    *offset = static_cast<std::uint32_t>(address - base);
    return true;
}

}  // namespace rnic::qemu
