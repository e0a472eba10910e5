#!/usr/bin/python3
"""Benchmark: the zoo's real-size Llama-3 and DeepSeek plans next to TrainVerify's published times.

  tools/bench/trainverify.py [--sizes 8b 70b 405b v2-lite v2 v3] [--binary build/onnx-tv]
                             [--timeout 3600] [--keep DIR] [--jobs N ...] [--trainverify-size]
                             [--max-memory GB] [--processes 1 2 4] [--layers N]

The DeepSeek sizes (V2-Lite, V2, V3 on TrainVerify's DP32 x TP8 x PP8 plan with 16 micro-batches,
experts split inside the TP group) are not in the default run: they do not fit this machine
yet (docs/zoo.md). `--trainverify-size` builds them at TrainVerify's hidden 512 and sequence 128.

For each size: generates the plan (tools/zoo/generate.py --real SIZE: the spec and one program
per pipeline stage, graph only), runs `onnx-tv check` on it with `--jobs 1` and with its default
(the machine's cores; `--jobs` chooses others, 0 for the default), and prints the verdict, wall time,
peak memory (from /usr/bin/time), the ranks of the plan and the ranks proven (fewer ranks along
interchangeable mesh axes and fewer micro-batches, docs/shape-reduction.md), the nodes run, the
instances proven, the rank-micro-batch units (one rank running one micro-batch) of the plan and
those proven, the stage obligations (proven, and the same as one proven: docs/design.md "Stage
obligations"), and TrainVerify's time for
the same configuration (SOSP 2025, table of end-to-end verification times, 32-core machine).
With `--processes`, each size is also checked under `mpirun -n P` (docs/distributed.md), and
a table gives time, peak memory of the largest process and the instances each process proved.
"""
import argparse
import itertools
import json
import re
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# size -> (plan folder name written by generate.py, TrainVerify's seconds on 32 cores)
PLANS = {
    "8b": ("dp512.spmd", 685),
    "70b": ("dp16_tp8_pp4_mb32.spmd", 8532),
    "405b": ("dp64_tp8_pp16_mb16.spmd", 28786),
    "v2-lite": ("dp32_tp8_pp8_mb16.spmd", 1351),
    "v2": ("dp32_tp8_pp8_mb16.spmd", 8484),
    "v3": ("dp32_tp8_pp8_mb16.spmd", 32371),
}
DEFAULT_SIZES = ["8b", "70b", "405b"]


def units(plan, fewer, micro):
    """Rank-micro-batch units (one rank running one micro-batch's body): in the full plan, and
    proven over every instance of the grid (each shrunk mesh axis and the micro-batches at 2
    and at 3) -- what stands here for TrainVerify's stages and distinct stages."""
    mesh = dict(zip(plan["mesh"]["axes"], plan["mesh"]["shape"])) if "mesh" in plan else {}
    shrunk = [re.match(r"mesh axis '([^']+)'", f).group(1) for f in fewer]
    named = re.search(r"_mb(\d+)", plan.get("name", ""))  # the zoo's plan names say it
    full_mb = int(micro.split()[0]) if micro else int(named.group(1)) if named else 1
    full = plan["world_size"] * full_mb
    proven = 0
    keys = shrunk + (["mb"] if micro else [])
    for counts in itertools.product((2, 3), repeat=len(keys)):
        c = dict(zip(keys, counts))
        ranks = 1
        for axis, n in mesh.items():
            ranks *= c.get(axis, n)
        proven += ranks * c.get("mb", full_mb)
    return full, proven


def generate(size, out, extra_gen=()):
    """Writes the plan of `size` into `out`; returns the seconds it took."""
    t0 = time.time()
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools/zoo/generate.py"),
                    "--real", size, "--out", out] + list(extra_gen), check=True,
                   capture_output=True)
    return time.time() - t0


