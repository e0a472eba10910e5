"""The `counts` family: terms that depend on the number of ranks along an axis in ways two proofs
(with 2 and with 3 ranks) cannot see.

Spec: out = ReduceSum(x, 0) (+ u). Plan: SPMD on a tp axis of n ranks (with a dp axis of replicas
beside it, sometimes); x Shard(0) over tp, u replicated; each rank sums its rows, the sum over
ranks is an AllReduce or an AllGather then ReduceSum, and one term is added:
  poly_ar      k (S - 2u)(S' - 3u), S = S' = AllReduce(u) = n u: error (n-2)(n-3) k u^2, a product
               of two sums over ranks of a replicated value (right at 2 and 3 ranks only)
  poly_gather  the same with S written as AllGather then ReduceSum
  e4           k e4 of the ranks' partial sums, e4 = (p1^4 - 6 p1^2 p2 + 3 p2^2 + 8 p1 p3 - 6 p4)/24
               with p_j = AllReduce(s^j): 0 at 2 and 3 ranks (a fourth elementary symmetric
               polynomial of fewer than four values), not at 4 or 5
  share        the spec's + u written as u*c added on every rank before the AllGather+ReduceSum
               sum: right when c = 1/n (a correct plan the prover must not refute), wrong for
               c = 1/2 at n > 2
The recipe's `bug` says whether the plan is wrong at its own n.
"""
import json
import os
import random

from .onnxb import Builder, save, start_case

TERMS = ["poly_ar", "poly_gather", "e4", "e4", "share"]


def wrong(rec):
    t, n = rec["term"], rec["n"]
    if t.startswith("poly"):
        return n > 3
    if t == "e4":
        return n > 3
    return rec["share"] != "1/n" and n != 2


def generate(seed):
    r = random.Random(seed * 17 + 3)
    rec = dict(family="counts", seed=seed, n=r.choice([2, 3, 4, 4, 4, 5]), dp=r.choice([1, 1, 2]),
               a=r.choice([1, 2]), b=r.choice([1, 2, 3]), term=r.choice(TERMS),
               k=r.choice([1.0, 0.5, 0.125]), sum_by=r.choice(["allreduce", "gather"]),
               share=r.choice(["1/n", "1/n", "1/2"]), dtype=r.choice(["float32", "float64", "float16"]))
    rec["bug"] = rec["term"] if wrong(rec) else None
    return rec


def candidates(rec):
    for key, smaller in (("dp", 1), ("n", 4), ("n", 3), ("a", 1), ("b", 1), ("k", 1.0),
                         ("sum_by", "allreduce"), ("dtype", "float64")):
        if rec[key] != smaller and not (key == "n" and rec[key] < smaller):
            c = dict(rec, **{key: smaller})
            if (c["term"] if wrong(c) else None) == rec["bug"]:
                yield c


def issue_class(rec):
    return 3


def cost(rec):
    return (rec["n"] * rec["dp"], rec["a"] + rec["b"])


class Program:
    def __init__(self, rec):
        self.rec, self.g = rec, Builder("program")
        self.axes = ["dp", "tp"] if rec["dp"] > 1 else ["tp"]

    def ar(self, x):
        return self.g.node("AllReduce", [x], domain="onnx_tv", group_axes=["tp"])

    def gather_sum(self, x):
        """A sum over the tp ranks written as AllGather along a new leading axis, then ReduceSum."""
        g = self.g
        x1 = g.node("Unsqueeze", [x, g.ints([0])])
        gat = g.node("AllGather", [x1], domain="onnx_tv", group_axes=["tp"], axis=0)
        return g.node("ReduceSum", [gat, g.ints([0])], keepdims=0)

    def rank_sum(self, x, by=None):
        return self.gather_sum(x) if (by or self.rec["sum_by"]) == "gather" else self.ar(x)

    def build(self):
        rec, g = self.rec, self.g
        x = g.input("x", [rec["a"], rec["b"]])
        u = g.input("u", [1, rec["b"]])
        s = g.node("ReduceSum", [x, g.ints([0])], keepdims=1)
        t, k = rec["term"], g.const(rec["k"], rec["dtype"])
        if t == "share":
            c = 1.0 / rec["n"] if rec["share"] == "1/n" else 0.5
            out = self.gather_sum(g.node("Add", [s, g.node("Mul", [u, g.const(c, rec["dtype"])])]))
        else:
            out = self.rank_sum(s)
        if t.startswith("poly"):
            by = "gather" if t == "poly_gather" else "allreduce"
            s1 = g.node("Sub", [self.rank_sum(u, by), g.node("Mul", [u, g.const(2.0)])])
            s2 = g.node("Sub", [self.rank_sum(u, by), g.node("Mul", [u, g.const(3.0)])])
            out = g.node("Add", [out, g.node("Mul", [g.node("Mul", [s1, s2]), k])])
        elif t == "e4":
            out = g.node("Add", [out, g.node("Mul", [self.e4(s), k])])
        g.output(out, [1, rec["b"]], "out")
        return self

    def e4(self, s):
        g = self.g
        pw = {1: s}
        for j in (2, 3, 4):
            pw[j] = g.node("Mul", [pw[j - 1], s])
        p = {j: self.rank_sum(pw[j]) for j in pw}

        def mul(*vs):
            y = vs[0]
            for v in vs[1:]:
                y = g.node("Mul", [y, v])
            return y
        terms = [(1.0, mul(p[1], p[1], p[1], p[1])), (-6.0, mul(p[1], p[1], p[2])),
                 (3.0, mul(p[2], p[2])), (8.0, mul(p[1], p[3])), (-6.0, p[4])]
        acc = None
        for c, v in terms:
            v = g.node("Mul", [v, g.const(c / 24.0)])
            acc = v if acc is None else g.node("Add", [acc, v])
        return acc


def spec(rec):
    g = Builder("spec")
    x = g.input("x", [rec["n"] * rec["a"], rec["b"]])
    out = g.node("ReduceSum", [x, g.ints([0])], keepdims=1)
    u = g.input("u", [1, rec["b"]])
    if rec["term"] == "share":
        out = g.node("Add", [out, u])
    else:  # u is an input of the spec too, so both sides bind it
        out = g.node("Add", [out, g.node("Mul", [u, g.const(0.0)])])
    g.output(out, [1, rec["b"]], "out")
    return g


def write(rec, folder):
    shards = start_case(folder, spec(rec).model())
    p = Program(rec).build()
    save(p.g.model(), os.path.join(shards, "program.onnx"))
    rep = ["Replicate()"] * len(p.axes)

    def pl(tp):
        return rep[:-1] + [tp]
    plan = {"format": "onnx-tv.plan/1", "world_size": rec["n"] * rec["dp"],
            "mesh": {"axes": p.axes, "shape": [rec["dp"], rec["n"]][-len(p.axes):]},
            "programs": [{"file": "program.onnx", "ranks": {}}],
            "bindings": [dict(ranks={}, value="x", spec="x", placements=pl("Shard(0)")),
                         dict(ranks={}, value="u", spec="u", placements=pl("Replicate()")),
                         dict(ranks={}, value="out", spec="out", placements=pl("Replicate()"))]}
    with open(os.path.join(shards, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1, sort_keys=True)
    return folder
