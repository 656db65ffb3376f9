#!/usr/bin/env bash
# Gate and flip-flop counts of the framing RTL (rtl/*.sv) with yosys and a generic cell library,
# for the cost model of docs/studies/cost-model.md (markers versus buffer memory, issue 21).
#
#   tools/synth-cost.sh                      bus widths 8 and 16 bytes (the Verilated ones)
#   tools/synth-cost.sh --widths "8 16 32"   other widths (BYTES parameter of every block)
#   tools/synth-cost.sh --out FILE           Markdown table to FILE
#                                            (default sweeps-out/synth-cost/synth-cost.md)
#   tools/synth-cost.sh -j N                 yosys processes at once (default 1)
#   tools/synth-cost.sh --rev COMMIT         the RTL as it was at COMMIT (git show COMMIT:rtl/...)
#                                            instead of the working tree's rtl/
#
# Blocks, each at every width W: crc32c_engine; ift_rx_header_check; mpa_rx_datapath (Marker
# removal and CRC check); mpa_tx_datapath (Marker insertion and CRC append). Each MPA block is
# synthesised four times: whole; with cfg_markers tied to 0 (yosys removes what a constant
# cfg_markers makes dead: the difference is the Marker logic); with stream_packer as a black box;
# with crc32c_engine as a black box (the differences are the packer and the CRC engine as they are
# used there, after flattening). The IFT block: whole and with its CRC engine as a black box.
#
# One approach for every run (one yosys process each; no liberty file, yosys's internal cells):
#   read_verilog -sv ...; [blackbox M;] hierarchy -top X -chparam BYTES W; [tie-off;]
#   synth -flatten -top X; abc -g AND,NAND,OR,NOR,XOR,XNOR,MUX; opt_clean; stat
# i.e. yosys's generic synthesis script, flattened, then a full abc run mapping onto two-input
# gates, MUX2 and NOT (abc always adds NOT). A black box and a tie-off change nothing else.
# Counting rule (printed with the table): every cell is a flip-flop ($_DFF*, $_SDFF*, ...), a gate
# or a black box (not counted); gates are weighted by yosys's own CMOS transistor table
# (kernel/cost.h, what `stat -tech cmos` sums: NOT 2, NAND/NOR 4, AND/OR 6, XOR/XNOR/MUX 12)
# divided by 4, the transistors of a NAND2, giving NAND2 gate equivalents (GE); a flip-flop counts
# FF_GE (an assumed 6 GE for a D flip-flop with asynchronous reset) plus EN_GE (3, a MUX2) when
# yosys gave it an enable. Flip-flop counts are printed separately so other weights can be used.
#
# yosys 0.23 (Debian bookworm) does not parse `return` in a SystemVerilog function; the sources
# are copied to raw/src next to the output, where `return EXPR;` inside a function becomes
# `NAME = EXPR;` (the same function). Nothing else is changed; rtl/ is not touched. raw/ also
# keeps every yosys script (re-runnable as `yosys -s FILE.ys`), its log and its stat output.
# Needs yosys and python3. Exits 2 without yosys. Took 11-12 minutes on one core for W = 8, 16.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

FF_GE=6
EN_GE=3

# ---------------------------------------------------------------------------------------------
# One yosys run: --job NAME TOP WIDTH VARIANT SRCDIR OUTDIR FILES...
#   VARIANT: "-" (whole), "tie:PORT" (input PORT tied to 0), "bb:MODULE" (MODULE a black box)
if [ "${1:-}" = "--job" ]; then
  shift
  name="$1" top="$2" width="$3" variant="$4" src="$5" out="$6"
  shift 6
  base="$out/$name-w$width"
  {
    for f in "$@"; do echo "read_verilog -sv $src/$f"; done
    case "$variant" in bb:*) echo "blackbox ${variant#bb:}" ;; esac
    echo "hierarchy -top $top -chparam BYTES $width"
    case "$variant" in
      tie:*)
        # The input becomes an internal wire driven by a constant.
        port="${variant#tie:}"
        echo "proc"
        echo "cd $top"
        echo "delete -port w:$port"
        echo "connect -set $port 1'b0"
        echo "cd .."
        ;;
    esac
    echo "synth -flatten -top $top"
    echo "abc -g AND,NAND,OR,NOR,XOR,XNOR,MUX"
    echo "opt_clean"
    echo "tee -q -o $base.txt stat"
    echo "tee -q -o $base.json stat -json"
  } > "$base.ys"
  start=$(date +%s)
  if ! yosys -q -l "$base.log" "$base.ys" > /dev/null 2>&1; then
    echo "synth-cost.sh: yosys failed on $name (width $width); see $base.log" >&2
    exit 1
  fi
  echo "  $name w$width: $(( $(date +%s) - start )) s" >&2
  exit 0
