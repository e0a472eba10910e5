"""The `train` family: one training step of a small MLP, the shape real plans have.

Spec: y = act(x w1) w2 (+ b), loss = sum(y^2)/N (+ lam sum(w2^2)), and its backward written out
(dw1, dw2, db). Plan: SPMD programs on a mesh of up to three axes, each drawn with its own count:
  dp  data parallel: x Shard(0); gradients all-reduced over dp or left Partial() on dp
  pp  two pipeline stages: stage 0 holds w1 and sends act(x w1) by peer_axis/peer_offset, stage 1
      holds w2 and the loss and sends the activation's gradient back
  tp  Megatron tensor parallel: w1 Shard(1), w2 Shard(0), y all-reduced over tp (a bias added
      before that all-reduce takes 1/tp on each rank)
and micro-batches (mb >= 4): each rank's rows cut by local_slice into mb pieces, one body per
piece, gradients and losses accumulated by a Sum, an Add chain, or an Add chain from zeros.
Weight decay is added once, or per dp rank before the sum, or per micro-batch, with its share.

Bugs, each a plan wrong at full size: one micro-batch scaled differently, every micro-batch scaled
by its own count, a weight-decay or bias share right only for another count (the shrunk counts
2 and 3 can make it right: the count guard must see it), a local mean over dp, a gradient not
reduced over dp or reduced over the wrong axis, swapped pipeline tags, the pre-activation sent.
"""
import random

ACTS = ["tanh", "square", "none"]
DTYPES = ["float16", "bfloat16", "float32", "float64"]


def generate(seed):
    r = random.Random(seed * 31 + 7)
    rec = dict(family="train", seed=seed, dp=r.choice([1, 1, 2, 2, 3, 4]), tp=r.choice([1, 1, 2, 4]),
               pp=r.choice([1, 1, 2]), mb=r.choice([1, 4, 4, 5, 6, 8]), bm=r.choice([1, 2]),
               D=r.choice([2, 3, 4]), hp=r.choice([1, 2, 3]), E=r.choice([1, 2, 3]),
               act=r.choice(ACTS), bias=r.random() < 0.45, lam=r.choice([0, 0.25, 0.1]),
               acc=r.choice(["sum", "chain", "zeros"]), spec_loss=r.choice(["mean", "lit"]),
               gemm=r.random() < 0.4, dtype=r.choice(DTYPES), bug=None, bad_mb=0)
    if rec["dp"] * rec["tp"] * rec["pp"] == 1 and rec["mb"] == 1:
        rec["mb"] = r.choice([4, 5, 8])
    while rec["dp"] * rec["tp"] * rec["pp"] * rec["mb"] > 48:  # numeric and --no-reduce stay fast
        rec["mb"] = 1 if rec["mb"] <= 4 else 4
        if rec["dp"] * rec["tp"] * rec["pp"] * rec["mb"] > 48:
            rec["dp"] = 2
    rec["dp_out"] = r.choice(["allreduce", "allreduce", "partial"]) if rec["dp"] > 1 else "allreduce"
    rec["wd"] = r.choice(["once", "per_dp", "per_mb", "per_mb"])
    if rec["wd"] == "per_mb" and rec["mb"] == 1 or rec["wd"] == "once" and rec["dp_out"] == "partial":
        rec["wd"] = "per_dp"
    bugs = applicable_bugs(rec)
    if bugs and r.random() < 0.55:
        rec["bug"] = r.choice(bugs)
        rec["bad_mb"] = r.randrange(rec["mb"])
    return rec


def applicable_bugs(rec):
    out = []
    if rec["mb"] > 1:
        out += ["mb_one_scaled", "mb_wrong_count"]
        if rec["lam"] and rec["wd"] == "per_mb":
            out += ["wd_count"] * 3
        if rec["pp"] > 1:
            out.append("pp_tag_swap")
    if rec["lam"] and rec["wd"] == "per_dp" and rec["dp"] > 2:
        out.append("wd_count")
    if rec["dp"] > 1:
        out += ["dp_local_mean"] + (["missing_dp_reduce"] if rec["dp_out"] == "allreduce" else [])
        if rec["tp"] > 1 and rec["dp_out"] == "allreduce":
            out.append("wrong_axis")
    if rec["tp"] > 1 and rec["bias"]:
        out += ["bias_count"] * 3
    if rec["pp"] > 1 and rec["act"] != "none":
        out.append("pp_send_preact")
    return out


def valid(rec):
    """A shrunk recipe must still hold the structure its bug needs."""
    if rec["mb"] not in (1,) and rec["mb"] < 4:
        return False
    return rec["bug"] is None or rec["bug"] in applicable_bugs(rec)


def candidates(rec):
    """Smaller recipes, for shrink.py."""
    def with_(**kw):
        c = dict(rec)
        c.update(kw)
        return c
    for key, smaller in (("pp", 1), ("tp", 1), ("dp", 1), ("bias", False), ("lam", 0),
                         ("mb", 1), ("mb", 4), ("tp", 2), ("dp", 2), ("bm", 1), ("D", 2),
                         ("hp", 1), ("E", 1), ("act", "none"), ("gemm", False),
                         ("dtype", "float64"), ("acc", "sum"), ("dp_out", "allreduce"),
                         ("bad_mb", 0)):
        if rec[key] != smaller and not (isinstance(smaller, int) and rec[key] < smaller):
            c = with_(**{key: smaller})
            if c["dp"] == 1:
                c["dp_out"] = "allreduce"
            if valid(c) and c["dp"] * c["tp"] * c["pp"] * c["mb"] > 1:
                c["bad_mb"] = min(c["bad_mb"], c["mb"] - 1)
                yield c


def issue_class(rec):
    """3 where a term every rank or micro-batch adds meets a count that reduction shrinks."""
    shares = rec["lam"] and (rec["wd"] == "per_mb" or rec["wd"] == "per_dp" and rec["dp"] > 1)
    if rec["bug"] in ("wd_count", "bias_count") or shares or rec["bias"] and rec["tp"] > 1:
        return 3
    return None


def cost(rec):
    return (rec["dp"] * rec["tp"] * rec["pp"] * rec["mb"], rec["D"] + rec["hp"] + rec["E"] + rec["bm"])
