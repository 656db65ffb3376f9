// Byte-stream packer: takes words of 0..IN_BYTES valid bytes (lanes 0..cnt-1) and emits full
// OUT_BYTES words, plus a final partial word when a packet ends. The marker inserter and remover
// change the number of bytes per word (RFC 5044 §4.3 Markers are 4 bytes every 512), so the
// stream must be re-packed before it goes back onto a bus of fixed width.
//
// Output is registered state (no combinational path from push to out). push_room says whether a
// word of IN_BYTES fits this cycle, counting what leaves this cycle; a producer must not push
// without it. `flush` (with or after the last push of a packet) makes the packer emit what it
// holds; out_last marks the packet's final word. The consumer always accepts (no out_ready): the
// TCP send buffer and the CRC tap take a word every cycle.
// A packet that ends exactly on a full word still gets its out_last, on an empty word after it.
module stream_packer #(
    parameter int IN_BYTES  = 12,
    parameter int OUT_BYTES = 8,
    parameter int CAP       = OUT_BYTES + IN_BYTES,   // bytes held
    parameter int CW        = $clog2(CAP + 1)
) (
    input  logic                     clk,
    input  logic                     rst_n,
    input  logic                     push_valid,
    input  logic [8*IN_BYTES-1:0]    push_data,
    input  logic [CW-1:0]            push_cnt,
    input  logic                     push_last,    // this push ends the packet
    output logic                     push_room,
    output logic                     out_valid,
    output logic [8*OUT_BYTES-1:0]   out_data,
    output logic [OUT_BYTES-1:0]     out_be,
    output logic                     out_last,
    output logic                     idle          // nothing held, no packet pending
);
    // Byte d of the held bytes is buf_q[8*d +: 8], byte 0 the oldest; bytes at and beyond fill_q
    // are always zero (reset clears them and every update writes zeros behind the new fill).
    logic [8*CAP-1:0] buf_q;
    logic [CW-1:0] fill_q;
    logic          flush_q;   // the packet's last bytes are in: drain

    logic [CW-1:0] out_cnt, keep;
    always_comb begin
        out_cnt = '0;
        if (fill_q >= CW'(OUT_BYTES))      out_cnt = CW'(OUT_BYTES);
        else if (flush_q)                  out_cnt = fill_q;
        keep = fill_q - out_cnt;
    end

    // A packet whose bytes all left in full words ends with an empty word (no byte enables) that
    // carries out_last: the receive side's last input word may hold nothing but the CRC field.
    assign out_valid = out_cnt != '0 || flush_q;
    assign out_last  = flush_q && fill_q <= CW'(OUT_BYTES);
    assign push_room = !flush_q && (32'(keep) + IN_BYTES <= CAP);
    assign idle      = fill_q == '0 && !flush_q;

    always_comb begin
        for (int i = 0; i < OUT_BYTES; i++) begin
            out_data[8*i +: 8] = buf_q[8*i +: 8];
            out_be[i] = CW'(i) < out_cnt;
        end
    end

    // Shift out what was emitted and append the pushed bytes behind what stays: whole-word shifts
    // rather than a choice per byte. The bytes shifted down from at and beyond fill_q are zero, so
    // nothing but the pushed bytes lands at or behind `keep`; pushed lanes from push_cnt on are
    // masked off, and what would go past CAP falls off the top.
    function automatic logic [8*CAP-1:0] next_buf(input logic [8*CAP-1:0] held, input logic [CW-1:0] emitted,
                                                   input logic [CW-1:0] kept, input logic valid,
                                                   input logic [8*IN_BYTES-1:0] data, input logic [CW-1:0] cnt);
        logic [8*CAP-1:0] pushed, lanes;
        pushed = '0;
        pushed[8*IN_BYTES-1:0] = data;
        lanes = ~({(8*CAP){1'b1}} << (32'(cnt) * 8));
        pushed = valid ? (pushed & lanes) << (32'(kept) * 8) : '0;
        return (held >> (32'(emitted) * 8)) | pushed;
    endfunction

    always_ff @(posedge clk or negedge rst_n) begin
        if (!rst_n) begin
            fill_q  <= '0;
            flush_q <= 1'b0;
            buf_q   <= '0;
        end else begin
            buf_q  <= next_buf(buf_q, out_cnt, keep, push_valid, push_data, push_cnt);
            fill_q <= keep + (push_valid ? push_cnt : '0);
            if (push_valid && push_last) flush_q <= 1'b1;
            else if (out_last)           flush_q <= 1'b0;
        end
    end
endmodule
