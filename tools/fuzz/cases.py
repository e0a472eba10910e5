"""Saved regression cases: a folder with spec.onnx, shards/ and case.json.

case.json says the verdict the ground truth expects, the class of disagreement the fuzzer saw,
the issue-16 class it belongs to where known (`issue_class`), and the recipe that writes it.
"""
import json
import os

from . import families, oracle
from .writer import write_case

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CASES = os.path.join(REPO, "tests", "fuzz", "cases")      # replayed by default
PENDING = os.path.join(REPO, "tests", "fuzz", "pending")  # wait for fixes (tests/fuzz/README.md)


def issue_class(rec):
    """The issue-16 class a recipe's features point to (a hint; saved cases are checked by hand)."""
    if families.of(rec):
        return families.of(rec).issue_class(rec)
    steps = rec["steps"]
    feats = set()
    for st in steps:
        if st.get("form") == "trans_max":
            feats.add(6)
        if st.get("bug") in ("clamp_positions", "count_poly", "bias_per_rank") or \
                st.get("how") == "gather_sum" or st.get("form") == "scaled_replica":
            feats.add(3)
        if st["k"] == "reduce" and (st.get("plan_form") == "mask" or st.get("bug") == "mask_for_half"):
            feats.add(2)
        if st["k"] == "table" and st["fill"] != "rand" and st["lay"] != "R":
            feats.add(4)
        if st["k"] == "reduce" and {st.get("dtype"), st.get("spec_dtype")} & {"float16", "bfloat16"}:
            feats.add(1)
    return min(feats) if len(feats) == 1 else (sorted(feats) or None)


def save(rec, res, name, root):
    folder = os.path.join(root, name)
    write_case(rec, folder)
    meta = dict(expect=oracle.expected_verdict(res["num"]), found=res["cls"],
                issue_class=issue_class(rec), verdicts=dict(reduced=res["red"], no_reduce=res["full"]),
                numeric=res["num"], recipe=rec)
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    return folder


def load(root):
    """[(name, folder, case.json)] of the saved cases under root."""
    out = []
    if not os.path.isdir(root):
        return out
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "case.json")
        if os.path.exists(path):
            with open(path) as f:
                out.append((name, os.path.join(root, name), json.load(f)))
    return out
