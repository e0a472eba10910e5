#!/usr/bin/python3
"""Benchmark: the zoo's named real-size Llama-3 8B plans, proven on their reduced instance.

  tools/bench/real_plans.py [--layers 1 2 4 32] [--plans 8b_dp2_tp2_pp2_mb2 8b_cp2_dp2_tp2_pp2_mb2]
                            [--binary build/onnx-tv] [--timeout 1800]

For each plan and layer count: generates the plan (tools/zoo/generate.py --real-plan), runs
`onnx-tv check` on it, and prints verdict, wall time, peak memory (from /usr/bin/time), the
tensor elements at full and reduced size, and the reduced shape of the first inputs; a
verdict marked "(staged)" was proven with stage cuts (docs/design.md).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_one(binary, plan, layers, timeout):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, plan)
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools/zoo/generate.py"),
                        "--real-plan", plan, "--layers", str(layers), "--out", out],
                       check=True, capture_output=True)
        report = os.path.join(d, "report.json")
        t0 = time.time()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "check",
                            os.path.join(out, "spec.onnx"), os.path.join(out, "plan"),
                            "--no-progress", "--json", report],
                           capture_output=True, text=True, timeout=timeout)
        wall = time.time() - t0
        peak_mb = int(p.stderr.strip().splitlines()[-1]) / 1024 if p.stderr.strip() else 0
        j = json.load(open(report)) if os.path.exists(report) else {}
        red = j.get("reduction", {})
        shapes = {}
        for dim in red.get("dims", []):
            shapes.setdefault(dim["value"], ([], []))
            shapes[dim["value"]][0].append(dim["full"])
            shapes[dim["value"]][1].append(dim["reduced"])
        verdict = j.get("verdict", "killed (exit %d)" % p.returncode)
        if j.get("stats", {}).get("staged"):
            verdict += " (staged)"
        return verdict, wall, peak_mb, red, shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--plans", nargs="+", default=["8b_dp2_tp2_pp2_mb2", "8b_cp2_dp2_tp2_pp2_mb2"])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/onnx-tv"))
    ap.add_argument("--timeout", type=int, default=1800)
    a = ap.parse_args()
    print("%-26s %6s %-24s %9s %9s %16s %14s" % ("plan", "layers", "verdict", "time (s)",
                                                "peak (MB)", "elements (full)", "(reduced)"))
    for plan in a.plans:
        for layers in a.layers:
            try:
                v, wall, peak, red, shapes = run_one(a.binary, plan, layers, a.timeout)
            except subprocess.TimeoutExpired:
                print("%-26s %6d timeout after %d s" % (plan, layers, a.timeout))
                continue
            print("%-26s %6d %-24s %9.1f %9.0f %16d %14d" % (
                plan, layers, v, wall, peak, red.get("full_elements", 0),
                red.get("reduced_elements", 0)), flush=True)
            for name in ["x", "layers.0.w_q", "layers.0.w_k", "layers.0.w_gate", "lm_head"]:
                if name in shapes:
                    print("    %-16s %s -> %s" % (name, shapes[name][0], shapes[name][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
