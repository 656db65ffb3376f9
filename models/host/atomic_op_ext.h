// A DMA read that is a PCIe AtomicOp (PCIe Base Specification §6.15): the host performs the
// operation on the 8 bytes at the read's address, atomically with respect to every other access,
// and the read returns the original value. Attached by the RDMA engine's atomic unit when the
// scenario enables AtomicOp TLPs (rnic.rdma.atomics = "pcie_atomicop"); the DMA engine passes it
// on to the host bus. A bus without AtomicOps (PCI-X) refuses the transaction.
#pragma once

#include <cstdint>
#include <tlm>

namespace rnic {

struct atomic_op_ext : tlm::tlm_extension<atomic_op_ext> {
    enum class op : std::uint8_t { fetch_add, compare_swap };  // 64-bit FetchAdd, 64-bit CAS
    op kind = op::fetch_add;
    std::uint64_t operand = 0;  // add value, or swap value
    std::uint64_t compare = 0;  // CAS only
    // ---- Result ----
    std::uint64_t original = 0;  // also copied into the read's data (little-endian, as memory holds it)

    // Request payload of the AtomicOp TLP: one operand for FetchAdd, compare + swap for CAS.
    std::uint32_t request_payload() const { return kind == op::fetch_add ? 8u : 16u; }

    tlm::tlm_extension_base* clone() const override { return new atomic_op_ext(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const atomic_op_ext&>(other); }
};

}  // namespace rnic
