// IFT receive side: Header CRC check of one frame at a time (draft-williams-iwarp-ift-00, seed 001,
// §3.1 and §5.1). An IFT frame is
//   header_size (16) | payload_size (16) | DDP header | Header CRC | DDP payload | Payload CRC
// with both sizes big endian and the Header CRC, a CRC32c, over the two size fields and the DDP
// header, sent least significant byte first (models/proto/seeds/ift.h, docs/framings.md). The
// block checks it as the header streams in, so the receiver can trust the sizes (where the next
// frame starts) and the DDP header (where the payload goes) before the payload has arrived (§5.1).
//
// Interface as mpa_rx_datapath: a frame's bytes packed from lane 0, in_sof on its first word, one
// word per cycle, in_be contiguous from lane 0 (any count per word, also fewer than the 4 size
// bytes in the first word). The delineation in front marks where a frame starts: the byte after
// the previous frame (frame_len, from this block, says where that is) or a guessed start (the
// aligned receive path guesses a segment start; the Header CRC vouches for the guess). Words after
// the Header CRC (the DDP payload and its CRC) are ignored until the next in_sof; an in_sof while
// a header is still streaming in abandons that header (no done for it).
//
// Outputs: one cycle after the word holding the Header CRC's last byte, `done` pulses with
// `hdr_good` or `hdr_bad`; `crc_calc` (the CRC32c over the size fields and the DDP header) and
// `crc_recv` (the field) stay readable until the next in_sof. `header_size`, `payload_size` and
// `frame_len` (12 + both sizes, the wire length) hold the size fields as received, from the cycle
// after the word that completed them; they are only trustworthy with hdr_good.
//
// Cycles: the header occupies ceil((8 + header_size) / BYTES) words from the frame's first word
// (for a frame packed from lane 0 in full words); the verdict follows one cycle later.
//
// Frame offsets: a header ends at most at byte 8 + 65535 of its frame, so offsets are 17 bits.
module ift_rx_header_check #(
    parameter int BYTES = 8
) (
    input  logic                 clk,
    input  logic                 rst_n,
    input  logic                 in_valid,
    input  logic [8*BYTES-1:0]   in_data,
    input  logic [BYTES-1:0]     in_be,         // lanes 0..n-1 (contiguous from lane 0)
    input  logic                 in_sof,        // first word of a frame (header_size first)
    output logic                 done,          // the Header CRC of the current frame is in
    output logic                 hdr_good,      // with done: computed == received
    output logic                 hdr_bad,       // with done: mismatch
    output logic [31:0]          crc_calc,
    output logic [31:0]          crc_recv,
    output logic [15:0]          header_size,
    output logic [15:0]          payload_size,
    output logic [17:0]          frame_len,     // 12 + header_size + payload_size
    output logic                 busy           // a header is streaming in
);
    localparam int OW = 17;                     // frame offset of a header byte: 0 .. 65542
    localparam int LW = $clog2(BYTES + 1);      // 0..BYTES lanes in a word

    logic [OW-1:0] idx_q;                       // frame offset of the next byte while busy
    logic [7:0]    pre_q [4];                   // header_size, payload_size (big endian)
    logic [31:0]   recv_q;
    logic          busy_q, done_q;

    // The current word belongs to a header: it starts one, or continues the one streaming in.
    logic          active;
    logic [LW-1:0] cnt;
    logic [OW-1:0] idx_c;
    assign active = in_valid && (in_sof || busy_q);
    assign cnt    = LW'($countones(in_be));
    assign idx_c  = in_sof ? '0 : idx_q;

    // Size fields: frame bytes 0..3, from this word's lanes or from the registers.
    logic [7:0]  pre_c [4];
    always_comb begin
        for (int b = 0; b < 4; b++) pre_c[b] = pre_q[b];
        for (int i = 0; i < BYTES && i < 4; i++) begin
            // Only the first four lanes of a frame's first words can hold a size byte.
            if (active && LW'(i) < cnt && idx_c + OW'(i) < OW'(4))
                pre_c[2'(idx_c + OW'(i))] = in_data[8*i +: 8];
        end
    end

    // Lane classification against the end of the CRC coverage, cov_end = 4 + header_size: a lane
    // at frame offset k is covered for k < cov_end and is byte k - cov_end of the Header CRC field
    // for cov_end <= k < cov_end + 4. A lane that is a size byte is covered whatever header_size
    // says, and every later lane of the word sees the completed size fields, so pre_c serves both.
    logic [OW-1:0]    cov_end;
    logic [OW:0]      left;                     // cov_end - idx_c, sign in the top bit
    logic [BYTES-1:0] crc_be;
    logic [31:0]      recv_c;
    logic             hdr_end;
    always_comb begin
        cov_end = OW'({pre_c[0], pre_c[1]}) + OW'(4);
        left    = {1'b0, cov_end} - {1'b0, idx_c};
        crc_be  = '0;
        recv_c  = recv_q;
        for (int i = 0; i < BYTES; i++) begin
            logic [OW:0] d;                     // lane offset from cov_end (two's complement)
            d = (OW+1)'(i) - left;
            if (active && LW'(i) < cnt) begin
                if (d[OW]) begin
                    crc_be[i] = 1'b1;
                end else if (d < (OW+1)'(4)) begin
                    // Header CRC field: least significant byte first.
                    case (d[1:0])
                        2'd0:    recv_c[7:0]   = in_data[8*i +: 8];
                        2'd1:    recv_c[15:8]  = in_data[8*i +: 8];
                        2'd2:    recv_c[23:16] = in_data[8*i +: 8];
                        default: recv_c[31:24] = in_data[8*i +: 8];
                    endcase
                end
            end
        end
        // The field's last byte, frame offset cov_end + 3, is lane left + 3 of this word. While a
        // header streams in that lane is never behind the word (left >= -3).
        hdr_end = active && left + (OW+1)'(3) < (OW+1)'(cnt);
    end

    logic [31:0] crc_residue_unused;
    crc32c_engine #(.BYTES(BYTES)) u_crc (
        .clk(clk), .rst_n(rst_n), .clear(1'b0),
        .in_valid(active), .in_sop(in_sof),
        .in_data(in_data), .in_be(crc_be),
        .crc(crc_calc), .residue(crc_residue_unused));

    always_ff @(posedge clk or negedge rst_n) begin
        if (!rst_n) begin
            idx_q  <= '0;
            recv_q <= '0;
            busy_q <= 1'b0;
            done_q <= 1'b0;
            for (int b = 0; b < 4; b++) pre_q[b] <= 8'h00;
        end else begin
            done_q <= hdr_end;
            if (active) begin
                idx_q  <= idx_c + OW'(cnt);
                recv_q <= recv_c;
                busy_q <= !hdr_end;
                for (int b = 0; b < 4; b++) pre_q[b] <= pre_c[b];
            end
        end
    end

    assign done         = done_q;
    assign hdr_good     = done_q && crc_calc == recv_q;
    assign hdr_bad      = done_q && crc_calc != recv_q;
    assign crc_recv     = recv_q;
    assign header_size  = {pre_q[0], pre_q[1]};
    assign payload_size = {pre_q[2], pre_q[3]};
    assign frame_len    = 18'(header_size) + 18'(payload_size) + 18'd12;
    assign busy         = busy_q;
endmodule
