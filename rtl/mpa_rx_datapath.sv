// MPA receive datapath: Marker removal and CRC32c check of one FPDU at a time
// (RFC 5044 §4.3, §4.4, §8). The delineation logic in front of it has read ULPDU_Length and
// knows the FPDU's wire length (in_len: Markers, PAD and CRC field included); it streams the
// FPDU's wire bytes in, packed from lane 0, one word per cycle. Out come ULPDU_Length, the
// ULPDU and the PAD with the Markers and the CRC field removed, packed into full words; at the
// end `done` pulses with the CRC computed over the covered bytes, the CRC field received and the
// Marker check.
//
// Markers: with cfg_markers every 4 bytes starting at a marker-space position that is a multiple
// of 512 are a Marker (load_pos sets the position of the next byte). Its FPDUPTR must point back
// at this FPDU's ULPDU_Length, or be 0 for a Marker at the FPDU's first position; like the
// software deframer the two low bits are not compared (§4.2 FPDUs start on 4-byte boundaries).
// The reserved half is not checked (§4.3: ignored on receive).
//
// CRC (§4.4): over every byte before the CRC field (the last 4 wire bytes), Markers included.
// MPA positions are multiples of 4, so a Marker never falls inside the CRC field.
//
// Cycles: one input word per cycle, so an FPDU of F wire bytes takes ceil(F / BYTES) cycles;
// `done` follows one cycle after the last word.
module mpa_rx_datapath #(
    parameter int BYTES = 8
) (
    input  logic                 clk,
    input  logic                 rst_n,
    input  logic                 load,
    input  logic [31:0]          load_pos,
    input  logic                 cfg_markers,
    input  logic                 in_valid,
    input  logic [8*BYTES-1:0]   in_data,
    input  logic [BYTES-1:0]     in_be,         // lanes 0..n-1 (contiguous from lane 0)
    input  logic                 in_sof,
    input  logic [16:0]          in_len,        // wire length, sampled with in_sof
    output logic                 out_valid,
    output logic [8*BYTES-1:0]   out_data,
    output logic [BYTES-1:0]     out_be,
    output logic                 out_last,
    output logic                 done,
    output logic [31:0]          crc_calc,
    output logic [31:0]          crc_recv,
    output logic                 marker_bad,    // some Marker of this FPDU had a wrong FPDUPTR
    output logic [31:0]          bad_marker_pos,
    output logic [15:0]          bad_marker_ptr,
    output logic [15:0]          markers_seen,
    output logic [31:0]          pos
);
    localparam int CW = $clog2(2 * BYTES + 1);
    localparam logic [31:0] INTERVAL = 32'd512;

    logic [31:0] pos_q, first_q, len_pos_q, idx_q;
    logic [16:0] len_q;
    logic [7:0]  mk_q [4];
    logic [31:0] crc_recv_q;
    logic        done_q, bad_q;
    logic [31:0] bad_pos_q;
    logic [15:0] bad_ptr_q, seen_q;

    logic [31:0] first_c, len_pos_c, idx_c, end_c;
    always_comb begin
        if (in_sof) begin
            first_c   = pos_q;
            len_pos_c = (cfg_markers && pos_q % INTERVAL == 0) ? pos_q + 32'd4 : pos_q;
            idx_c     = 0;
            end_c     = 32'(in_len);
        end else begin
            first_c   = first_q;
            len_pos_c = len_pos_q;
            idx_c     = idx_q;
            end_c     = 32'(len_q);
        end
    end

    // Lane classification: Marker byte, CRC-field byte or data byte. Lane i (i < the word's byte
    // count) is at stream position pos_q + i and FPDU offset idx_c + i; the CRC field is the
    // FPDU's last 4 bytes. Worked out for the word as a whole, not lane by lane: the lanes before
    // the CRC field are a prefix [0, data_n) (offsets only grow along the word; idx_c restarts
    // with every in_sof), a word of at most 16 bytes meets at most one Marker (positions 512
    // apart), so its Marker lanes are one run [mk_a, mk_b) inside that prefix, and the data bytes
    // are the prefix with that run cut out. Same bytes in the same places as a loop over the
    // lanes, with a few shifts instead of a decision and a variable insertion per lane.
    logic [31:0]      cnt;
    logic [BYTES-1:0] crc_be;
    logic [8*BYTES-1:0] dat;
    logic [CW-1:0]    dat_cnt;
    logic [7:0]       mk_c [4];
    logic             mk_done;
    logic [31:0]      mk_at;
    logic [31:0]      recv_c;

    // Lanes 0..k-1 of a word.
    function automatic logic [8*BYTES-1:0] lanes_below(input logic [31:0] k);
        return ~({(8*BYTES){1'b1}} << (k * 32'd8));
    endfunction

    logic [31:0] in_n, data_n, mk_r, mk_first, mk_end, mk_a, mk_b, mk_lane, crc_lane;
    // Signed, 36 bits: offsets and lengths are below 2^32 (yosys 0.23 has no longint).
    logic signed [35:0] crc_shift;   // lane i holds CRC field byte i + crc_shift when that is >= 0
    logic signed [35:0] in_n_s;
    always_comb begin
        cnt       = 32'($countones(in_be));
        in_n      = in_valid ? cnt : 32'd0;
        in_n_s    = $signed({4'b0, in_n});
        crc_shift = $signed({4'b0, idx_c}) + 36'sd4 - $signed({4'b0, end_c});
        data_n    = !crc_shift[35] ? 32'd0 : (-crc_shift < in_n_s ? 32'(-crc_shift) : in_n);
        crc_be    = ~({BYTES{1'b1}} << data_n);

        // CRC field, least significant byte first: bytes 0-2 from the lane that holds each, byte 3
        // from the word's last lane when that is byte 3 or beyond.
        recv_c = crc_recv_q;
        for (int b = 0; b < 3; b++) begin
            crc_lane = 32'($signed(36'(b)) - crc_shift);
            if ($signed(36'(b)) >= crc_shift && crc_lane < in_n) recv_c[8*b +: 8] = in_data[8*crc_lane +: 8];
        end
        if (in_n != 0 && in_n_s - 36'sd1 + crc_shift >= 36'sd3) recv_c[31:24] = in_data[8*(in_n - 1) +: 8];

        // The Marker run: lanes whose position is 0..3 modulo 512, among the data lanes. Marker
        // byte m sits at lane m - mk_r when the word starts inside a Marker (mk_r = its position
        // modulo 512 < 4), else at lane mk_first + m (the word reaches the next multiple of 512).
        mk_r     = pos_q % INTERVAL;
        mk_first = mk_r < 4 ? 32'd0 : INTERVAL - mk_r;
        mk_end   = mk_r < 4 ? 32'd4 - mk_r : mk_first + 32'd4;
        mk_a     = cfg_markers && mk_first < data_n ? mk_first : data_n;
        mk_b     = cfg_markers && mk_end < data_n ? mk_end : data_n;
        for (int m = 0; m < 4; m++) begin
            mk_c[m] = mk_q[m];
            mk_lane = mk_r < 4 ? 32'(m) - mk_r : mk_first + 32'(m);
            if (cfg_markers && (mk_r >= 4 || 32'(m) >= mk_r) && mk_lane < data_n)
                mk_c[m] = in_data[8*mk_lane +: 8];
        end
        mk_lane = mk_r < 4 ? 32'd3 - mk_r : mk_first + 32'd3;   // the lane of the Marker's last byte
        mk_done = cfg_markers && mk_lane < data_n;
        mk_at   = mk_done ? pos_q + mk_lane - 32'd3 : 32'd0;

        // Data bytes: the lanes before the run, then the ones after it moved down over it.
        dat     = (in_data & lanes_below(mk_a))
                | ((in_data & lanes_below(data_n) & ~lanes_below(mk_b)) >> ((mk_b - mk_a) * 32'd8));
        dat_cnt = CW'(data_n - (mk_b - mk_a));
    end

    logic [15:0] mk_ptr, mk_expect;
    assign mk_ptr    = {mk_c[2], mk_c[3]};
    assign mk_expect = (mk_at == first_c) ? 16'd0 : 16'(mk_at - len_pos_c);

    logic [31:0] crc_residue_unused;
    crc32c_engine #(.BYTES(BYTES)) u_crc (
        .clk(clk), .rst_n(rst_n), .clear(1'b0),
        .in_valid(in_valid), .in_sop(in_sof),
        .in_data(in_data), .in_be(crc_be),
        .crc(crc_calc), .residue(crc_residue_unused));

    logic last_word;
    assign last_word = in_valid && idx_c + cnt >= end_c;

    logic packer_idle_unused, push_room_unused;
    stream_packer #(.IN_BYTES(BYTES), .OUT_BYTES(BYTES), .CAP(2 * BYTES), .CW(CW)) u_pack (
        .clk(clk), .rst_n(rst_n),
        .push_valid(in_valid), .push_data(dat), .push_cnt(CW'(dat_cnt)), .push_last(last_word),
        .push_room(push_room_unused),
        .out_valid(out_valid), .out_data(out_data), .out_be(out_be), .out_last(out_last),
        .idle(packer_idle_unused));

    always_ff @(posedge clk or negedge rst_n) begin
        if (!rst_n) begin
            pos_q <= '0; first_q <= '0; len_pos_q <= '0; idx_q <= '0; len_q <= '0;
            crc_recv_q <= '0; done_q <= 1'b0; bad_q <= 1'b0; bad_pos_q <= '0; bad_ptr_q <= '0;
            seen_q <= '0;
            for (int b = 0; b < 4; b++) mk_q[b] <= 8'h00;
        end else if (load) begin
            pos_q  <= load_pos;
            done_q <= 1'b0;
        end else begin
            done_q <= last_word;
            if (in_valid) begin
                pos_q      <= pos_q + cnt;
                idx_q      <= idx_c + cnt;
                first_q    <= first_c;
                len_pos_q  <= len_pos_c;
                len_q      <= in_sof ? in_len : len_q;
                crc_recv_q <= recv_c;
                for (int b = 0; b < 4; b++) mk_q[b] <= mk_c[b];
                if (in_sof) begin
                    bad_q  <= 1'b0;
                    seen_q <= '0;
                end
                if (mk_done) begin
                    seen_q <= (in_sof ? 16'd0 : seen_q) + 16'd1;
                    // Only the first bad Marker of the FPDU is reported.
                    if ((mk_ptr & 16'hFFFC) != (mk_expect & 16'hFFFC) && (in_sof || !bad_q)) begin
                        bad_q     <= 1'b1;
                        bad_pos_q <= mk_at;
                        bad_ptr_q <= mk_ptr;
                    end
                end
            end
        end
    end

    assign done           = done_q;
    assign crc_recv       = crc_recv_q;
    assign marker_bad     = bad_q;
    assign bad_marker_pos = bad_pos_q;
    assign bad_marker_ptr = bad_ptr_q;
    assign markers_seen   = seen_q;
    assign pos            = pos_q;
endmodule
