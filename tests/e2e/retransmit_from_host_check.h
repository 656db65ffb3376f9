// The check both seeds' framings with per-connection state share for rnic.tcp.retransmit_from =
// host (RDMA/TCP, seed 000 §3.4; VI/TCP, seed 003 §2.2.2.2.5): a retransmission fetches the payload
// again from host memory and the framing re-frames it with the headers it recorded for that stream
// position, so the bytes equal the first transmission (the TCP engine's zero-time self-check counts
// any difference) and every byte arrives, under loss both ways.
#pragma once

#include <string>
#include <vector>

namespace rnic::test {

// Runs workload `type` (write_bw, read_bw, send_bw) over rnic.framing = `framing` with 1 % loss
// each way and retransmissions from host memory, and checks (gtest expectations): the run and its
// integrity are ok; the bulk data's sender refetched bytes, none differed and none could not be
// re-framed; neither end saw a CRC or framing error. `sets` adds scenario keys (KEY=VALUE).
void check_retransmit_from_host(const std::string& framing, const std::string& type,
                                const std::vector<std::string>& sets = {});

}  // namespace rnic::test
