// Out-of-band exchange between host programs, standing in for the TCP socket perftest uses to swap
// buffer addresses and STags before the test. It carries only what applications would exchange
// (never device state) and takes no simulated time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <systemc>

namespace rnic::platform {

struct remote_buffer {
    std::uint32_t ipv4 = 0;
    std::uint16_t port = 0;
    std::uint32_t stag = 0;
    std::uint64_t addr = 0;
    std::uint64_t length = 0;
};

class oob_channel {
public:
    void publish(const std::string& key, const remote_buffer& value) {
        values_[key] = value;
        changed_.notify(sc_core::SC_ZERO_TIME);
    }
    // Blocks the calling SystemC thread until `key` is published.
    remote_buffer wait_for(const std::string& key) {
        while (values_.find(key) == values_.end()) sc_core::wait(changed_);
        return values_.at(key);
    }

private:
    std::map<std::string, remote_buffer> values_;
    sc_core::sc_event changed_;
};

}  // namespace rnic::platform