fi

# ---------------------------------------------------------------------------------------------
widths="8 16"
out=sweeps-out/synth-cost/synth-cost.md
jobs=1
rev=""
while [ $# -gt 0 ]; do
  case "$1" in
    --widths) shift; widths="$1" ;;
    --rev) shift; rev="$1" ;;
    --out) shift; out="$1" ;;
    -j) shift; jobs="$1" ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "synth-cost.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if ! command -v yosys > /dev/null 2>&1; then
  echo "synth-cost.sh: yosys is not installed (not on PATH). Install it, e.g. on Debian" >&2
  echo "  apt-get install yosys      (docs/studies/cost-model.md used Yosys 0.23)" >&2
  echo "and run tools/synth-cost.sh again." >&2
  exit 2
fi
if ! command -v python3 > /dev/null 2>&1; then
  echo "synth-cost.sh: python3 is needed to tabulate yosys's statistics" >&2
  exit 2
fi

cd "$root"
case "$out" in /*) ;; *) out="$root/$out" ;; esac
rawdir="$(dirname "$out")/raw"
srcdir="$rawdir/src"
mkdir -p "$srcdir"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Sources for yosys 0.23: `return EXPR;` inside `function ... NAME(` becomes `NAME = EXPR;`.
if [ -n "$rev" ]; then
  git -C "$root" rev-parse --verify --quiet "$rev^{commit}" > /dev/null ||
    { echo "synth-cost.sh: --rev $rev: not a commit of this repository" >&2; exit 2; }
  mkdir -p "$scratch/rtl"
  for f in $(git -C "$root" ls-tree --name-only "$rev" rtl/ | grep '\.sv$'); do
    git -C "$root" show "$rev:$f" > "$scratch/rtl/$(basename "$f")"
  done
  rtl_sources=("$scratch"/rtl/*.sv)
else
  rtl_sources=(rtl/*.sv)
fi
for f in "${rtl_sources[@]}"; do
  awk '
    /^[[:space:]]*function[[:space:]]/ { fn = $0; sub(/\(.*/, "", fn); n = split(fn, w, /[[:space:]]+/); fname = w[n] }
    /^[[:space:]]*endfunction/ { fname = "" }
    fname != "" && /^[[:space:]]*return[[:space:]]/ { sub(/return[[:space:]]+/, fname " = ") }
    { print }' "$f" > "$srcdir/$(basename "$f")"
done

rx_files="mpa_rx_datapath.sv stream_packer.sv crc32c_engine.sv"
tx_files="mpa_tx_datapath.sv stream_packer.sv crc32c_engine.sv"
ift_files="ift_rx_header_check.sv crc32c_engine.sv"
joblist="$scratch/jobs"
: > "$joblist"
for w in $widths; do
  # name top width variant files
  {
    echo "crc32c_engine crc32c_engine $w - crc32c_engine.sv"
    echo "ift_rx_header_check ift_rx_header_check $w - $ift_files"
    echo "ift_rx_header_check-bb_crc ift_rx_header_check $w bb:crc32c_engine $ift_files"
    for d in rx tx; do
      eval "files=\$${d}_files"
      echo "mpa_${d}_datapath mpa_${d}_datapath $w - $files"
      echo "mpa_${d}_datapath-tie_markers mpa_${d}_datapath $w tie:cfg_markers $files"
      echo "mpa_${d}_datapath-bb_packer mpa_${d}_datapath $w bb:stream_packer $files"
      echo "mpa_${d}_datapath-bb_crc mpa_${d}_datapath $w bb:crc32c_engine $files"
    done
  } >> "$joblist"
