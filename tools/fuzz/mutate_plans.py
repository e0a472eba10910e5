#!/usr/bin/python3
"""The structural mutation campaign: the bundled cases under models/ (a spec.onnx and one of its
shards folders), damaged the way a hostile or careless exporter would damage them, then checked.
Every input must end in a verdict (exit 0, 1, 3) or an input error (exit 2); an internal error
(exit 4), a signal (a crash) or a timeout is a finding, kept with everything needed to replay it.

  tools/fuzz/mutate_plans.py --count 200                       # a smoke run
  tools/fuzz/mutate_plans.py --count 5000 --seed0 1000000      # a campaign
  tools/fuzz/mutate_plans.py --hours 8 --jobs 2                # for hours
  tools/fuzz/mutate_plans.py --only 1000123                    # one mutant again, folder kept

Mutant i uses random.Random(seed0 + i): it picks a case, copies it to a scratch folder and
applies 1 to 3 mutations (raw bytes, ONNX protos, plan.json, metadata bindings, the files of the
shards folder), then runs `onnx-tv check` (with --no-reduce one time in four) under a timeout.
Options: --binary PATH (default build/onnx-tv), --save DIR (default /tmp/onnx-tv-mutants; one
folder per finding), --timeout S (default 60), --jobs J, --count N (default 5000; unbounded with
--hours), --hours H, --verbose (a line for every mutant, not only findings). Exit status 1
if there was any finding. A seed names a case by its index in the sorted list of cases under
models/, so --only gives the same mutant while that tree is unchanged; the saved folder is the
lasting record.
"""
import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))

# The cases, the mutations and the runner are in tools/fuzz/mutate/ (see its __init__.py).
from fuzz.mutate import runner  # noqa: E402
from fuzz.mutate.cases import MODELS, ROOT, find_cases  # noqa: E402
from fuzz.mutate.runner import FINE, MEMORY_NOTE_MB, OUTCOMES, replay_command  # noqa: E402


def describe(r):
    muts = "; ".join("%s %s" % (k, w) for k, w in r["mutations"])
    return "seed %d: %s %s [%s | %s]%s\n  %s" % (
        r["seed"], r["outcome"], r["detail"], "/".join(r["case"] or ("?",)), muts,
        " --no-reduce" if r["no_reduce"] else "", r["line"] or "(no output)")


def summary(counts, kinds, by_kind, t0, peak):
    n = sum(counts.values())
    dt = time.time() - t0
    lines = ["%d mutants in %.0f s (%.2f/s): %s" % (
        n, dt, n / max(dt, 1e-9), ", ".join("%s %d" % (k, counts[k]) for k in
                                            OUTCOMES + sorted(set(counts) - set(OUTCOMES))))]
    if peak[1] is not None:
        lines.append("peak memory %.0f MB (seed %d)" % peak)
    lines.append("per mutation kind (mutants holding it; exit 0/1/2/3, findings):")
    for k in sorted(kinds):
        c = by_kind[k]
        bad = sum(v for o, v in c.items() if o not in FINE)
        lines.append("  %-18s %5d   %4d %4d %4d %4d   %d" % (
            k, kinds[k], c["exit0"], c["exit1"], c["exit2"], c["exit3"], bad))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--count", type=int)
    ap.add_argument("--seed0", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "onnx-tv"))
    ap.add_argument("--save", default=os.path.join(tempfile.gettempdir(), "onnx-tv-mutants"))
    ap.add_argument("--only", type=int, metavar="SEED")
    ap.add_argument("--hours", type=float)
    ap.add_argument("--verbose", action="store_true", help="a line for every mutant")
    a = ap.parse_args(argv)
    a.binary = os.path.abspath(a.binary)
    a.save = os.path.abspath(a.save)
    if not os.access(a.binary, os.X_OK):
        print("no binary at %s (--binary)" % a.binary)
        return 2
    cases = find_cases()
    runner.init_worker(a, cases)

    if a.only is not None:
        r = runner.one(a.only, keep=True)
        print(describe(r))
        print("folder %s" % r["saved"])
        if r["saved"]:
            print("command %s" % replay_command(a.binary, r["saved"], r["no_reduce"]))
        return 0 if r["outcome"] in FINE else 1

    count = a.count if a.count is not None else (1 << 62 if a.hours else 5000)
    deadline = time.time() + a.hours * 3600 if a.hours else None
    seeds = range(a.seed0, a.seed0 + count)
    print("%d cases under %s; binary %s; findings saved in %s" % (
        len(cases), MODELS, a.binary, a.save), flush=True)
    counts, kinds, by_kind = Counter(), Counter(), defaultdict(Counter)
    peak = (0.0, None)
    found = counts_memory = 0
    t0 = last_report = time.time()
    pool = multiprocessing.Pool(a.jobs, runner.init_worker, (a, cases)) if a.jobs > 1 else None
    results = pool.imap_unordered(runner.one, seeds) if pool else map(runner.one, seeds)
    try:
        for r in results:
            counts[r["outcome"]] += 1
            for k in set(kind for kind, _ in r["mutations"]):
                kinds[k] += 1
                by_kind[k][r["outcome"]] += 1
            if r["rss"] > peak[0]:
                peak = (r["rss"], r["seed"])
            if r["outcome"] == "gen_error":
                print("seed %d: %s" % (r["seed"], r["detail"]), flush=True)
            elif r["outcome"] in FINE:
                if r["rss"] > MEMORY_NOTE_MB:
                    counts_memory += 1
                    print("memory %.0f MB, " % r["rss"] + describe(r), flush=True)
                    print("  saved %s" % r["saved"], flush=True)
                elif a.verbose:
                    print(describe(r), flush=True)
            else:
                found += 1
                print(describe(r), flush=True)
                print("  saved %s" % r["saved"], flush=True)
            if time.time() - last_report > 600:
                last_report = time.time()
                print(summary(counts, kinds, by_kind, t0, peak).split("\n")[0], flush=True)
            if deadline and time.time() > deadline:
                break
    except KeyboardInterrupt:  # a long run stopped by hand still reports what it counted
        print("interrupted", flush=True)
    if pool:
        pool.terminate()
    print(summary(counts, kinds, by_kind, t0, peak))
    if counts_memory:
        print("%d mutant(s) past %.0f MB of memory (not findings; saved for a look)" % (
            counts_memory, MEMORY_NOTE_MB))
    print("%d finding(s)%s" % (found, " in %s" % a.save if found else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
