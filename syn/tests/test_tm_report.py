#!/usr/bin/env python3
"""Bookkeeping of syn/synth.py's tag-matching flow, without Yosys: the report keyed by full parameter
sets (a piece run changes only its own entry; variants of another engine are dropped), the results
section of syn/README.md, the engine header's parameter names, variant arguments, the generated P&R
adapter and the Fmax median."""
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import synth  # noqa: E402

NAMES = ["N_ENTRIES", "NUM_SRQ", "N_CLASS"]
K1024 = "N_ENTRIES=1024,NUM_SRQ=16,N_CLASS=2"
K4096 = "N_ENTRIES=4096,NUM_SRQ=16,N_CLASS=1"


def ecp5(lut4, ccu2c=10, rtl="abc1234"):
    cells = dict(LUT4=lut4, CCU2C=ccu2c, TRELLIS_FF=900, DP16KD=40, PFUMX=5, L6MUX21=2)
    return dict(date="2026-11-23", rtl=rtl, ok=True, run=dict(seconds=42.0, peak_mb=400, timed_out=False),
                cells=cells, summary=synth.ecp5_summary(cells), memories={"e.u_slot.mem_q": "$__DP16KD_"})


def pnr(fmax):
    seeds = [dict(seed=i + 1, ok=True, fmax_mhz=f, run=dict(seconds=100.0, peak_mb=700, timed_out=False),
                  utilization=dict(TRELLIS_COMB=dict(used=20000, available=83640)),
                  critical_path=[dict(delay_ns=8.0, delay_by_type_ns=dict(logic=3.0, routing=5.0), logic_levels=7,
                                      start="a.Q", end="b.D")])
             for i, f in enumerate(fmax)]
    return dict(date="2026-11-23", rtl="abc1234", ok=True, freq_mhz=150, seeds=seeds,
                fmax_median_mhz=synth.median(fmax), yosys_run=dict(seconds=50.0, peak_mb=500, timed_out=False))


class TmReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.saved = (synth.SYN, synth.NEXTPNR, synth.pkg_version, synth.YOSYS_VERSION)
        synth.SYN = Path(self.tmp.name)
        synth.NEXTPNR = Path(self.tmp.name) / "no-nextpnr"
        synth.pkg_version = lambda name: "0"
        synth.YOSYS_VERSION = "Yosys test"
        (synth.SYN / "README.md").write_text(f"# x\n\n{synth.README_BEGIN}\nold table\n{synth.README_END}\n\nafter\n")
        old = dict(variants=[dict(key="N_ENTRIES=64,LANES=64,NUM_SRQ=16",
                                  params=dict(N_ENTRIES=64, LANES=64, NUM_SRQ=16), ecp5=ecp5(19056))])
        (synth.SYN / "tm_engine_report.json").write_text(json.dumps(old))

    def tearDown(self):
        synth.SYN, synth.NEXTPNR, synth.pkg_version, synth.YOSYS_VERSION = self.saved
        self.tmp.cleanup()

    def rows(self):
        d = json.loads((synth.SYN / "tm_engine_report.json").read_text())
        return {r["key"]: r for r in d["variants"]}

    def test_pieces_merge_by_key_and_other_engines_drop(self):
        synth.tm_report({K1024: {"ecp5": ecp5(20000)}}, NAMES)
        rows = self.rows()
        self.assertEqual(list(rows), [K1024])  # the LANES variant (another engine) is gone
        self.assertEqual(rows[K1024]["params"], dict(N_ENTRIES=1024, NUM_SRQ=16, N_CLASS=2))
        synth.tm_report({K1024: {"pnr": pnr([120.0, 130.0, 125.0])}, K4096: {"ecp5": ecp5(60000)}}, NAMES)
        rows = self.rows()
        self.assertEqual(rows[K1024]["ecp5"]["summary"]["LUT4_eq"], 20020)  # kept
        self.assertEqual(rows[K1024]["pnr"]["fmax_median_mhz"], 125.0)
        self.assertEqual(list(rows), [K1024, K4096])  # ordered by parameters
        synth.tm_report({K1024: {"ecp5": ecp5(21000, rtl="def5678")}}, NAMES)
        rows = self.rows()
        self.assertEqual(rows[K1024]["ecp5"]["rtl"], "def5678")
        self.assertIn("pnr", rows[K1024])  # the other piece keeps its own entry and RTL revision

    def test_readme_section(self):
        synth.tm_report({K1024: {"ecp5": ecp5(20000), "pnr": pnr([120.0, 130.0, 125.0])}}, NAMES)
        text = (synth.SYN / "README.md").read_text()
        self.assertNotIn("old table", text)
        self.assertTrue(text.endswith(f"{synth.README_END}\n\nafter\n"))
        lines = text.splitlines()
        self.assertIn("| N_ENTRIES / NUM_SRQ / N_CLASS | RTL | LUT4 | CCU2C | LUT4-eq |", text)
        row = [l for l in lines if l.startswith("| 1024 / 16 / 2 | abc1234 | 20000 |")]
        self.assertEqual(len(row), 1)
        self.assertIn("| 20020 |", row[0])
        self.assertIn("| 40 |", row[0])  # DP16KD
        prow = [l for l in lines if l.startswith("| 1024 / 16 / 2 | abc1234 | 150 |")][0]
        self.assertIn("120.00 / 130.00 / 125.00 | 125.0 |", prow)

    def test_param_names(self):
        """Parameters, not localparams, in declaration order, whatever the header's layout (as elaborated)."""
        f = Path(self.tmp.name) / "eng.sv"
        f.write_text(f"""// module {synth.TM_TOP} #(parameter int unsigned X = 1)
module {synth.TM_TOP} import tmnic_hwif_pkg::*; #(
  parameter int unsigned N_ENTRIES = 1024,  // list capacity, (all SRQs)
  parameter int unsigned NUM_SRQ   = 16,
  parameter logic [3:0] N_CLASS = 4'(2), /* a, b */ N_WAYS = {{2'd1, 2'd0}},
  localparam int unsigned H_W   = $clog2(N_ENTRIES),
  parameter int unsigned N_BUCKETS = N_ENTRIES / 2
) (input logic clk_i);
endmodule
""")
        files = ["rtl/pkg/tmnic_hwif_pkg.sv", str(f)]
        self.assertEqual(synth.tm_param_names(files), ["N_ENTRIES", "NUM_SRQ", "N_CLASS", "N_WAYS", "N_BUCKETS"])
        self.assertEqual(synth.tm_param_names(synth.tm_files())[:2], ["N_ENTRIES", "NUM_SRQ"])

    def test_variant_syntax(self):
        self.assertEqual(synth.tm_parse_variant("N_ENTRIES=4096,N_CLASS=1"), dict(N_ENTRIES=4096, N_CLASS=1))
        self.assertEqual(synth.tm_parse_variant("default"), {})
        with self.assertRaises(SystemExit):
            synth.tm_parse_variant("4096")

    def test_wrap_adapter(self):
        ports = [("input", "clk_i", 1), ("input", "rst_ni", 1), ("input", "a_i", 3), ("output", "x_o", 2),
                 ("input", "b_i", 64), ("output", "y_o", 1)]
        text, w_in, w_out = synth.wrap_adapter("tmnic_tm_engine", dict(N_ENTRIES=16), ports, "N_ENTRIES=16")
        self.assertEqual((w_in, w_out), (67, 3))
        for conn in (".clk_i(clk_i)", ".rst_ni(rst_ni)", ".a_i(in_i[2:0])", ".b_i(in_i[66:3])",
                     ".x_o(out_o[1:0])", ".y_o(out_o[2:2])", "#(.N_ENTRIES(16))", "input wire [66:0] in_i",
                     "module tmnic_pnr_wrap_dut", "tmnic_tm_engine #("):
            self.assertIn(conn, text)

    def test_median(self):
        self.assertEqual(synth.median([3.0, 1.0, 2.0]), 2.0)
        self.assertEqual(synth.median([1.0, 2.0]), 1.5)


if __name__ == "__main__":
    unittest.main()
