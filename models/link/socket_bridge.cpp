#include "link/socket_bridge.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "core/sim_log.h"
#include "core/stream.h"
#include "proto/bytes.h"
#include "proto/net.h"

namespace rnic {
namespace {

using steady = std::chrono::steady_clock;

std::int64_t to_ns(const sc_core::sc_time& t) {
    return static_cast<std::int64_t>(to_ps(t) / 1000);
}

std::string errno_text(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

bool set_nonblocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL, 0);
    return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

}  // namespace

socket_bridge::socket_bridge(const sc_core::sc_module_name& name, const socket_bridge_params& params)
    : sc_module(name), eth_rx("eth_rx"), eth_tx("eth_tx"), params_(params), rx_buf_(kMaxStreamFrame + 4) {
    eth_rx.register_b_transport(this, &socket_bridge::eth_rx_b_transport);
    SC_HAS_PROCESS(socket_bridge);
    SC_THREAD(bridge_thread);
}

socket_bridge::~socket_bridge() {
    if (fd_ >= 0) ::close(fd_);
}

bool socket_bridge::open(std::string* error) {
    const std::string where = params_.address + ":" + std::to_string(params_.port);
    auto failed = [&](const std::string& why) {
        if (error != nullptr)
            *error = std::string(name()) + ": " + (params_.listen ? "listen on " : "connect to ") + where + ": " + why;
        return false;
    };
    if (fd_ >= 0) return true;
    if (params_.port == 0) return failed("no port given");
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = params_.listen ? AI_PASSIVE : 0;
    addrinfo* res = nullptr;
    const std::string port = std::to_string(params_.port);
    if (const int rc = ::getaddrinfo(params_.address.c_str(), port.c_str(), &hints, &res); rc != 0) {
        return failed(std::string("cannot resolve the address: ") + ::gai_strerror(rc));
    }
    const steady::time_point deadline = steady::now() + params_.open_timeout;
    std::string last_error = "timed out";
    int fd = -1;
    if (!params_.listen) {
        // The far end may still be starting (QEMU opens its listening socket a moment after launch):
        // retry refused connections until the deadline.
        while (fd < 0) {
            for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
                const int s = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
                if (s < 0) {
                    last_error = errno_text("socket");
                    continue;
                }
                if (::connect(s, ai->ai_addr, ai->ai_addrlen) == 0) {
                    fd = s;
                } else {
                    last_error = errno_text("connect");
                    ::close(s);
                }
            }
            if (fd >= 0 || steady::now() >= deadline) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    } else {
        int ls = -1;
        for (addrinfo* ai = res; ai != nullptr && ls < 0; ai = ai->ai_next) {
            ls = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (ls < 0) {
                last_error = errno_text("socket");
                continue;
            }
            const int one = 1;
            ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (::bind(ls, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(ls, 1) != 0) {
                last_error = errno_text("bind/listen");
                ::close(ls);
                ls = -1;
            }
        }
        if (ls >= 0) {
            while (fd < 0) {
                const auto left =
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
                if (left <= 0) break;
                pollfd p{ls, POLLIN, 0};
                const int n = ::poll(&p, 1, static_cast<int>(left));
                if (n < 0 && errno != EINTR) {
                    last_error = errno_text("poll");
                    break;
                }
                if (n > 0) {
                    fd = ::accept(ls, nullptr, nullptr);
                    if (fd < 0 && errno != EINTR && errno != EAGAIN) {
                        last_error = errno_text("accept");
                        break;
                    }
                }
            }
            ::close(ls);
        }
    }
    ::freeaddrinfo(res);
    if (fd < 0) return failed(last_error);
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!set_nonblocking(fd)) {
        const std::string why = errno_text("fcntl");
        ::close(fd);
        return failed(why);
    }
    fd_ = fd;
    connection_error_.clear();
    RNIC_LOG_AT(info, link, now_ps(), name(),
                (params_.listen ? "accepted a connection on " : "connected to ") << where);
    return true;
}

void socket_bridge::close() {
    if (fd_ >= 0) {
        flush_tx();
        ::close(fd_);
        fd_ = -1;
    }
    tx_buf_.clear();
    tx_sent_ = 0;
    active_ = false;
}

void socket_bridge::fail(const std::string& why) {
    if (connection_error_.empty()) connection_error_ = why;
    RNIC_MLOG(error, link, why);
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    tx_buf_.clear();
    tx_sent_ = 0;
    active_ = false;
}

void socket_bridge::eth_rx_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    const std::uint32_t len = gp.get_data_length();
    if (fd_ < 0) {
        // Like an unplugged cable: the frame is lost.
        if (tx_drops_closed_++ == 0) {
            RNIC_MLOG_D(warn, link, delay, "not connected: frames to the socket are dropped");
        }
        return;
    }
    if (len > params_.mtu + proto::net::kEthernetHeaderSize) {
        ++oversize_tx_;
        RNIC_MLOG_D(warn, link, delay, "dropped a " << len << "-byte frame larger than MTU " << params_.mtu << " + 14");
        return;
    }
    if (tx_buf_.size() - tx_sent_ + 4 + len > params_.tx_backlog_bytes) {
        ++tx_drops_backlog_;
        RNIC_MLOG_D(warn, link, delay, "socket backlog full (" << params_.tx_backlog_bytes << " bytes): frame dropped");
        return;
    }
    const std::size_t at = tx_buf_.size();
    tx_buf_.resize(at + 4 + len);
    proto::put_be32(tx_buf_.data() + at, len);
    std::memcpy(tx_buf_.data() + at + 4, gp.get_data_ptr(), len);
    ++frames_to_socket_;
    bytes_to_socket_ += len;
    flush_tx();
}

