// The messages of QEMU's multi-process protocol ("mpqemu"), as the proxy device `x-pci-proxy-dev`
// sends them to its remote process over a UNIX stream socket: what the platform needs to be that
// remote. Plain C++ and POSIX sockets, no SystemC; unit-tested with socketpairs (tests/qemu/).
//
// Facts (QEMU 7.2's hw/remote sources, and experiment with Debian's qemu-system-x86 7.2):
//  - Each message is a 16-byte header, a native int `cmd` (4 bytes, then 4 of padding) and a native
//    size_t `size`, followed by `size` bytes of data (at most kMaxData) in the same sendmsg; file
//    descriptors ride along as SCM_RIGHTS ancillary data (at most kMaxFds).
//  - Commands and their data (x86-64 layout, little-endian):
//      sync_sysmem (0)  192 bytes: u64 guest-physical address[8], u64 size[8], u64 file offset[8];
//                       one fd per RAM region (1..8). No reply. Sent again, in full, whenever the
//                       guest's memory map changes: the remote re-maps every time.
//      ret (1)          8 bytes: u64 value. The remote's only reply.
//      pci_cfgwrite (2) 12 bytes: u32 address (0..255), u32 value, int length (1, 2, 4). Reply ret.
//      pci_cfgread (3)  12 bytes, value unused. Reply ret with the value read.
//      bar_write (4)    24 bytes: u64 absolute guest-physical address, u64 value, u32 size (1, 2, 4, 8),
//                       u8 memory (1: a memory BAR, 0: an I/O BAR), 3 bytes padding. Reply ret.
//      bar_read (5)     24 bytes as bar_write, value unused. Reply ret with the value read.
//      set_irqfd (6)    no data, two fds (the INTx eventfd and its resample eventfd). No reply.
//      device_reset (7) no data. Reply ret.
//  - The guest's vCPU waits for the ret of every command that gets one, so a remote that never
//    answers hangs the guest; one that answers a command that wants no reply puts the stream out of
//    step. Unknown commands are therefore logged and skipped, never answered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rnic::qemu {

namespace mpqemu {

enum class cmd : std::int32_t {
    sync_sysmem = 0,
    ret = 1,
    pci_cfgwrite = 2,
    pci_cfgread = 3,
    bar_write = 4,
    bar_read = 5,
    set_irqfd = 6,
    device_reset = 7,
};
const char* to_string(cmd c);  // "sync_sysmem", ...; "unknown" for other values

constexpr std::size_t kHeaderSize = 16;
constexpr std::size_t kMaxData = 192;  // the largest message data (sync_sysmem's)
constexpr std::size_t kMaxFds = 8;     // RAM regions of one sync_sysmem
constexpr std::size_t kSyncSysmemSize = 192;
constexpr std::size_t kConfigSize = 12;
constexpr std::size_t kBarSize = 24;
constexpr std::size_t kRetSize = 8;

// One message as received: the raw command number (it may name no known command), its data and the
// descriptors that came with it (owned by the message until taken; close_fds() closes them).
struct message {
    std::int32_t cmd = 0;
    std::vector<std::uint8_t> data;
    std::vector<int> fds;
    void close_fds();
};

// Decodes a header; false with *error naming what is wrong (size above kMaxData).
bool parse_header(const std::uint8_t* bytes, std::int32_t* cmd, std::uint64_t* size, std::string* error);
// The header followed by `data`.
std::vector<std::uint8_t> encode(std::int32_t cmd, const std::uint8_t* data, std::size_t size);
// The remote's reply: a ret message carrying `value`.
std::vector<std::uint8_t> encode_ret(std::uint64_t value);

struct config_access {
    std::uint32_t address = 0;
    std::uint32_t value = 0;
    unsigned length = 0;
};
struct bar_access {
    std::uint64_t address = 0;
    std::uint64_t value = 0;
    unsigned size = 0;
    bool memory = true;
};
struct ram_region {
    std::uint64_t gpa = 0;
    std::uint64_t size = 0;
    std::uint64_t offset = 0;  // into the fd
    int fd = -1;
};

// Each checks the message's command, data size, descriptor count and field ranges; false with
// *error naming the message and what was wrong. decode_sync_sysmem takes the message's fds over
// (the message keeps none afterwards, whatever the outcome: on failure they are closed).
bool decode_config(const message& m, config_access* out, std::string* error);
bool decode_bar(const message& m, bar_access* out, std::string* error);
bool decode_sync_sysmem(message& m, std::vector<ram_region>* out, std::string* error);
std::vector<std::uint8_t> encode_config(cmd c, const config_access& a);  // for tests and tools
std::vector<std::uint8_t> encode_bar(cmd c, const bar_access& a);
std::vector<std::uint8_t> encode_sync_sysmem(const std::vector<ram_region>& regions);  // fds not included

}  // namespace mpqemu

// Reads messages from a connected stream socket without blocking: bytes and SCM_RIGHTS descriptors
// are gathered until a whole message is there. QEMU sends each message, descriptors included, in one
// sendmsg; a read returns descriptors with the last buffer it copied (the kernel stops after a
// buffer that carries descriptors, but may glue the tail of a previous message in front of it), so
// the descriptors of a read belong to the last message that begins in what has been read.
class mpqemu_channel {
public:
    explicit mpqemu_channel(int fd = -1) : fd_(fd) {}
    ~mpqemu_channel();
    mpqemu_channel(const mpqemu_channel&) = delete;
    mpqemu_channel& operator=(const mpqemu_channel&) = delete;

    enum class result { message, again, closed, error };
    // One message if a whole one has arrived (reading what the socket has). `closed`: the peer closed
    // the connection (error() says whether in the middle of a message); `error`: a read failed or the
    // stream is out of step (a size above kMaxData, too many descriptors): the channel is unusable.
    result receive(mpqemu::message* out);
    // Writes the whole reply (blocking briefly if the socket is full); false when the socket failed.
    bool send(const std::vector<std::uint8_t>& bytes);
    // Waits up to `timeout_ms` (0: not at all, <0: forever) for something to read.
    bool wait_readable(int timeout_ms) const;
    // The same with microsecond resolution (what real-time pacing needs).
    bool wait_readable_us(std::int64_t timeout_us) const;

    int fd() const { return fd_; }
    const std::string& error() const { return error_; }
    std::uint64_t bytes_received() const { return bytes_in_; }

private:
    bool read_some();  // false when closed or failed (error_ set)
    int fd_;
    struct fd_batch {
        std::uint64_t owner;  // stream offset of the message they belong to
        std::vector<int> fds;
    };
    std::vector<std::uint8_t> buf_;
    std::uint64_t consumed_ = 0;  // stream offset of buf_[0] (a message boundary)
    std::vector<fd_batch> batches_;
    std::string error_;
    bool eof_ = false;
    std::uint64_t bytes_in_ = 0;
};

// The proxy's socket: either `fd` (>= 0), an inherited descriptor that must be an open stream
// socket, or the first connection accepted on the UNIX socket `listen_path` within `timeout_ms` of
// wall time (the path is removed again once accepted). -1 with *error naming the key's value and
// the cause.
int open_proxy_socket(int fd, const std::string& listen_path, int timeout_ms, std::string* error);

}  // namespace rnic::qemu