done

echo "synth-cost.sh: $(yosys -V), widths: $widths, $(wc -l < "$joblist") yosys runs, -j $jobs" >&2
self="$root/tools/synth-cost.sh"
# Each line: name top width variant files... -> --job name top width variant src out files...
if ! awk -v src="$srcdir" -v out="$rawdir" '{ printf "%s %s %s %s %s %s", $1, $2, $3, $4, src, out;
        for (i = 5; i <= NF; i++) printf " %s", $i; printf "\n" }' "$joblist" |
     xargs -P "$jobs" -L 1 "$self" --job; then
  echo "synth-cost.sh: a yosys run failed (logs in $rawdir)" >&2
  exit 1
fi

python3 - "$rawdir" "$out" "$FF_GE" "$EN_GE" "$widths" "$(yosys -V)" "${rev:-the working tree}" <<'PY'
import json, re, sys
raw, out, ff_ge, en_ge, widths, version, rtl = (sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]),
                                                 sys.argv[5].split(), sys.argv[6], sys.argv[7])

# yosys kernel/cost.h, CMOS transistor counts (what `stat -tech cmos` adds up).
CMOS = {"$_BUF_": 1, "$_NOT_": 2, "$_AND_": 6, "$_NAND_": 4, "$_OR_": 6, "$_NOR_": 4,
        "$_ANDNOT_": 6, "$_ORNOT_": 6, "$_XOR_": 12, "$_XNOR_": 12, "$_AOI3_": 6, "$_OAI3_": 6,
        "$_AOI4_": 8, "$_OAI4_": 8, "$_MUX_": 12, "$_NMUX_": 10}
FF = re.compile(r"^\$_(S?DFF|DFFE|SDFFC?E|ALDFFE?|DFFSRE?|DLATCH|SR)_")
FF_EN = re.compile(r"^\$_(DFFE|SDFFC?E|ALDFFE|DFFSRE)_")
BLACKBOXES = ("stream_packer", "crc32c_engine")
KEYS = ("cells", "gates", "ffs", "ffs_en", "tr", "ge_comb", "ge_ff", "ge")

def measure(name, w):
    with open(f"{raw}/{name}-w{w}.json") as f:
        mods = json.load(f)["modules"]
    if len(mods) != 1:
        sys.exit(f"synth-cost.sh: {name} w{w}: the flattened design has {len(mods)} modules")
    r = dict.fromkeys(KEYS, 0)
    for t, n in next(iter(mods.values()))["num_cells_by_type"].items():
        if FF.match(t):
            r["ffs"] += n
            r["ffs_en"] += n if FF_EN.match(t) else 0
        elif t in CMOS:
            r["gates"] += n
            r["tr"] += CMOS[t] * n
        elif any(b in t for b in BLACKBOXES):
            continue  # the black-boxed submodule: not counted
        else:
            sys.exit(f"synth-cost.sh: {name} w{w}: cell type {t} is outside the counting rule")
    r["cells"] = r["gates"] + r["ffs"]
    r["ge_comb"] = r["tr"] / 4.0
    r["ge_ff"] = r["ffs"] * ff_ge + r["ffs_en"] * en_ge
    r["ge"] = r["ge_comb"] + r["ge_ff"]
    return r

def minus(a, b):
    return {k: a[k] - b[k] for k in KEYS}

def plus(a, b):
    return {k: a[k] + b[k] for k in KEYS}

def row(label, w, x):
    return (f"| {label} | {w} | {x['cells']} | {x['gates']} | {x['ffs']} ({x['ffs_en']}) | "
            f"{x['ge_comb']:.0f} | {x['ge_ff']:.0f} | {x['ge']:.0f} |")

