// A large zero-filled byte array whose pages the operating system commits only when first written
// (an anonymous private mapping). A platform of 256 hosts with 64 MiB of host memory each would
// otherwise touch 16 GiB at start; most of it is never used. Reads of untouched bytes give zeros,
// exactly as a std::vector<uint8_t>(size, 0) would.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <sys/mman.h>

namespace rnic {

class zeroed_memory {
public:
    explicit zeroed_memory(std::size_t size) : size_(size) {
        if (size_ == 0) return;
        void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        data_ = static_cast<std::uint8_t*>(p);
    }
    ~zeroed_memory() {
        if (data_ != nullptr) munmap(data_, size_);
    }
    zeroed_memory(const zeroed_memory&) = delete;
    zeroed_memory& operator=(const zeroed_memory&) = delete;

    std::uint8_t* data() { return data_; }
    const std::uint8_t* data() const { return data_; }
    std::size_t size() const { return size_; }

private:
    std::size_t size_ = 0;
    std::uint8_t* data_ = nullptr;
};

}  // namespace rnic
