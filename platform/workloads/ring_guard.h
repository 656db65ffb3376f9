// The hostile workload's second shadow (issue 19, docs/reliability.md): host a's driver rings. The
// device may write into them only what the driver expects from it: whole CQEs into CQ rings (one
// 32-byte slot at a time, regmap::kCqeSize) and the status and result words of firmware command
// entries (regmap::cmd_off::status, result). Send and receive queue rings are the driver's alone.
// Every DMA write of the device into host memory is classified as it happens (stricter than a
// compare after the run: a byte written and written back would pass a compare). Plain C++.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rnic::platform {

class ring_guard {
public:
    enum class ring_kind { cq, sq, rq, command };

    // Ring memory [addr, addr + len) of the kind given, from now on / no longer.
    void add(std::uint64_t addr, std::uint64_t len, ring_kind kind);
    void remove(std::uint64_t addr);
    // Memory another check covers (the application arena and its shadow): not counted here.
    void exclude(std::uint64_t addr, std::uint64_t len);

    // One DMA write of the device.
    void on_device_write(std::uint64_t addr, std::uint64_t len);

    // Bytes written where the device may not write in ring memory; bytes of allowed ring writes
    // (CQEs, command status and result); bytes written outside every ring and the excluded memory
    // (driver scratch buffers the firmware answers into).
    std::uint64_t bytes_outside_grants() const { return outside_; }
    std::uint64_t allowed_bytes() const { return allowed_; }
    std::uint64_t bytes_elsewhere() const { return elsewhere_; }
    // The first few forbidden writes, for the findings.
    const std::vector<std::string>& findings() const { return findings_; }

private:
    struct ring {
        std::uint64_t len;
        ring_kind kind;
    };
    // Of the bytes [addr, addr + len) inside `r` (at `base`), how many the device may not write.
    std::uint64_t forbidden(std::uint64_t base, const ring& r, std::uint64_t addr, std::uint64_t len) const;
    void finding(std::uint64_t addr, std::uint64_t len, const char* what);

    std::map<std::uint64_t, ring> rings_;  // base -> ring
    std::uint64_t excl_begin_ = 0, excl_end_ = 0;
    std::uint64_t outside_ = 0, allowed_ = 0, elsewhere_ = 0;
    std::vector<std::string> findings_;
};

}  // namespace rnic::platform
