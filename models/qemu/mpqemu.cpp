#include "qemu/mpqemu.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rnic::qemu {
namespace mpqemu {
namespace {

std::uint64_t get_u64(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
}
std::uint32_t get_u32(const std::uint8_t* p) {
    return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
           static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
void put_u64(std::uint8_t* p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
void put_u32(std::uint8_t* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::string what(const message& m) {
    return std::string(to_string(static_cast<cmd>(m.cmd))) + " (command " + std::to_string(m.cmd) + ")";
}

bool check_shape(const message& m, cmd want, std::size_t size, std::size_t fds, std::string* error) {
    if (m.cmd != static_cast<std::int32_t>(want)) {
        *error = what(m) + " is not a " + to_string(want) + " message";
        return false;
    }
    if (m.data.size() != size) {
        *error = what(m) + ": " + std::to_string(m.data.size()) + " bytes of data, expected " + std::to_string(size);
        return false;
    }
    if (m.fds.size() != fds) {
        *error = what(m) + ": " + std::to_string(m.fds.size()) + " file descriptors, expected " + std::to_string(fds);
        return false;
    }
    return true;
}

}  // namespace

const char* to_string(cmd c) {
    switch (c) {
    case cmd::sync_sysmem:
        return "sync_sysmem";
    case cmd::ret:
        return "ret";
    case cmd::pci_cfgwrite:
        return "pci_cfgwrite";
    case cmd::pci_cfgread:
        return "pci_cfgread";
    case cmd::bar_write:
        return "bar_write";
    case cmd::bar_read:
        return "bar_read";
    case cmd::set_irqfd:
        return "set_irqfd";
    case cmd::device_reset:
        return "device_reset";
    }
    return "unknown";
}

void message::close_fds() {
    for (int fd : fds) {
        if (fd >= 0) ::close(fd);
    }
    fds.clear();
}

bool parse_header(const std::uint8_t* bytes, std::int32_t* c, std::uint64_t* size, std::string* error) {
    *c = static_cast<std::int32_t>(get_u32(bytes));
    *size = get_u64(bytes + 8);
    if (*size > kMaxData) {
        *error = "message header of command " + std::to_string(*c) + " announces " + std::to_string(*size) +
                 " bytes of data (at most " + std::to_string(kMaxData) + "): the stream is out of step";
        return false;
    }
    return true;
}

std::vector<std::uint8_t> encode(std::int32_t c, const std::uint8_t* data, std::size_t size) {
    std::vector<std::uint8_t> out(kHeaderSize + size, 0);
    put_u32(out.data(), static_cast<std::uint32_t>(c));
    put_u64(out.data() + 8, size);
    if (size > 0) std::memcpy(out.data() + kHeaderSize, data, size);
    return out;
}

std::vector<std::uint8_t> encode_ret(std::uint64_t value) {
    std::uint8_t d[kRetSize];
    put_u64(d, value);
    return encode(static_cast<std::int32_t>(cmd::ret), d, sizeof d);
}

bool decode_config(const message& m, config_access* out, std::string* error) {
    const cmd c = static_cast<cmd>(m.cmd);
    if (!check_shape(m, c == cmd::pci_cfgread ? cmd::pci_cfgread : cmd::pci_cfgwrite, kConfigSize, 0, error)) {
        return false;
    }
    out->address = get_u32(m.data.data());
    out->value = get_u32(m.data.data() + 4);
    const auto len = static_cast<std::int32_t>(get_u32(m.data.data() + 8));
    if (len != 1 && len != 2 && len != 4) {
        *error = what(m) + ": access length " + std::to_string(len) + " (1, 2 or 4 expected)";
        return false;
    }
    out->length = static_cast<unsigned>(len);
    if (out->address > 256 - out->length) {
        *error = what(m) + ": address 0x" + std::to_string(out->address) + " + " + std::to_string(len) +
                 " is beyond the 256-byte configuration space";
        return false;
    }
    return true;
}

bool decode_bar(const message& m, bar_access* out, std::string* error) {
    const cmd c = static_cast<cmd>(m.cmd);
    if (!check_shape(m, c == cmd::bar_read ? cmd::bar_read : cmd::bar_write, kBarSize, 0, error)) return false;
    out->address = get_u64(m.data.data());
    out->value = get_u64(m.data.data() + 8);
    out->size = get_u32(m.data.data() + 16);
    out->memory = m.data[20] != 0;
    if (out->size != 1 && out->size != 2 && out->size != 4 && out->size != 8) {
        *error = what(m) + ": access size " + std::to_string(out->size) + " (1, 2, 4 or 8 expected)";
        return false;
    }
    return true;
}

bool decode_sync_sysmem(message& m, std::vector<ram_region>* out, std::string* error) {
    out->clear();
    auto fail = [&](const std::string& why) {
        *error = what(m) + ": " + why;
        m.close_fds();
        return false;
    };
    if (m.cmd != static_cast<std::int32_t>(cmd::sync_sysmem)) return fail("not a sync_sysmem message");
    if (m.data.size() != kSyncSysmemSize) {
        return fail(std::to_string(m.data.size()) + " bytes of data, expected " + std::to_string(kSyncSysmemSize));
    }
    if (m.fds.empty() || m.fds.size() > kMaxFds) {
        return fail(std::to_string(m.fds.size()) + " file descriptors (1 to " + std::to_string(kMaxFds) + " expected)");
    }
    for (std::size_t i = 0; i < m.fds.size(); ++i) {
        ram_region r;
        r.gpa = get_u64(m.data.data() + 8 * i);
        r.size = get_u64(m.data.data() + 64 + 8 * i);
        r.offset = get_u64(m.data.data() + 128 + 8 * i);
        r.fd = m.fds[i];
        if (r.size == 0) return fail("region " + std::to_string(i) + " has size 0");
        if (r.gpa + r.size < r.gpa) return fail("region " + std::to_string(i) + " wraps around the address space");
        if (::fcntl(r.fd, F_GETFD) == -1) return fail("region " + std::to_string(i) + "'s descriptor is not open");
        out->push_back(r);
    }
    m.fds.clear();  // now owned by *out
    return true;
}

std::vector<std::uint8_t> encode_config(cmd c, const config_access& a) {
    std::uint8_t d[kConfigSize] = {};
    put_u32(d, a.address);
    put_u32(d + 4, a.value);
    put_u32(d + 8, a.length);
    return encode(static_cast<std::int32_t>(c), d, sizeof d);
}

std::vector<std::uint8_t> encode_bar(cmd c, const bar_access& a) {
    std::uint8_t d[kBarSize] = {};
    put_u64(d, a.address);
    put_u64(d + 8, a.value);
    put_u32(d + 16, a.size);
    d[20] = a.memory ? 1 : 0;
    return encode(static_cast<std::int32_t>(c), d, sizeof d);
}

std::vector<std::uint8_t> encode_sync_sysmem(const std::vector<ram_region>& regions) {
    std::uint8_t d[kSyncSysmemSize] = {};
    for (std::size_t i = 0; i < regions.size() && i < kMaxFds; ++i) {
        put_u64(d + 8 * i, regions[i].gpa);
        put_u64(d + 64 + 8 * i, regions[i].size);
        put_u64(d + 128 + 8 * i, regions[i].offset);
    }
    return encode(static_cast<std::int32_t>(cmd::sync_sysmem), d, sizeof d);
}

}  // namespace mpqemu

mpqemu_channel::~mpqemu_channel() {
    for (const fd_batch& b : batches_) {
        for (int fd : b.fds) ::close(fd);
    }
}

bool mpqemu_channel::read_some() {
    if (fd_ < 0) {
        error_ = "no socket";
        return false;
    }
    std::uint8_t chunk[4096];
    iovec iov{chunk, sizeof chunk};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 16)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    do {
        n = ::recvmsg(fd_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
        error_ = std::string("receive from the QEMU socket failed: ") + std::strerror(errno);
        return false;
    }
    std::vector<int> fds;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (std::size_t i = 0; i < count; ++i) {
                int fd;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                fds.push_back(fd);
            }
        }
    }
    if ((msg.msg_flags & MSG_CTRUNC) != 0) {
        for (int fd : fds) ::close(fd);
        error_ = "more file descriptors in one message than the channel takes: the stream is out of step";
        return false;
    }
    if (n == 0) {
        eof_ = true;
        return true;
    }
    buf_.insert(buf_.end(), chunk, chunk + n);
    bytes_in_ += static_cast<std::uint64_t>(n);
    if (!fds.empty()) {
        // The last message that begins in the buffer (buf_[0] begins one): walk the headers.
        std::size_t pos = 0, last = 0;
        while (pos < buf_.size()) {
            last = pos;
            if (buf_.size() - pos < mpqemu::kHeaderSize) break;
            std::uint64_t size = 0;
            for (int i = 7; i >= 0; --i) size = size << 8 | buf_[pos + 8 + static_cast<std::size_t>(i)];
            if (size > mpqemu::kMaxData) break;  // receive() reports the stream out of step
            pos += mpqemu::kHeaderSize + static_cast<std::size_t>(size);
        }
        batches_.push_back({consumed_ + last, std::move(fds)});
    }
    return true;
}

mpqemu_channel::result mpqemu_channel::receive(mpqemu::message* out) {
    if (!error_.empty()) return result::error;
    for (int round = 0; round < 2; ++round) {
        if (buf_.size() >= mpqemu::kHeaderSize) {
            std::int32_t c = 0;
            std::uint64_t size = 0;
            if (!mpqemu::parse_header(buf_.data(), &c, &size, &error_)) return result::error;
            if (buf_.size() >= mpqemu::kHeaderSize + size) {
                std::vector<int> fds;
                bool stray = false;
                for (fd_batch& b : batches_) {
                    if (b.owner == consumed_) {
                        fds.insert(fds.end(), b.fds.begin(), b.fds.end());
                    } else if (b.owner < consumed_) {
                        stray = true;  // cannot happen with the owners read_some computes; never leak them
                        for (int fd : b.fds) ::close(fd);
                    }
                    if (b.owner <= consumed_) b.fds.clear();
                }
                batches_.erase(
                    std::remove_if(batches_.begin(), batches_.end(), [](const fd_batch& b) { return b.fds.empty(); }),
                    batches_.end());
                if (fds.size() > mpqemu::kMaxFds || stray) {
                    for (int fd : fds) ::close(fd);
                    error_ = stray ? std::string(
                                         "file descriptors arrived that belong to no message: the stream is "
                                         "out of step")
                                   : std::to_string(fds.size()) + " file descriptors came with one " +
                                         mpqemu::to_string(static_cast<mpqemu::cmd>(c)) + " message (at most " +
                                         std::to_string(mpqemu::kMaxFds) + "): the stream is out of step";
                    return result::error;
                }
                const std::size_t total = mpqemu::kHeaderSize + static_cast<std::size_t>(size);
                out->cmd = c;
                out->data.assign(buf_.begin() + mpqemu::kHeaderSize, buf_.begin() + static_cast<std::ptrdiff_t>(total));
                out->fds = std::move(fds);
                buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(total));
                consumed_ += total;
                return result::message;
            }
        }
        if (eof_) {
            if (!buf_.empty()) {
                error_ = "QEMU closed the connection in the middle of a message (" + std::to_string(buf_.size()) +
                         " bytes of it received)";
            }
            return result::closed;
        }
        if (round == 0 && !read_some()) return result::error;
    }
    return eof_ ? (buf_.empty() ? result::closed : result::again) : result::again;
}

