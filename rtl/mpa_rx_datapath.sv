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

    // Lane classification: Marker byte, CRC-field byte or data byte.
    logic [31:0]      cnt;
    logic [BYTES-1:0] crc_be;
    logic [8*BYTES-1:0] dat;
    logic [31:0]      dat_cnt;
    logic [7:0]       mk_c [4];
    logic             mk_done;
    logic [31:0]      mk_at;
    logic [31:0]      recv_c;
    always_comb begin
        cnt     = 32'($countones(in_be));
        crc_be  = '0;
        dat     = '0;
        dat_cnt = 0;
        mk_done = 1'b0;
        mk_at   = 0;
        recv_c  = crc_recv_q;
        for (int b = 0; b < 4; b++) mk_c[b] = mk_q[b];
        for (int i = 0; i < BYTES; i++) begin
            if (in_valid && 32'(i) < cnt) begin
                logic [31:0] p, q, k;
                p = pos_q + 32'(i);
                q = p % INTERVAL;
                k = idx_c + 32'(i);
                if (k + 4 >= end_c) begin
                    // CRC field: least significant byte first.
                    case (k + 4 - end_c)
                        32'd0: recv_c[7:0]   = in_data[8*i +: 8];
                        32'd1: recv_c[15:8]  = in_data[8*i +: 8];
                        32'd2: recv_c[23:16] = in_data[8*i +: 8];
                        default: recv_c[31:24] = in_data[8*i +: 8];
                    endcase
                end else begin
                    crc_be[i] = 1'b1;
                    if (cfg_markers && q < 4) begin
                        mk_c[q[1:0]] = in_data[8*i +: 8];
                        if (q == 3) begin
                            mk_done = 1'b1;
                            mk_at   = p - 3;
                        end
                    end else begin
                        dat[8*dat_cnt +: 8] = in_data[8*i +: 8];
                        dat_cnt = dat_cnt + 1;
                    end
                end
            end
        end
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