void socket_bridge::flush_tx() {
    while (fd_ >= 0 && tx_sent_ < tx_buf_.size()) {
        const ssize_t n =
            ::send(fd_, tx_buf_.data() + tx_sent_, tx_buf_.size() - tx_sent_, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            tx_sent_ += static_cast<std::size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;  // the rest goes at the next poll
        } else {
            fail(errno_text("send to the socket failed"));
            return;
        }
    }
    if (tx_sent_ == tx_buf_.size()) {
        tx_buf_.clear();
        tx_sent_ = 0;
    } else if (tx_sent_ > (1u << 20)) {
        tx_buf_.erase(tx_buf_.begin(), tx_buf_.begin() + static_cast<std::ptrdiff_t>(tx_sent_));
        tx_sent_ = 0;
    }
}

void socket_bridge::poll_socket() {
    ++polls_;
    flush_tx();
    // Bounded work per poll: at most a few buffers' worth, the rest waits for the next poll.
    for (int round = 0; round < 16 && fd_ >= 0; ++round) {
        const ssize_t n = ::recv(fd_, rx_buf_.data() + rx_used_, rx_buf_.size() - rx_used_, MSG_DONTWAIT);
        if (n > 0) {
            rx_used_ += static_cast<std::size_t>(n);
            parse_frames();
            continue;
        }
        if (n == 0) {
            fail(rx_used_ == 0 ? std::string("the peer closed the connection")
                               : "the peer closed the connection in the middle of a frame (" +
                                     std::to_string(rx_used_) + " bytes of it received)");
            return;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        fail(errno_text("receive from the socket failed"));
        return;
    }
}

void socket_bridge::parse_frames() {
    std::size_t off = 0;
    while (fd_ >= 0 && rx_used_ - off >= 4) {
        const std::uint32_t len = proto::get_be32(rx_buf_.data() + off);
        if (len > kMaxStreamFrame) {
            fail("bad frame length " + std::to_string(len) + " (above " + std::to_string(kMaxStreamFrame) + ") after " +
                 std::to_string(frames_from_socket_) + " good frames: the stream is out of step, connection closed");
            rx_used_ = 0;
            return;
        }
        if (rx_used_ - off - 4 < len) break;  // the rest of the frame has not arrived yet
        const std::uint8_t* frame = rx_buf_.data() + off + 4;
        off += 4 + static_cast<std::size_t>(len);
        if (len < kMinFrame) {
            ++short_frames_;
            RNIC_MLOG(warn, link,
                      "dropped a " << len << "-byte frame from the socket (shorter than an Ethernet header)");
            continue;
        }
        if (len > params_.mtu + proto::net::kEthernetHeaderSize) {
            ++oversize_rx_;
            RNIC_MLOG(
                warn, link,
                "dropped a " << len << "-byte frame from the socket (larger than MTU " << params_.mtu << " + 14)");
            continue;
        }
        ++frames_from_socket_;
        bytes_from_socket_ += len;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        send_frame_bytes(eth_tx, frame, len, delay);
    }
    if (off > 0) {
        std::memmove(rx_buf_.data(), rx_buf_.data() + off, rx_used_ - off);
        rx_used_ -= off;
    }
}

void socket_bridge::start_of_simulation() {
    wall_epoch_ = steady::now();
    sim_epoch_ = sc_core::sc_time_stamp();
}

void socket_bridge::pace() {
    // Simulated time will reach now + poll_interval before this thread runs again; make sure that
    // point is no more than the slack ahead of wall-clock time, counted from the epochs.
    const std::int64_t sim_next = to_ns(sc_core::sc_time_stamp() + params_.poll_interval - sim_epoch_);
    const std::int64_t slack = to_ns(params_.realtime_slack);
    const steady::time_point target = wall_epoch_ + std::chrono::nanoseconds(sim_next - slack);
    steady::time_point now = steady::now();
    if (now < target) {
        std::this_thread::sleep_until(target);
        ++sleeps_;
        const steady::time_point after = steady::now();
        slept_ += after - now;
        now = after;
    }
    const std::int64_t wall = std::chrono::duration_cast<std::chrono::nanoseconds>(now - wall_epoch_).count();
    const std::int64_t sim_now = to_ns(sc_core::sc_time_stamp() - sim_epoch_);
    if (sim_next - wall > 0) {
        max_lead_ = std::max(max_lead_, sc_core::sc_time(static_cast<double>(sim_next - wall), sc_core::SC_NS));
    }
    if (wall - sim_now > 0) {
        max_lag_ = std::max(max_lag_, sc_core::sc_time(static_cast<double>(wall - sim_now), sc_core::SC_NS));
    }
}

void socket_bridge::bridge_thread() {
    if (fd_ < 0 && active_) {
        RNIC_MLOG(warn, link, "started without a connection (open() was not called or failed): bridge inactive");
        active_ = false;
    }
    while (active_) {
        poll_socket();
        if (!active_) break;
        if (params_.realtime) pace();
        sc_core::wait(params_.poll_interval);
    }
}

void socket_bridge::report_stats(boost::json::object& out) const {
    out["connected"] = fd_ >= 0;
    out["error"] = connection_error_;
    out["frames_to_socket"] = frames_to_socket_;
    out["bytes_to_socket"] = bytes_to_socket_;
    out["frames_from_socket"] = frames_from_socket_;
    out["bytes_from_socket"] = bytes_from_socket_;
    out["short_frames_from_socket"] = short_frames_;
    out["oversize_frames_from_socket"] = oversize_rx_;
    out["oversize_frames_to_socket"] = oversize_tx_;
    out["drops_backlog_full"] = tx_drops_backlog_;
    out["drops_not_connected"] = tx_drops_closed_;
    out["polls"] = polls_;
}

}  // namespace rnic
