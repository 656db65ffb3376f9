// MPA transmit datapath: Marker insertion and CRC32c append for one FPDU at a time
// (RFC 5044 §4.1-§4.4). The header logic in front of it supplies the FPDU without its CRC field
// and without Markers: ULPDU_Length (2 bytes, big endian), the ULPDU and the PAD, packed from lane 0,
// one word per cycle (the last word may be partial). Out comes the FPDU as it goes on the wire:
// Markers inserted, the CRC field appended, packed into full words.
//
// Markers (§4.3): with cfg_markers a 4-byte Marker goes in front of every byte whose marker-space
// position is a multiple of 512 (load_pos sets the position of the next byte; it then counts
// every byte out, Markers included). A Marker is 16 reserved zero bits and the 16-bit FPDUPTR:
// the offset back from the Marker to this FPDU's ULPDU_Length field, or 0 when the Marker sits at
// the FPDU's very first position, just in front of ULPDU_Length. A Marker that falls right after
// the PAD belongs to this FPDU and is covered by its CRC (§4.4); one that would fall right after
// the CRC field is left to the next FPDU (its leading Marker).
//
// CRC (§4.4): CRC32c over every byte of the FPDU before the CRC field, Markers included, taken
// from the expanded words (so the CRC lane tap is IN_BYTES+4 wide); sent least significant byte
// first. Without cfg_crc the field is zero (§4.4, CRC not negotiated).
//
// Cycles: the input side takes one word per cycle while the packer has room; the output side
// emits one full word per cycle, so an FPDU of F wire bytes occupies the output bus for
// ceil(F / BYTES) cycles. The CRC is appended in the cycle after the last input word.
module mpa_tx_datapath #(
    parameter int BYTES = 8
) (
    input  logic                 clk,
    input  logic                 rst_n,
    input  logic                 load,          // set the marker-space position (between FPDUs)
    input  logic [31:0]          load_pos,
    input  logic                 cfg_markers,
    input  logic                 cfg_crc,
    input  logic                 in_valid,
    output logic                 in_ready,
    input  logic [8*BYTES-1:0]   in_data,
    input  logic [BYTES-1:0]     in_be,         // lanes 0..n-1 (contiguous from lane 0)
    input  logic                 in_sof,        // first word of an FPDU (ULPDU_Length in lanes 0-1)
    input  logic                 in_eof,        // last word (ends with the PAD)
    output logic                 out_valid,
    output logic [8*BYTES-1:0]   out_data,
    output logic [BYTES-1:0]     out_be,
    output logic                 out_last,
    output logic [31:0]          pos,           // marker-space position of the next byte
    output logic                 idle
);
    localparam int EX = BYTES + 4;              // a word plus at most one Marker
    localparam int CW = $clog2(2 * EX + 1);
    localparam logic [31:0] INTERVAL = 32'd512;

    typedef enum logic [1:0] { S_BODY, S_CRC } state_t;
    state_t state_q;

    logic [31:0] pos_q, first_q, len_pos_q;
    logic [31:0] crc_value;

    // The word entering the expansion stage: an input word, or the CRC field after the body.
    logic              src_valid, src_close, src_last;
    logic [8*BYTES-1:0] src_data;
    logic [31:0]       src_cnt;
    logic              push_room;

    always_comb begin
        src_valid = 1'b0;
        src_close = 1'b0;
        src_last  = 1'b0;
        src_data  = in_data;
        src_cnt   = 32'($countones(in_be));
        if (state_q == S_BODY) begin
            src_valid = in_valid && push_room;
            src_close = in_eof;                      // a Marker after the PAD is this FPDU's
        end else begin
            src_valid = push_room;
            src_last  = 1'b1;
            src_data  = '0;
            src_data[31:0] = cfg_crc ? crc_value : 32'd0;   // little endian: lane 0 = bits 7:0
            src_cnt   = 32'd4;
        end
    end
    assign in_ready = state_q == S_BODY && push_room;

    // FPDU reference points for FPDUPTR: on the first word they come from the current position.
    logic [31:0] first_c, len_pos_c;
    always_comb begin
        if (state_q == S_BODY && in_sof) begin
            first_c   = pos_q;
            len_pos_c = (pos_q % INTERVAL == 0) ? pos_q + 32'd4 : pos_q;
        end else begin
            first_c   = first_q;
            len_pos_c = len_pos_q;
        end
    end

    // Expansion: at most one Marker per word (a word is far shorter than 512 bytes). It goes in
    // front of lane k, the first lane on a boundary, or after the last lane for the closing Marker.
    // Built from whole-word masks and shifts: the lanes before the Marker stay, the Marker takes
    // the next four, the rest of the word moves up by four (the same bytes as placing each lane).
    logic [31:0]     to_boundary, mk_pos, ex_cnt;
    logic            has_marker;
    logic [15:0]     fpduptr;
    logic [8*EX-1:0] ex_data, src_ex, marker_ex, below_marker;
    logic [EX-1:0]   ex_be;
    always_comb begin
        to_boundary = (INTERVAL - pos_q % INTERVAL) % INTERVAL;
        has_marker  = cfg_markers && (to_boundary < src_cnt || (src_close && to_boundary == src_cnt));
        mk_pos      = pos_q + to_boundary;
        fpduptr     = (mk_pos == first_c) ? 16'd0 : 16'(mk_pos - len_pos_c);
        // The word's valid lanes (0..src_cnt-1), widened to the expanded word.
        src_ex      = '0;
        src_ex[8*BYTES-1:0] = src_data;
        src_ex      = src_ex & ~({(8*EX){1'b1}} << (src_cnt * 32'd8));
        ex_cnt      = src_cnt + (has_marker ? 32'd4 : 32'd0);
        ex_be       = ~({EX{1'b1}} << ex_cnt);
        if (has_marker) begin
            // Reserved (2 bytes, zero), then FPDUPTR big endian: lanes to_boundary + 0..3.
            marker_ex    = '0;
            marker_ex[31:16] = {fpduptr[7:0], fpduptr[15:8]};
            below_marker = ~({(8*EX){1'b1}} << (to_boundary * 32'd8));
            ex_data      = (src_ex & below_marker) | (marker_ex << (to_boundary * 32'd8))
                         | ((src_ex & ~below_marker) << 32);
        end else begin
            marker_ex    = '0;
            below_marker = '0;
            ex_data      = src_ex;
        end
    end

    // CRC tap on the expanded body words (never on the CRC field itself).
    logic [31:0] crc_residue_unused;
    crc32c_engine #(.BYTES(EX)) u_crc (
        .clk(clk), .rst_n(rst_n), .clear(1'b0),
        .in_valid(src_valid && state_q == S_BODY), .in_sop(in_sof),
        .in_data(ex_data), .in_be(ex_be),
        .crc(crc_value), .residue(crc_residue_unused));

    logic packer_idle;
    stream_packer #(.IN_BYTES(EX), .OUT_BYTES(BYTES), .CAP(2 * EX), .CW(CW)) u_pack (
        .clk(clk), .rst_n(rst_n),
        .push_valid(src_valid), .push_data(ex_data), .push_cnt(CW'(ex_cnt)), .push_last(src_last),
        .push_room(push_room),
        .out_valid(out_valid), .out_data(out_data), .out_be(out_be), .out_last(out_last),
        .idle(packer_idle));

    always_ff @(posedge clk or negedge rst_n) begin
        if (!rst_n) begin
            state_q   <= S_BODY;
            pos_q     <= '0;
            first_q   <= '0;
            len_pos_q <= '0;
        end else if (load) begin
            state_q <= S_BODY;
            pos_q   <= load_pos;
        end else if (src_valid) begin
            pos_q     <= pos_q + ex_cnt;
            first_q   <= first_c;
            len_pos_q <= len_pos_c;
            if (state_q == S_BODY && in_eof) state_q <= S_CRC;
            else if (state_q == S_CRC)       state_q <= S_BODY;
        end
    end

    assign pos  = pos_q;
    assign idle = packer_idle && state_q == S_BODY;
endmodule
