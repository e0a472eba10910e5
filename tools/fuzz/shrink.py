"""Shrinks a disagreeing recipe to a small one that disagrees the same way.

Greedy, on the recipe (not on ONNX): drop an output, bypass a step (its users read its input),
drop a redistribution, fewer ranks, smaller pieces, per-rank files instead of one SPMD program,
float64 constants; a candidate is kept when the case still falls in the same class. A candidate
whose layouts no longer fit is either invalid (the numeric runner or the prover rejects it, so
the class changes) or a smaller case of the same disagreement: both are fine.
"""
import os
import shutil
import time

from . import families, oracle
from . import recipe as R
from .writer import write_case


def _rename(rec, old, new):
    for st in rec["steps"]:
        if st["k"] == "redist" and st["v"] == old:
            st["v"] = new
        if "ins" in st:
            st["ins"] = [new if v == old else v for v in st["ins"]]
    rec["outputs"] = list(dict.fromkeys(new if v == old else v for v in rec["outputs"]))


def candidates(rec):
    """Smaller recipes, most promising first."""
    if families.of(rec):
        yield from families.of(rec).candidates(rec)
        return
    for i in range(len(rec["outputs"])):
        if len(rec["outputs"]) > 1:
            c = R.clone(rec)
            del c["outputs"][i]
            yield c
    for i, st in enumerate(rec["steps"]):
        if st["k"] == "redist" and not st.get("bug"):
            c = R.clone(rec)
            del c["steps"][i]
            yield c
        elif st.get("ins") and not st.get("bug"):
            src = st["ins"][0]
            c = R.clone(rec)
            del c["steps"][i]
            _rename(c, st["out"], src)
            if not any(s.get("out") == src for s in c["steps"]):
                continue
            yield c
    if rec["n"] > 2:
        for n in range(2, rec["n"]):
            c = R.clone(rec)
            c["n"] = n
            yield c
    for d, piece in sorted(rec["dims"].items()):
        if piece > 1:
            for smaller in sorted({1, piece // 2}):
                c = R.clone(rec)
                c["dims"][d] = smaller
                yield c
    if rec["spmd"]:
        c = R.clone(rec)
        c["spmd"] = False
        yield c
    for i, st in enumerate(rec["steps"]):
        for key in ("dtype", "spec_dtype"):
            if st.get(key, "float64") != "float64":
                c = R.clone(rec)
                c["steps"][i][key] = "float64"
                yield c
        for key, plain in (("then_broadcast", None), ("gemm", False)):
            if st.get(key):
                c = R.clone(rec)
                if plain is None:
                    del c["steps"][i][key]
                else:
                    c["steps"][i][key] = plain
                yield c


def _cost(rec):
    if families.of(rec):
        return families.of(rec).cost(rec)
    return (len(rec["steps"]), len(rec["outputs"]), rec["n"], sum(rec["dims"].values()))


def shrink(binary, rec, cls, work, budget_s=240, log=None):
    """The smallest recipe found within the time budget that still classifies as `cls`."""
    t0 = time.time()
    best = R.prune(R.clone(rec))
    tries = 0
    improved = True
    while improved and time.time() - t0 < budget_s:
        improved = False
        for c in candidates(best):
            if time.time() - t0 > budget_s:
                break
            c = R.prune(c)
            if c["bug"] != best["bug"] or _cost(c) >= _cost(best) and c == best:
                continue
            tries += 1
            try:
                folder = write_case(c, os.path.join(work, "shrink"))
            except Exception:  # a candidate the writer cannot lower is no smaller case
                continue
            res = oracle.run_case(binary, folder)
            if res["cls"] == cls:
                best, improved = c, True
                if log:
                    log("  shrunk to cost %s" % (_cost(c),))
                break
    shutil.rmtree(os.path.join(work, "shrink"), ignore_errors=True)
    return best, tries
