// DMA to and from a memory region's bytes, split at page boundaries for a page-list region
// (page_list.h): one transaction per run of contiguous host memory, in order, each adding its time
// to `delay`. A contiguous region is one transaction, exactly the one a plain mem_read/mem_write
// would issue.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>

#include "core/mem_access.h"
#include "rdma/page_list.h"

namespace rnic {

// The first error response, or TLM_OK_RESPONSE; TLM_ADDRESS_ERROR_RESPONSE when the bytes reach past
// a page list's end (a model bug: the caller checked the region's bounds).
template <typename Socket>
tlm::tlm_response_status region_transport(Socket& socket, tlm::tlm_command cmd, const region_map& map,
                                          std::uint64_t off, void* data, std::size_t len, sc_core::sc_time& delay) {
    tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
    auto* bytes = static_cast<std::uint8_t*>(data);
    const bool covered = map.for_each_run(off, len, [&](std::uint64_t host, std::uint64_t n, std::uint64_t done) {
        status = mem_transport(socket, cmd, host, bytes + done, static_cast<std::size_t>(n), delay);
        return status == tlm::TLM_OK_RESPONSE;
    });
    if (!covered && status == tlm::TLM_OK_RESPONSE) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
    return status;
}

template <typename Socket>
tlm::tlm_response_status region_read(Socket& socket, const region_map& map, std::uint64_t off, void* data,
                                     std::size_t len, sc_core::sc_time& delay) {
    return region_transport(socket, tlm::TLM_READ_COMMAND, map, off, data, len, delay);
}

template <typename Socket>
tlm::tlm_response_status region_write(Socket& socket, const region_map& map, std::uint64_t off, const void* data,
                                      std::size_t len, sc_core::sc_time& delay) {
    return region_transport(socket, tlm::TLM_WRITE_COMMAND, map, off, const_cast<void*>(data), len, delay);
}

}  // namespace rnic
