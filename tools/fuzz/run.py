#!/usr/bin/python3
"""The differential fuzzer: random spec programs and plans, checked by onnx-tv (reduced and with
--no-reduce) against a full-size float64 run; disagreements are shrunk and saved.

  tools/fuzz/run.py --seeds 0:200            # these seeds, then a summary
  tools/fuzz/run.py --budget 120 --seed0 0   # seeds from 0 on, for 120 s (the CI mode)
  tools/fuzz/run.py --hours 8 --jobs 2       # the long mode: counts per class every 10 minutes
Options: --binary PATH (default build/onnx-tv), --save DIR (shrunk disagreements are written
there, at most --per-kind of each kind), --no-shrink, --strict (exit 1 on any disagreement),
--fail-on CLASSES (exit 1 on these classes only, comma-separated).
"""
import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))

from fuzz import cases, oracle, shrink  # noqa: E402
from fuzz.gen import generate  # noqa: E402
from fuzz.writer import write_case  # noqa: E402

_BINARY = None


def one(seed):
    """(seed, recipe, result) for one seed; runs in a worker."""
    work = os.path.join(tempfile.gettempdir(), "onnx-tv-fuzz-%d" % os.getpid())
    rec = None
    try:
        rec = generate(seed)
        folder = write_case(rec, os.path.join(work, "case"))
        return seed, rec, oracle.run_case(_BINARY, folder)
    except Exception as e:  # a fault of the generator (or of the numeric runner on its case) is
        # counted as gen_error with the recipe, and the campaign goes on
        return seed, rec, dict(cls="gen_error", num="error: %r" % e, red=None, full=None)


def _init(binary):
    global _BINARY
    _BINARY = binary


def kind(rec, res):
    ic = cases.issue_class(rec)
    ic = "-".join(map(str, ic)) if isinstance(ic, list) else ic
    fam = rec.get("family", "steps")
    return "%s-ic%s-%s-%s" % (res["cls"], ic, fam, rec["bug"] or "correct")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", help="START:END")
    ap.add_argument("--seed0", type=int, default=0)
    ap.add_argument("--budget", type=float, help="seconds")
    ap.add_argument("--hours", type=float)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--binary", default=os.path.join(cases.REPO, "build", "onnx-tv"))
    ap.add_argument("--save")
    ap.add_argument("--per-kind", type=int, default=1)
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--fail-on", default="",
                    help="comma-separated classes that make the run exit 1 (--strict: all)")
    ap.add_argument("--shrink-budget", type=float, default=240, help="seconds per shrunk case")
    a = ap.parse_args(argv)
    if a.seeds:
        lo, hi = map(int, a.seeds.split(":"))
        seeds, deadline = iter(range(lo, hi)), None
    else:
        seeds = iter(range(a.seed0, 1 << 62))
        deadline = time.time() + (a.hours * 3600 if a.hours else a.budget or 120)
    counts, saved, found = Counter(), Counter(), []
    t0 = last_report = time.time()
    pool = multiprocessing.Pool(a.jobs, _init, (a.binary,)) if a.jobs > 1 else None
    _init(a.binary)
    results = pool.imap(one, seeds) if pool else map(one, seeds)
    try:
        for seed, rec, res in results:
            counts[res["cls"]] += 1
            if res["cls"] in oracle.DISAGREEMENTS or res["cls"] == "gen_error":
                k = kind(rec, res) if rec else "gen_error"
                print("seed %d: %s (numeric %s, reduced %s, --no-reduce %s)" % (
                    seed, k, res["num"], res["red"], res["full"]), flush=True)
                found.append((seed, k))
                if res["cls"] == "gen_error":
                    print("  %s" % res["num"], flush=True)
                elif rec and a.save and saved[k] < a.per_kind:
                    saved[k] += 1
                    try:
                        print("  saved", save_case(a, rec, res, "%s-seed%d" % (k, seed)), flush=True)
                    except Exception as e:  # shrinking or saving one case never ends the campaign
                        counts["gen_error"] += 1
                        print("  not saved: %r" % e, flush=True)
            if time.time() - last_report > 600:
                last_report = time.time()
                print(summary(counts, t0), flush=True)
            if deadline and time.time() > deadline:
                break
    except KeyboardInterrupt:  # a long run stopped by hand still reports what it counted
        print("interrupted", flush=True)
    if pool:
        pool.terminate()
    print(summary(counts, t0))
    fail_on = set(oracle.DISAGREEMENTS) if a.strict else set(filter(None, a.fail_on.split(",")))
    unknown = fail_on - set(oracle.DISAGREEMENTS)
    if unknown:
        print("unknown classes in --fail-on: %s" % ", ".join(sorted(unknown)))
        return 2
    bad = sum(counts[c] for c in fail_on)
    return 1 if bad or counts["gen_error"] else 0


def save_case(a, rec, res, name):
    """Shrinks (unless --no-shrink) and saves one disagreement; the folder written."""
    small = rec
    if not a.no_shrink:
        small, _tries = shrink.shrink(a.binary, rec, res["cls"], tempfile.mkdtemp(),
                                      budget_s=a.shrink_budget, log=print)
        res = oracle.run_case(a.binary, write_case(small, os.path.join(
            tempfile.gettempdir(), "onnx-tv-fuzz-final-%d" % os.getpid())))
    return cases.save(small, res, name, a.save)


def summary(counts, t0):
    n = sum(counts.values())
    dt = time.time() - t0
    return "%d cases in %.0f s (%.2f/s): %s" % (n, dt, n / max(dt, 1e-9), ", ".join(
        "%s %d" % kv for kv in sorted(counts.items())))


if __name__ == "__main__":
    sys.exit(main())