lines = ["# Synthesis cost of the framing RTL", "",
         f"Generated by `tools/synth-cost.sh` with {version}; bus widths W = {', '.join(widths)} bytes; rtl/ of {rtl}.",
         "Every run: `synth -flatten -top X; abc -g AND,NAND,OR,NOR,XOR,XNOR,MUX; opt_clean; stat` "
         "(yosys's internal cells, no liberty).",
         f"GE (NAND2 equivalents): gates by yosys's CMOS transistor table / 4 (NOT 0.5, NAND/NOR 1, "
         f"AND/OR 1.5, XOR/XNOR/MUX 3); flip-flops {ff_ge:g} GE each, +{en_ge:g} with an enable (assumed).",
         "Rows starting with \"-\" are differences of two runs (the part named); \"cells\" counts gates and flip-flops.",
         "", "| block | W | cells | gates | flip-flops (with enable) | GE gates | GE flip-flops | GE total |",
         "|---|---:|---:|---:|---:|---:|---:|---:|"]
summary = []
for w in widths:
    m = {n: measure(n, w) for n in (
        "crc32c_engine", "ift_rx_header_check", "ift_rx_header_check-bb_crc",
        "mpa_rx_datapath", "mpa_rx_datapath-tie_markers", "mpa_rx_datapath-bb_packer", "mpa_rx_datapath-bb_crc",
        "mpa_tx_datapath", "mpa_tx_datapath-tie_markers", "mpa_tx_datapath-bb_packer", "mpa_tx_datapath-bb_crc")}
    lines.append(row("CRC32c engine alone (W lanes, any byte enables)", w, m["crc32c_engine"]))
    ift = m["ift_rx_header_check"]
    lines.append(row("IFT Header CRC check, whole (new block)", w, ift))
    lines.append(row("- its CRC engine (whole - CRC engine black-boxed)", w, minus(ift, m["ift_rx_header_check-bb_crc"])))
    lines.append(row("- framing state and lane classification (CRC engine black-boxed)", w, m["ift_rx_header_check-bb_crc"]))
    parts = {}
    for d, what in (("rx", "Marker removal, CRC check"), ("tx", "Marker insertion, CRC append")):
        whole = m[f"mpa_{d}_datapath"]
        markers = minus(whole, m[f"mpa_{d}_datapath-tie_markers"])
        packer = minus(whole, m[f"mpa_{d}_datapath-bb_packer"])
        crc = minus(whole, m[f"mpa_{d}_datapath-bb_crc"])
        parts[d] = (whole, markers, packer, crc)
        lines.append(row(f"MPA {d} datapath, whole ({what})", w, whole))
        lines.append(row(f"MPA {d} datapath, cfg_markers tied to 0", w, m[f"mpa_{d}_datapath-tie_markers"]))
        lines.append(row(f"- Marker logic (whole - tied off)", w, markers))
        lines.append(row(f"- stream_packer (whole - packer black-boxed)", w, packer))
        lines.append(row(f"- CRC engine (whole - CRC engine black-boxed)", w, crc))
    summary.append((w, parts, ift, m["crc32c_engine"]))

lines += ["", "Marker datapath of one port (receive + transmit), GE total. Lower bound: only what a constant "
          "cfg_markers removes. Upper bound: plus both stream_packers, which exist because Markers change the "
          "byte count of a word (without Markers the receive side only drops the CRC field at the end and the "
          "transmit side appends 4 bytes; their smaller shifters are not subtracted).", "",
          "| W | rx Markers | tx Markers | rx packer | tx packer | Markers, lower | Markers, upper | "
          "IFT Header CRC check | CRC32c engine |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for w, parts, ift, crc in summary:
    rxm, txm, rxp, txp = parts["rx"][1], parts["tx"][1], parts["rx"][2], parts["tx"][2]
    lo = rxm["ge"] + txm["ge"]
    hi = lo + rxp["ge"] + txp["ge"]
    lines.append(f"| {w} | {rxm['ge']:.0f} | {txm['ge']:.0f} | {rxp['ge']:.0f} | {txp['ge']:.0f} | {lo:.0f} | "
                 f"{hi:.0f} | {ift['ge']:.0f} | {crc['ge']:.0f} |")
text = "\n".join(lines) + "\n"
with open(out, "w") as f:
    f.write(text)
print(text, end="")
PY
echo "synth-cost.sh: wrote $out (yosys scripts, logs and stat outputs in $rawdir)" >&2
