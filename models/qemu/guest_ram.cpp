#include "qemu/guest_ram.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rnic::qemu {

guest_ram::~guest_ram() {
    clear();
}

void guest_ram::clear() {
    for (const mapping& m : maps_) ::munmap(m.map_base, m.map_len);
    maps_.clear();
}

bool guest_ram::sync(std::vector<mpqemu::ram_region> regions, std::string* error) {
    clear();
    ++syncs_;
    const long page = ::sysconf(_SC_PAGESIZE);
    bool ok = true;
    for (std::size_t i = 0; i < regions.size() && ok; ++i) {
        const mpqemu::ram_region& r = regions[i];
        const std::string which = "RAM region " + std::to_string(i) + " (guest-physical 0x" +
                                  [](std::uint64_t v) {
                                      char b[24];
                                      std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v));
                                      return std::string(b);
                                  }(r.gpa) +
                                  ", " + std::to_string(r.size) + " bytes)";
        struct stat st {};
        if (::fstat(r.fd, &st) != 0) {
            *error = which + ": fstat of its descriptor failed: " + std::strerror(errno);
            ok = false;
        } else if (page <= 0 || r.offset % static_cast<std::uint64_t>(page) != 0) {
            *error = which + ": file offset " + std::to_string(r.offset) + " is not page-aligned";
            ok = false;
        } else if (st.st_size < 0 || r.offset > static_cast<std::uint64_t>(st.st_size) ||
                   r.size > static_cast<std::uint64_t>(st.st_size) - r.offset) {
            *error = which + ": offset " + std::to_string(r.offset) + " + size is beyond the file's " +
                     std::to_string(st.st_size) + " bytes";
            ok = false;
        } else {
            for (const mapping& m : maps_) {
                if (r.gpa < m.gpa + m.size && m.gpa < r.gpa + r.size) {
                    *error = which + " overlaps another region";
                    ok = false;
                }
            }
        }
        if (!ok) break;
        void* p = ::mmap(nullptr, r.size, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, static_cast<off_t>(r.offset));
        if (p == MAP_FAILED) {
            *error = which + ": mmap failed: " + std::strerror(errno);
            ok = false;
            break;
        }
        maps_.push_back({r.gpa, r.size, static_cast<std::uint8_t*>(p), p, r.size});
    }
    for (const mpqemu::ram_region& r : regions) {
        if (r.fd >= 0) ::close(r.fd);  // the mappings stay valid without the descriptors
    }
    if (!ok) clear();
    return ok;
}

std::uint8_t* guest_ram::translate(std::uint64_t gpa, std::uint64_t len) const {
    for (const mapping& m : maps_) {
        if (gpa >= m.gpa && gpa - m.gpa <= m.size && len <= m.size - (gpa - m.gpa)) return m.base + (gpa - m.gpa);
    }
    return nullptr;
}

bool guest_ram::read(std::uint64_t gpa, void* dst, std::size_t len) const {
    const std::uint8_t* p = translate(gpa, len);
    if (p == nullptr) return false;
    std::memcpy(dst, p, len);
    return true;
}

bool guest_ram::write(std::uint64_t gpa, const void* src, std::size_t len) const {
    std::uint8_t* p = translate(gpa, len);
    if (p == nullptr) return false;
    std::memcpy(p, src, len);
    return true;
}

std::uint64_t guest_ram::bytes() const {
    std::uint64_t n = 0;
    for (const mapping& m : maps_) n += m.size;
    return n;
}

}  // namespace rnic::qemu