bool mpqemu_channel::send(const std::vector<std::uint8_t>& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd p{fd_, POLLOUT, 0};
            ::poll(&p, 1, 100);
        } else {
            error_ = std::string("send to the QEMU socket failed: ") + std::strerror(errno);
            return false;
        }
    }
    return true;
}

bool mpqemu_channel::wait_readable_us(std::int64_t timeout_us) const {
    pollfd p{fd_, POLLIN, 0};
    timespec ts{static_cast<time_t>(timeout_us / 1000000), static_cast<long>(timeout_us % 1000000) * 1000};
    int n;
    do {
        n = ::ppoll(&p, 1, timeout_us < 0 ? nullptr : &ts, nullptr);
    } while (n < 0 && errno == EINTR);
    return n > 0;
}

bool mpqemu_channel::wait_readable(int timeout_ms) const {
    pollfd p{fd_, POLLIN, 0};
    int n;
    do {
        n = ::poll(&p, 1, timeout_ms);
    } while (n < 0 && errno == EINTR);
    return n > 0;
}

int open_proxy_socket(int fd, const std::string& listen_path, int timeout_ms, std::string* error) {
    if (fd >= 0) {
        int type = 0;
        socklen_t len = sizeof type;
        if (::fcntl(fd, F_GETFD) == -1) {
            *error = "qemu.fd: descriptor " + std::to_string(fd) + " is not open (" + std::strerror(errno) + ")";
            return -1;
        }
        if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) {
            *error = "qemu.fd: descriptor " + std::to_string(fd) + " is not a stream socket";
            return -1;
        }
        return fd;
    }
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (listen_path.empty() || listen_path.size() >= sizeof addr.sun_path) {
        *error = "qemu.listen: \"" + listen_path + "\" is not a usable UNIX socket path (1 to " +
                 std::to_string(sizeof addr.sun_path - 1) + " bytes)";
        return -1;
    }
    std::memcpy(addr.sun_path, listen_path.c_str(), listen_path.size() + 1);
    const int ls = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0) {
        *error = std::string("qemu.listen: socket: ") + std::strerror(errno);
        return -1;
    }
    ::unlink(listen_path.c_str());
    if (::bind(ls, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(ls, 1) != 0) {
        *error = "qemu.listen: cannot listen on " + listen_path + ": " + std::strerror(errno);
        ::close(ls);
        return -1;
    }
    pollfd p{ls, POLLIN, 0};
    int n;
    do {
        n = ::poll(&p, 1, timeout_ms);
    } while (n < 0 && errno == EINTR);
    int c = -1;
    if (n > 0) c = ::accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
        *error = "qemu.listen: no connection on " + listen_path + " within " + std::to_string(timeout_ms) + " ms" +
                 (n < 0 || (n > 0 && c < 0) ? std::string(" (") + std::strerror(errno) + ")" : std::string());
    }
    ::close(ls);
    ::unlink(listen_path.c_str());
    return c;
}

}  // namespace rnic::qemu
