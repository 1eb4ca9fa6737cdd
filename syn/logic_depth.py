#!/usr/bin/env python3
"""Register-to-register logic depth of an ECP5-mapped Yosys netlist (write_json after synth_ecp5),
per endpoint register, with the worst path of each group traced back through named nets.

Why: nextpnr reports one critical path per clock and a full P&R takes tens of minutes; this finds
every deep stage in seconds from the netlist the P&R flow already writes (build/syn/tm/.../pnr/wrap.json).
The weights are levels, not nanoseconds: a LUT4 is 1, the PFUMX/L6MUX21 behind it 0.3, entering a
carry chain 1, each CCU2C along it 0.1, a block-RAM output starts at 3 (its clock-to-output is about
three LUT hops on ECP5). Routing dominates ECP5 paths (about 0.5-2 ns per hop), so at 100 MHz a stage
has room for about 6-7 levels.

  syn/logic_depth.py build/syn/tm/<variant>/pnr/wrap.json [--top 25] [--min 6]
"""
import argparse
import collections
import json
import re
import sys

W_LUT, W_MUX, W_CARRY_IN, W_CARRY, W_RAM = 1.0, 0.3, 1.0, 0.1, 3.0


def load(path):
    d = json.load(open(path))
    mods = d["modules"]
    top = next((n for n, m in mods.items() if m.get("attributes", {}).get("top")), None)
    if top is None:
        top = max(mods, key=lambda n: len(mods[n].get("cells", {})))
    return mods[top]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--top", type=int, default=25, help="groups to print")
    ap.add_argument("--min", type=float, default=0.0, help="only groups at least this deep")
    ap.add_argument("--trace", type=int, default=8, help="worst paths to trace")
    ap.add_argument("--net", action="append", default=[], metavar="REGEX",
                    help="also print the deepest bit of every named net matching REGEX")
    a = ap.parse_args()
    m = load(a.json)
    cells = m["cells"]

    # Net names: prefer a user name (no '$'), the shortest.
    name = {}
    for n, nn in m["netnames"].items():
        hide = nn.get("hide_name", 0)
        for i, b in enumerate(nn["bits"]):
            if isinstance(b, str):
                continue
            label = n if len(nn["bits"]) == 1 else f"{n}[{i}]"
            old = name.get(b)
            if old is None or (old[0] and not hide) or (old[0] == hide and len(label) < len(old[1])):
                name[b] = (hide, label)

    # Combinational arcs: sink bit <- (source bits, weight); sources: FF Q, RAM DO, inputs.
    drv = {}       # bit -> (cell, kind)
    arcs = {}      # out bit -> list of (in bit, weight)
    start = {}     # bit -> start level
    ends = []      # (bit, endpoint label)
    for cn, c in cells.items():
        t, con, dirs = c["type"], c["connections"], c.get("port_directions", {})

        def bits(p):
            return [b for b in con.get(p, []) if not isinstance(b, str)]

        for p_, dr in dirs.items():
            if dr == "output":
                for o in bits(p_):
                    drv[o] = cn
        if t == "LUT4":
            ins = bits("A") + bits("B") + bits("C") + bits("D")
            for o in bits("Z"):
                arcs[o] = [(i, W_LUT) for i in ins]
        elif t in ("PFUMX", "L6MUX21"):
            ins = bits("ALUT") + bits("BLUT") + bits("C0") + bits("D0") + bits("D1") + bits("SD")
            for o in bits("Z"):
                arcs[o] = [(i, W_MUX) for i in ins]
        elif t == "CCU2C":
            ins = [b for p in ("A0", "B0", "C0", "D0", "A1", "B1", "C1", "D1") for b in bits(p)]
            cin = bits("CIN")
            for o in bits("S0") + bits("S1") + bits("COUT"):
                arcs[o] = [(i, W_CARRY_IN) for i in ins] + [(i, W_CARRY) for i in cin]
        elif t == "TRELLIS_FF":
            for o in bits("Q"):
                start[o] = 0.0
            for p in ("DI", "M", "CE", "LSR"):
                for b in bits(p):
                    ends.append((b, ("FF", cn, p)))
        elif t in ("DP16KD", "PDPW16KD", "TRELLIS_DPR16X4"):
            for p, dr in dirs.items():
                if dr == "output":
                    for o in bits(p):
                        start[o] = W_RAM if t != "TRELLIS_DPR16X4" else 1.0
                elif not p.startswith("CLK"):
                    for b in bits(p):
                        ends.append((b, ("RAM", cn, p)))
        else:
            for p, dr in dirs.items():
                if dr == "output":
                    for o in bits(p):
                        start[o] = 0.0
                else:
                    for b in bits(p):
                        ends.append((b, (t, cn, p)))
    for p in m.get("ports", {}).values():
        if p["direction"] == "input":
            for b in p["bits"]:
                if not isinstance(b, str):
                    start[b] = 0.0

    sys.setrecursionlimit(1000000)
    lvl, pred = {}, {}

    def depth(b):
        # iterative DFS (the LUT graph is deep)
        stack = [b]
        while stack:
            x = stack[-1]
            if x in lvl:
                stack.pop()
                continue
            if x in start or x not in arcs:
                lvl[x] = start.get(x, 0.0)
                stack.pop()
                continue
            pend = [i for i, _ in arcs[x] if i not in lvl]
            if pend:
                stack.extend(pend)
                continue
            best, bp = 0.0, None
            for i, w in arcs[x]:
                v = lvl[i] + w
                if v > best:
                    best, bp = v, i
            lvl[x], pred[x] = best, bp
            stack.pop()
        return lvl[b]

    def label(b):
        return name.get(b, (1, f"${b}"))[1]

    def src(cn):
        a = cells[cn].get("attributes", {}).get("src", "")
        m = re.search(r"([^/|]+\.sv):(\d+)", a)
        return f"{m.group(1)}:{m.group(2)}" if m else ""

    auto = re.compile(r"_TRELLIS_FF_Q|_LUT4_|_CCU2C_|_PFUMX_|\$")

    def group(lbl):
        # u.t4_q[3][17] -> u.t4_q ; strip bit indices and autoname suffixes
        g = re.sub(r"\[\d+\]", "", lbl)
        g = re.sub(r"_TRELLIS_FF_Q.*$", "", g)
        return g

    groups = collections.defaultdict(lambda: (0.0, None, 0))
    for b, (kind, cn, p) in ends:
        d = depth(b)
        if kind == "FF":
            q = cells[cn]["connections"].get("Q", [None])[0]
            g = group(label(q)) if q is not None else cn
            if auto.search(g):
                g = f"[{src(cn)}]"
            g = f"{g} ({p})"
        else:
            ram = re.sub(r"(\.[0-9]+)+$", "", group(cn))
            g = f"{ram} ({kind} {re.sub(r'[0-9]+$', '', p)})"
        best, bb, cnt = groups[g]
        groups[g] = (max(best, d), b if d >= best else bb, cnt + 1)

    for rx in a.net:
        nets = collections.defaultdict(float)
        for n, nn in m["netnames"].items():
            if re.search(rx, n) and not re.search(r"_TRELLIS_FF_Q|_LUT4_|_CCU2C_|_PFUMX_|_DI$|\$", n):
                for b in nn["bits"]:
                    if not isinstance(b, str):
                        nets[n] = max(nets[n], depth(b))
        for n, d in sorted(nets.items(), key=lambda kv: -kv[1])[:40]:
            print(f"{d:7.1f}  net {n}")
        print()

    rows = sorted(groups.items(), key=lambda kv: -kv[1][0])
    print(f"{'levels':>7}  {'bits':>5}  endpoint group")
    for g, (d, b, cnt) in rows[: a.top]:
        if d < a.min:
            break
        print(f"{d:7.1f}  {cnt:5d}  {g}")
    print()
    for g, (d, b, cnt) in rows[: a.trace]:
        path, x = [], b
        while x is not None:
            nm = group(label(x))
            where = src(drv[x]) if x in drv else ""
            path.append((lvl.get(x, 0), "" if auto.search(nm) else nm, where))
            x = pred.get(x)
        print(f"== {g}: {d:.1f} levels")
        seen = None
        for lv, nm, where in reversed(path):
            if (nm, where) != seen:
                print(f"   {lv:5.1f} {where:32s} {nm}")
                seen = (nm, where)
        print()


if __name__ == "__main__":
    main()
