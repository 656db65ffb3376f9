// Helpers of the QEMU-transport tests: socketpairs, memfds, sending bytes with descriptors.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace rnic::test {

struct socket_pair {
    int qemu = -1, remote = -1;  // QEMU's end, the remote's end
    socket_pair() {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
            qemu = sv[0];
            remote = sv[1];
        }
    }
    ~socket_pair() {
        if (qemu >= 0) ::close(qemu);
        if (remote >= 0) ::close(remote);
    }
};

// Sends `bytes` with `fds` as SCM_RIGHTS in one sendmsg; true when all went.
inline bool send_with_fds(int sock, const std::vector<std::uint8_t>& bytes, const std::vector<int>& fds = {}) {
    iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    std::vector<char> control(CMSG_SPACE(sizeof(int) * (fds.empty() ? 1 : fds.size())));
    if (!fds.empty()) {
        msg.msg_control = control.data();
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    return ::sendmsg(sock, &msg, 0) == static_cast<ssize_t>(bytes.size());
}

// A memfd of `size` bytes (guest RAM stand-in); -1 on failure.
inline int make_memfd(std::size_t size) {
    const int fd = ::memfd_create("rnic-test-ram", MFD_CLOEXEC);
    if (fd >= 0 && ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Reads exactly n bytes (blocking); empty on failure.
inline std::vector<std::uint8_t> read_exact(int sock, std::size_t n) {
    std::vector<std::uint8_t> out(n);
    std::size_t got = 0;
    while (got < n) {
        const ssize_t k = ::recv(sock, out.data() + got, n - got, 0);
        if (k <= 0) return {};
        got += static_cast<std::size_t>(k);
    }
    return out;
}

}  // namespace rnic::test
