"""Recipes: a fuzz case as data, small enough to shrink and to save as JSON.

A recipe holds the rank count `n` (one mesh axis, "tp"), whether the plan is one SPMD program or
one file per rank, the dimension sizes (every dimension is `n * piece` long, so any of them can
be sharded), and a list of steps. Each step is a spec operation together with the plan's choice
of how to compute it, with values laid out on the ranks as in DTensor:
  R   replicated (every rank holds the whole value)
  S0  sharded along dimension 0 (rank i holds chunk i), S1 along dimension 1
  P   partial (the value is the sum over the ranks of what each holds)
`redist` steps change only the plan's layout of a value (a collective, or a local slice).
A `bug` field on a step makes the plan wrong there (or, for a few, leaves it right in a way the
prover's shortcuts misread): lower.py writes it.
"""
import copy
import json


def size(rec, d):
    return 1 if d == "1" else rec["n"] * rec["dims"][d]


def shape(rec, dims):
    return [size(rec, d) for d in dims]


def local_shape(rec, dims, lay):
    s = shape(rec, dims)
    if lay in ("S0", "S1"):
        k = int(lay[1])
        s[k] //= rec["n"]
    return s


def shard_dim(lay):
    return int(lay[1]) if lay in ("S0", "S1") else None


def values(rec):
    """name -> (dims, final plan layout), replaying the steps."""
    out = {}
    for st in rec["steps"]:
        if st["k"] == "redist":
            out[st["v"]] = (out[st["v"]][0], st["to"])
        else:
            out[st["out"]] = (tuple(st["dims"]), st["lay"])
    return out


def dumps(rec):
    return json.dumps(rec, sort_keys=True, indent=1)


def clone(rec):
    return copy.deepcopy(rec)


def used_names(st):
    if st["k"] == "redist":
        return [st["v"]]
    return list(st.get("ins", []))


def prune(rec):
    """Drops steps no output depends on (shrinking removes outputs and steps freely)."""
    if "family" in rec:  # a family's recipe holds parameters, not steps
        return rec
    need = set(rec["outputs"])
    keep = []
    for st in reversed(rec["steps"]):
        name = st["v"] if st["k"] == "redist" else st["out"]
        if name in need:
            keep.append(st)
            need.update(used_names(st))
    rec["steps"] = list(reversed(keep))
    rec["bug"] = next((st["bug"] for st in rec["steps"] if st.get("bug")), None)
    return rec
