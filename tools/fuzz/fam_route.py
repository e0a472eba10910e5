"""The `route` family: Mixture-of-Experts routing by TopK (selections, docs/design.md section 4)
with experts split over ranks that each route every token, as TrainVerify's MoE plans split
experts inside a group.

Spec: scores = x @ Wr over E experts (or a softmax of them first); (vals, idx) = TopK(scores, k);
the combine weights are vals, softmax(vals) or vals / sum(vals); gates[t, e] = sum_j
OneHot(idx)[t, j, e] w[t, j] (or the weights scattered at idx by ScatterElements, or picked by
comparing idx with each expert's position; the scatter adds, as the slots are distinct); expert e is x @ W[e] (linear) or relu(x @ W[e]);
y = sum_e gates[:, e] * expert_e(x). An ArgMax variant routes to one expert (k = 1).
Plans: n ranks hold E/n experts each (W sliced), route every token, slice their experts' gate
columns and all-reduce their partial y.
Bugs: offset (one rank's gate columns one to the left), weights (the combine weights are the
raw vals where the spec normalises, or the reverse), smallest (one rank selects the smallest
k), k_minus (the ranks route to k - 1 experts).
"""
import json
import os
import random

from onnx import TensorProto, helper

from .onnxb import Builder, save, start_case

BUGS = [None, None, None, "offset", "weights", "smallest", "k_minus"]


def generate(seed):
    r = random.Random(seed * 53 + 5)
    n = r.choice([2, 2, 4])
    k = r.choice([1, 2, 2, 3])
    rec = dict(family="route", seed=seed, n=n, per=r.choice([1, 2]), k=k, t=r.choice([1, 2, 3]),
               h=r.choice([1, 2]), probs=r.choice([False, True]),
               weights=r.choice(["vals", "softmax", "normalised"]),
               gates=r.choice(["one_hot", "scatter", "compare"]), act=r.choice(["linear", "relu"]),
               argmax=r.random() < 0.2, bug=r.choice(BUGS), bad_rank=r.randrange(n))
    if rec["argmax"]:
        rec.update(k=1, weights="vals")
    if rec["k"] > rec["n"] * rec["per"]:
        rec["k"] = rec["n"] * rec["per"]
    if rec["bug"] == "k_minus" and rec["k"] == 1:
        rec["bug"] = None
    return rec


def candidates(rec):
    for key, smaller in (("n", 2), ("per", 1), ("k", 1), ("t", 1), ("h", 1), ("probs", False),
                         ("weights", "vals"), ("gates", "one_hot"), ("act", "linear"),
                         ("argmax", False)):
        if rec[key] != smaller:
            c = dict(rec, **{key: smaller})
            c["bad_rank"] = min(c["bad_rank"], c["n"] - 1)
            if c["k"] > c["n"] * c["per"] or (c["bug"] == "k_minus" and c["k"] == 1):
                continue
            yield c


def issue_class(rec):
    return None


def cost(rec):
    return (rec["n"], rec["n"] * rec["per"] * rec["t"] * rec["h"])


def gates(rec, g, k, largest=True, raw_weights=False):
    """gates[t, E] of the routing."""
    e = rec["n"] * rec["per"]
    s = g.node("MatMul", ["x", "Wr"])
    if rec["probs"]:
        s = g.node("Softmax", [s], axis=-1)
    if rec["argmax"]:
        idx = g.node("ArgMax" if largest else "ArgMin", [s], axis=-1, keepdims=1)
        vals = g.node("GatherElements", [s, idx], axis=-1)
    else:
        vals, idx = g.node("TopK", [s, g.ints([k])], n_out=2, axis=-1, largest=int(largest))
    form = rec["weights"]
    if raw_weights:
        form = "vals" if form != "vals" else "softmax"
    w = vals
    if form == "softmax":
        w = g.node("Softmax", [vals], axis=-1)
    elif form == "normalised":
        w = g.node("Div", [vals, g.node("ReduceSum", [vals, g.ints([-1])], keepdims=1)])
    if rec["gates"] == "scatter":
        zeros = g.node("Mul", [s, g.const(0.0)])
        return g.node("ScatterElements", [zeros, idx, w], axis=-1, reduction="add")
    if rec["gates"] == "compare":  # [idx == e] for each expert position e, times w, summed
        experts = g.ints([[list(range(e))]])
        hit = g.node("Equal", [g.node("Unsqueeze", [idx, g.ints([-1])]), experts])
        hot = g.node("Cast", [hit], to=TensorProto.DOUBLE)
    else:
        hot = g.node("OneHot", [idx, g.ints([e]), g.const([0.0, 1.0])], axis=-1)
    return g.node("ReduceSum", [g.node("Mul", [hot, g.node("Unsqueeze", [w, g.ints([-1])])]),
                                g.ints([1])], keepdims=0)


def combine(rec, g, gate, w):
    """sum over the experts of w (in order) of gate[:, e] * expert_e(x)."""
    out = g.node("MatMul", [g.node("Unsqueeze", ["x", g.ints([0])]), w])  # [e, t, h]
    if rec["act"] == "relu":
        out = g.node("Relu", [out])
    scaled = g.node("Mul", [g.node("Unsqueeze", [g.node("Transpose", [gate], perm=[1, 0]),
                                                 g.ints([-1])]), out])
    return g.node("ReduceSum", [scaled, g.ints([0])], keepdims=0)


def inputs(rec, g, experts):
    g.input("x", [rec["t"], rec["h"]])
    g.input("Wr", [rec["h"], rec["n"] * rec["per"]])
    g.input("W", [experts, rec["h"], rec["h"]])


def spec(rec):
    g = Builder("spec")
    inputs(rec, g, rec["n"] * rec["per"])
    g.output(combine(rec, g, gates(rec, g, rec["k"]), "W"), [rec["t"], rec["h"]], "y")
    return g.model()


def rank(rec, r):
    per, bad = rec["per"], r == rec["bad_rank"]
    g = Builder("rank%d" % r)
    inputs(rec, g, per)
    k = rec["k"] - 1 if rec["bug"] == "k_minus" else rec["k"]
    gate = gates(rec, g, k, largest=not (rec["bug"] == "smallest" and bad),
                 raw_weights=rec["bug"] == "weights")
    start = r * per - (1 if rec["bug"] == "offset" and bad and r > 0 else 0)
    start += 1 if rec["bug"] == "offset" and bad and r == 0 else 0
    local = g.node("Slice", [gate, g.ints([start]), g.ints([start + per]), g.ints([1])])
    y = g.node("AllReduce", [combine(rec, g, local, "W")], domain="onnx_tv",
               group=list(range(rec["n"])))
    g.output(y, [rec["t"], rec["h"]], "y")
    binds = [{"value": "x", "spec": "x"}, {"value": "Wr", "spec": "Wr"},
             {"value": "W", "spec": "W", "slice": [[r * per, r * per + per], None, None]},
             {"value": "y", "spec": "y"}]
    return g.model({"onnx_tv.bindings": json.dumps(binds)})


def write(rec, folder):
    shards = start_case(folder, spec(rec))
    for r in range(rec["n"]):
        save(rank(rec, r), os.path.join(shards, "rank%d.onnx" % r))
    return folder
