// What a DMA client may tell the DMA engine about one transfer besides [address, address+length)
// on the host and its data pointer (the NIC side, always contiguous). Attach it to the
// tlm_generic_payload sent to dma_engine::dma_in; the engine fills the result fields.
//
//   dma_ext ext;
//   frames.placement_breaks(options, frame_pos, header_len, len, &ext.marker_breaks);  // framing.h
//   gp.set_extension(&ext);  ... dma_out->b_transport(gp, delay);  gp.clear_extension(&ext);
//
// Host side, one of:
//  - nothing: the contiguous range [gp address, + gp length);
//  - sg: a scatter/gather list whose lengths add up to the gp length (the gp address is ignored);
//  - sgl_ring/sgl_entries/sgl_first/sgl_count: a list of SG elements in the format the engine was
//    built with (dma_params::sge; the RNIC's is regmap.h's) in a ring in host memory, which the
//    engine fetches itself (descriptor fetch) and then follows; their lengths must add up to the gp
//    length.
// Markers: marker_breaks are offsets in the NIC-side data (0 < o < length, ascending) where the
// stream had a marker between the data's bytes (the framing computes them; the engine only cuts). With dma_params::markers == fragment each marker-free run is a separate
// bus transfer; with skip the engine removes markers on the fly and they cost nothing on the bus.
#pragma once

#include <cstdint>
#include <tlm>
#include <vector>

namespace rnic {

struct sg_element {
    std::uint64_t addr = 0;
    std::uint32_t len = 0;
};

struct dma_ext : tlm::tlm_extension<dma_ext> {
    // ---- Request ----
    std::vector<sg_element> sg;
    std::uint64_t sgl_ring = 0;     // host address of the SG ring (0: none)
    std::uint32_t sgl_entries = 0;  // ring size in elements
    std::uint32_t sgl_first = 0;    // index of the first element
    std::uint32_t sgl_count = 0;    // elements to use at most (stops early at one flagged last)
    std::vector<std::uint32_t> marker_breaks;

    // ---- Result (filled by the engine) ----
    std::uint32_t bus_transfers = 0;       // transfers issued to the host bus
    std::uint32_t marker_fragments = 0;    // of those, extra ones caused by markers
    std::uint32_t descriptor_fetches = 0;  // DMA reads of SG elements
    std::uint64_t bus_packets = 0;         // TLPs / PCI-X transactions of the whole transfer

    tlm::tlm_extension_base* clone() const override { return new dma_ext(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const dma_ext&>(other); }
};

}  // namespace rnic
