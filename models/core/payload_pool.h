// Generic payloads for blocking calls, reused instead of built per call. Constructing a
// tlm_generic_payload allocates its extension array and destroying it frees it again; the data
// paths make about fifteen calls per small RDMA Write, and that allocation was a fifth of the
// simulator's time for 64-byte Writes. A payload taken here is handed back clean: default
// attributes, no extension. SystemC runs every process in one OS thread; the pool is per thread
// so that separate kernels in separate threads would not share it.
#pragma once

#include <memory>
#include <tlm>
#include <vector>

namespace rnic {

class pooled_payload {
public:
    pooled_payload() : gp_(take()) {}
    ~pooled_payload() { give_back(gp_); }
    pooled_payload(const pooled_payload&) = delete;
    pooled_payload& operator=(const pooled_payload&) = delete;

    tlm::tlm_generic_payload& operator*() const { return *gp_; }
    tlm::tlm_generic_payload* operator->() const { return gp_; }

private:
    static std::vector<std::unique_ptr<tlm::tlm_generic_payload>>& free_list() {
        thread_local std::vector<std::unique_ptr<tlm::tlm_generic_payload>> list;
        return list;
    }
    static tlm::tlm_generic_payload* take() {
        auto& list = free_list();
        if (list.empty()) return new tlm::tlm_generic_payload;
        tlm::tlm_generic_payload* gp = list.back().release();
        list.pop_back();
        return gp;
    }
    static void give_back(tlm::tlm_generic_payload* gp) {
        // Back to what a new payload holds (tlm_generic_payload's constructor).
        gp->set_command(tlm::TLM_IGNORE_COMMAND);
        gp->set_address(0);
        gp->set_data_ptr(nullptr);
        gp->set_data_length(0);
        gp->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        gp->set_dmi_allowed(false);
        gp->set_byte_enable_ptr(nullptr);
        gp->set_byte_enable_length(0);
        gp->set_streaming_width(0);
        gp->set_gp_option(tlm::TLM_MIN_PAYLOAD);
        // Extensions: the users (mem_transport, send_stream) clear the one they set, and by the
        // TLM-2.0 rules (IEEE 1666-2011 14.21) a target or interconnect that adds an extension to
        // a transaction without a memory manager removes it before returning; so none is left.
        free_list().emplace_back(gp);
    }

    tlm::tlm_generic_payload* gp_;
};

}  // namespace rnic