# Open MPI refuses root unless told; more processes than cores need --oversubscribe.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def check_one(binary, size, out, timeout, jobs, extra_check=(), processes=None):
    """`onnx-tv check` on the plan in `out` (under `mpirun -n processes` when given)."""
    folder, _ = PLANS[size]
    report = os.path.join(out, "report.json")
    if os.path.exists(report):
        os.remove(report)
    launcher = ["mpirun", "--oversubscribe", "-n", str(processes)] if processes else []
    t0 = time.time()
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "%M"] + launcher +
                           [binary, "check", os.path.join(out, "spec.onnx"),
                            os.path.join(out, folder), "--no-progress", "--json", report] +
                           (["--jobs", str(jobs)] if jobs else []) + list(extra_check),
                           capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **MPI_ENV))
    except subprocess.TimeoutExpired:
        return {"verdict": "timeout after %d s" % timeout}
    wall = time.time() - t0
    lines = p.stderr.strip().splitlines()
    # with mpirun: the largest of its processes (GNU time reports the largest waited-for child)
    peak = int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else 0
    j = json.load(open(report)) if os.path.exists(report) else {}
    plan = json.load(open(os.path.join(out, folder, "plan.json")))
    plan["name"] = folder
    stats = j.get("stats", {})
    verdict = j.get("verdict", "exit %d" % p.returncode)
    if stats.get("staged"):
        verdict += " (staged)"
    return {"verdict": verdict, "wall": wall, "peak": peak,
            "world": plan["world_size"], "proven": stats.get("ranks", 0),
            "nodes": stats.get("spec_nodes", 0) + stats.get("rank_nodes", 0),
            "fewer": j.get("reduction", {}).get("fewer_ranks", []),
            "micro": j.get("reduction", {}).get("fewer_micro_batches", ""),
            "message": j.get("message", ""),
            "process_instances": stats.get("process_instances", []),
            "stages": stats.get("stages", {}),
            "units": units(plan, j.get("reduction", {}).get("fewer_ranks", []),
                           j.get("reduction", {}).get("fewer_micro_batches", ""))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=DEFAULT_SIZES, choices=list(PLANS))
    ap.add_argument("--trainverify-size", action="store_true",
                    help="DeepSeek sizes at TrainVerify's hidden 512 and sequence 128")
    ap.add_argument("--max-memory", type=float, help="onnx-tv check --max-memory (GB)")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/onnx-tv"))
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--keep", help="write the generated plans here instead of a temporary folder")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 0],
                    help="onnx-tv check --jobs, each in turn; 0: no --jobs, the default "
                         "(default: 1 0)")
    ap.add_argument("--layers", type=int,
                    help="generate every size with N layers instead of its own depth")
    ap.add_argument("--processes", type=int, nargs="+",
                    help="also check each size under mpirun -n P for every P given (with "
                         "--jobs 1 each), and print the scaling table")
    a = ap.parse_args()
    print("%-5s %-24s %-22s %5s %6s %7s %9s %9s %10s %14s" % (
        "size", "plan", "verdict", "jobs", "ranks", "proven", "time (s)", "peak (MB)",
        "nodes run", "TrainVerify (s)"))
    for size in a.sizes:
        deepseek = size.startswith("v")
        gen = ["--trainverify-size"] if deepseek and a.trainverify_size else []
        gen += ["--layers", str(a.layers)] if a.layers else []
        check = ["--max-memory", str(a.max_memory)] if a.max_memory else []
        tmp = tempfile.TemporaryDirectory()
        out = os.path.join(a.keep or tmp.name, size)
        generate(size, out, gen)
        folder, tv = PLANS[size]
        r = {}
        for jobs in a.jobs:
            shown = str(jobs) if jobs else "cores"
            got = check_one(a.binary, size, out, a.timeout, jobs, check)
            if "wall" not in got:
                print("%-5s %-24s %-22s %5s" % (size, folder, got["verdict"], shown), flush=True)
                continue
            print("%-5s %-24s %-22s %5s %6d %7d %9.1f %9.0f %10d %14d" % (
                size, folder, got["verdict"], shown, got["world"], got["proven"], got["wall"],
                got["peak"], got["nodes"], tv), flush=True)
            r = r or got
        if not r:
            continue
        for f in r["fewer"]:
            print("      fewer ranks: " + f)
        if r["micro"]:
            print("      fewer micro-batches: " + r["micro"])
        instances = 2 ** (len(r["fewer"]) + (1 if r["micro"] else 0))
        print("      instances proven (every combination of 2 and 3): %d; rank-micro-batch "
              "units: %d in the plan, %d proven" % ((instances,) + r["units"]))
        st = r["stages"]
        if st.get("total"):
            print("      stage obligations: %d, %d proven, %d the same as one proven" % (
                st["total"], st["proven"], st["reused"]))
        if r["message"]:
            print("      " + r["message"].splitlines()[0])
        if a.processes:
            # On a machine with fewer cores than processes the table shows how the instances
            # are split; the time is not shorter.
            print("      %9s %9s %9s  %s" % ("processes", "time (s)", "peak (MB)",
                                             "instances per process"))
            for n in a.processes:
                m = check_one(a.binary, size, out, a.timeout, 1, check, processes=n)
                if "wall" not in m:
                    print("      %9d %s" % (n, m["verdict"]), flush=True)
                    continue
                print("      %9d %9.1f %9.0f  %s (%s)" % (
                    n, m["wall"], m["peak"], m["process_instances"], m["verdict"]), flush=True)
            print("      (%d cores here: with more processes than cores the split is shown, "
                  "not a speed-up)" % os.cpu_count())
        tmp.cleanup()
    print("TrainVerify: 32 cores; onnx-tv: %d cores here, jobs as shown (generation not timed)."
          % os.cpu_count())
    return 0


if __name__ == "__main__":
    sys.exit(main())
