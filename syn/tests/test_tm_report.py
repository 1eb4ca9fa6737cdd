#!/usr/bin/env python3
"""Bookkeeping of syn/synth.py's tag-matching report, without Yosys: an --abc9-script run changes only
its own result in syn/tm_engine_report.json, a full rerun of the same RTL keeps the script results, and
the table marks LUT counts that come from another ABC9 script. Also the split synth_ecp5 script."""
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import synth  # noqa: E402

FAST = "&st;&if,-W,300,-v"


def row(v, rtl, ecp5=None):
    n = int(v)
    r = dict(variant=v, params=dict(N_ENTRIES=n, LANES=n, NUM_SRQ=16), rtl=rtl, ok=True,
             generic_ff=150 * n, generic_mem=0, state_min=149 * n,
             generic_run=dict(seconds=10.0, peak_mb=100, timed_out=False))
    if ecp5:
        r.update(ecp5=ecp5, ecp5_run=dict(seconds=20.0, peak_mb=200, timed_out=False))
    return r


def script_result(v, script, lut4, rtl="abc1234"):
    return dict(variant=v, partial=True, ok=True, ecp5_scripts={script: dict(
        date="2026-11-22", rtl=rtl, run=dict(seconds=30.0, peak_mb=300, timed_out=False),
        ecp5=dict(LUT4=lut4, CCU2C=7, TRELLIS_FF=150 * int(v)))})


class TmReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.saved = (synth.SYN, synth.NEXTPNR, synth.pkg_version)
        synth.SYN = Path(self.tmp.name)
        synth.NEXTPNR = Path(self.tmp.name) / "no-nextpnr"
        synth.pkg_version = lambda name: "0"
        pnr = dict(variant="64", ok=True, fmax={"clk": dict(achieved_mhz=33.0)})
        (synth.SYN / "tm_engine_report.json").write_text(json.dumps(dict(
            synthesis=[row("64", "abc1234", dict(LUT4=19056, CCU2C=306, TRELLIS_FF=10021)), row("1024", "abc1234")],
            pnr=pnr)))

    def tearDown(self):
        synth.SYN, synth.NEXTPNR, synth.pkg_version = self.saved
        self.tmp.cleanup()

    def rows(self):
        d = json.loads((synth.SYN / "tm_engine_report.json").read_text())
        return {r["variant"]: r for r in d["synthesis"]}, d

    def test_script_run_changes_only_its_result(self):
        synth.tm_report([script_result("1024", FAST, 300000)], None, "Yosys test")
        rows, d = self.rows()
        r = rows["1024"]
        self.assertEqual(r["generic_ff"], 153600)  # generic result kept
        self.assertNotIn("ecp5", r)  # synth_ecp5's own mapping is not pretended
        self.assertNotIn("partial", r)
        self.assertEqual(r["ecp5_scripts"][FAST]["ecp5"]["LUT4"], 300000)
        self.assertEqual(rows["64"]["ecp5"]["LUT4"], 19056)
        self.assertEqual(d["pnr"]["variant"], "64")
        # a second script adds to the first
        synth.tm_report([script_result("1024", "default", 310000)], None, "Yosys test")
        r = self.rows()[0]["1024"]
        self.assertEqual(sorted(r["ecp5_scripts"]), sorted([FAST, "default"]))

    def test_full_rerun_keeps_script_results_of_same_rtl_only(self):
        synth.tm_report([script_result("64", FAST, 18000)], None, "Yosys test")
        synth.tm_report([row("64", "abc1234", dict(LUT4=19000))], None, "Yosys test")
        self.assertIn(FAST, self.rows()[0]["64"]["ecp5_scripts"])
        synth.tm_report([row("64", "def5678", dict(LUT4=19100))], None, "Yosys test")
        self.assertNotIn("ecp5_scripts", self.rows()[0]["64"])

    def test_table_marks_other_script(self):
        data = synth.tm_report([script_result("1024", FAST, 300000)], None, "Yosys test")
        md = synth.tm_table(data).splitlines()
        main = [l for l in md if l.startswith("| 1024 / 1024") and "state" not in l][0]
        self.assertIn(f"LUTs mapped by `{FAST}`", main)
        self.assertIn("| 300000 |", main)
        self.assertTrue(any(l.startswith("| 1024 / 1024 | `abc9 -W 300 -script +" + FAST) for l in md))
        row64 = [l for l in md if l.startswith("| 64 / 64 |")][0]
        self.assertIn("| 19056 |", row64)

    def test_split_script(self):
        whole = synth.TM_ECP5("top")
        self.assertEqual(whole[0], "synth_ecp5 -top top -run :check")
        split = synth.TM_ECP5("top", FAST)
        self.assertEqual(split[0], "synth_ecp5 -top top -run :map_luts")
        self.assertIn(f"abc9 -W 300 -script +{FAST}", split)
        self.assertIn("synth_ecp5 -top top -run map_cells:check", split)
        self.assertEqual(split[-3:], whole[-3:])  # the same tail as the whole run
        self.assertIn("abc9 -W 300", synth.TM_ECP5("top", "default"))


if __name__ == "__main__":
    unittest.main()
