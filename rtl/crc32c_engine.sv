// CRC32c engine: one bus word per clock, any byte-enable pattern.
//
// MPA's CRC (RFC 5044 §4.4) is the iSCSI CRC32c (RFC 3720 §12.1, App. B.4): generator
// 0x1EDC6F41, reflected (bit 0 of each octet first), register preset to all ones, result
// complemented. The register here holds the reflected remainder; `crc` is its complement, the
// conventional value (crc32c("123456789") = 0xE3069283) that MPA sends least significant byte
// first (test-vectors.md §1.2).
//
// Byte lane i of in_data is in_data[8*i +: 8]; lane 0 is the earliest byte of the stream. Lanes
// with in_be[i] = 0 are skipped, so a message may start at any lane of its first word and end at
// any lane of its last one (and holes are allowed: the CRC covers exactly the enabled bytes, in
// lane order).
//
// Timing: a word with in_valid is folded in on the rising edge; with in_sop the fold starts from
// the preset (a new message, no idle cycle between messages). `crc` shows the value of every byte
// accepted so far from the next cycle on, so a message of W words takes W cycles and its CRC is
// readable in cycle W+1. `clear` presets the register without a word.
module crc32c_engine #(
    parameter int BYTES = 8   // bus width in bytes (8: 64-bit bus, 16: 128-bit bus)
) (
    input  logic                 clk,
    input  logic                 rst_n,     // asynchronous reset, active low
    input  logic                 clear,     // start a new message (wins over in_valid)
    input  logic                 in_valid,
    input  logic                 in_sop,    // this word starts a new message
    input  logic [8*BYTES-1:0]   in_data,
    input  logic [BYTES-1:0]     in_be,
    output logic [31:0]          crc,       // conventional CRC32c of the bytes accepted since clear
    output logic [31:0]          residue    // raw register (for a residue check over data+CRC)
);
    // Reflected form of 0x1EDC6F41.
    localparam logic [31:0] POLY_REFLECTED = 32'h82F6_3B78;

    logic [31:0] state_q;

    // The remainder after one bit of value 1 at bit i of an octet (i = 0 first), the rest zero:
    // eight steps of the bit-serial LFSR from 1 << i. The update is linear over GF(2), so an
    // octet's eight steps are the register shifted by eight, XORed with the column of every set
    // bit of (register ^ octet) in its low byte: the 8-bit matrix of a table-driven CRC, written
    // as the XOR network it synthesises to (eight independent terms, not a chain of eight steps).
    function automatic logic [31:0] lfsr_column(input int i);
        logic [31:0] r;
        r = 32'd1 << i;
        for (int k = 0; k < 8; k++) r = r[0] ? (r >> 1) ^ POLY_REFLECTED : (r >> 1);
        return r;
    endfunction

    function automatic logic [31:0] crc_byte(input logic [31:0] c, input logic [7:0] b);
        logic [7:0]  x;
        logic [31:0] r;
        x = c[7:0] ^ b;
        r = c >> 8;
        for (int i = 0; i < 8; i++) r = r ^ (lfsr_column(i) & {32{x[i]}});
        return r;
    endfunction

    // The enabled lanes folded in lane order, from the preset on a message's first word.
    function automatic logic [31:0] fold(input logic [31:0] start, input logic [8*BYTES-1:0] data,
                                         input logic [BYTES-1:0] be);
        logic [31:0] r;
        r = start;
        for (int i = 0; i < BYTES; i++)
            if (be[i]) r = crc_byte(r, data[8*i +: 8]);
        return r;
    endfunction

    // The fold is computed in the flop's own block, not in an always_comb beside it: the register
    // is its only reader, and a simulator (Verilator) then evaluates it once per clock edge
    // instead of once when the inputs change and again after every edge. Same flops, same values.
    always_ff @(posedge clk or negedge rst_n) begin
        if (!rst_n)          state_q <= 32'hFFFF_FFFF;
        else if (clear)      state_q <= 32'hFFFF_FFFF;
        else if (in_valid)   state_q <= fold(in_sop ? 32'hFFFF_FFFF : state_q, in_data, in_be);
    end

    assign crc = ~state_q;
    assign residue = state_q;
endmodule
