"""The `route` family: Mixture-of-Experts routing by TopK (selections, docs/design.md section 4)
with experts split over ranks that each route every token, as TrainVerify's MoE plans split
experts inside a group.

Spec: scores = x @ Wr over E experts (or a softmax of them first); (vals, idx) = TopK(scores, k);
the combine weights are vals, softmax(vals) or vals / sum(vals); gates[t, e] = sum_j
OneHot(idx)[t, j, e] w[t, j] (or the weights scattered at idx by ScatterElements, or picked by
comparing idx with each expert's position; the scatter adds, as the slots are distinct); expert e is x @ W[e] (linear) or relu(x @ W[e]);
y = sum_e gates[:, e] * expert_e(x). An ArgMax variant routes to one expert (k = 1).
Plans: n ranks hold E/n experts each (W sliced), route every token, slice their experts' gate
columns and all-reduce their partial y (dispatch `replicated`); or each rank holds t tokens of
the spec's n t, routes them, and sends expert e the tokens routed to it by AllToAll in a buffer
of fixed capacity, a token's place being an exclusive CumSum of the routing mask (GShard's
dispatch, `a2a`), or in a padded buffer with a slot per token (`padded`: the expert runs on the
mask times the token, zero where the routing sends it elsewhere); the outputs come back by
AllToAll and the gates combine them; or each rank sorts its (token, slot) pairs by expert
(`argsort`, torchtitan's and Megatron-Core's dispatch: TopK over the keys expert * pairs +
pair), gathers the rows into per-expert buffers of one slot per token by the experts' counts,
and unpermutes the returned rows by the argsort of the order.
The ranks' TopK may be unsorted (sorted=0, the order left to the runtime), which every form
above is indifferent to.
Bugs: offset (one rank's gate columns one to the left; a2a: the capacity one below the rank's
token count, which drops a token where two route alike; padded: the mask of the first slot
only, so every token loses its other experts; argsort: the combine permutes by the order
again instead of its inverse, torchtitan #1237, harmless where the order is an involution), weights (the combine weights are the
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
               argmax=r.random() < 0.2, bug=r.choice(BUGS), bad_rank=r.randrange(n),
               dispatch=r.choice(["replicated", "replicated", "a2a"]), unsorted=r.random() < 0.3)
    if rec["dispatch"] == "a2a" and r.random() < 0.4:
        rec["dispatch"] = r.choice(["padded", "argsort"])
    if rec["dispatch"] == "argsort":  # keeps the pairs per rank, and so the proofs, short
        rec.update(n=2, t=min(rec["t"], 2), k=min(k, 2), bad_rank=rec["bad_rank"] % 2)
    if rec["dispatch"] == "a2a" and rec["n"] > 2:  # keeps 4-rank capacity proofs short
        rec["t"] = min(rec["t"], 2)
        rec["unsorted"] = False  # (beyond the residue's budget with 8 experts)
    if rec["dispatch"] == "a2a" and rec["bug"] == "offset" and rec["t"] == 1:
        rec["bug"] = None  # a capacity of 0 is no plan
    if rec["dispatch"] == "padded" and rec["bug"] == "offset" and rec["k"] == 1:
        rec["bug"] = None  # one slot: its mask is the whole mask
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
                         ("argmax", False), ("dispatch", "replicated"), ("unsorted", False)):
        if rec.get(key, smaller) != smaller:
            c = dict(rec, **{key: smaller})
            if c["dispatch"] == "padded" and c["bug"] == "offset" and c["k"] == 1:
                continue
            c["bad_rank"] = min(c["bad_rank"], c["n"] - 1)
            if c["k"] > c["n"] * c["per"] or (c["bug"] == "k_minus" and c["k"] == 1):
                continue
            if c["dispatch"] == "a2a" and c["bug"] == "offset" and c["t"] == 1:
                continue
            yield c


def issue_class(rec):
    return None


def cost(rec):
    return (rec["n"], rec["n"] * rec["per"] * rec["t"] * rec["h"])


def gates(rec, g, k, largest=True, raw_weights=False, unsorted=False):
    """gates[t, E] of the routing."""
    e = rec["n"] * rec["per"]
    s = g.node("MatMul", ["x", "Wr"])
    if rec["probs"]:
        s = g.node("Softmax", [s], axis=-1)
    if rec["argmax"]:
        idx = g.node("ArgMax" if largest else "ArgMin", [s], axis=-1, keepdims=1)
        vals = g.node("GatherElements", [s, idx], axis=-1)
    else:
        vals, idx = g.node("TopK", [s, g.ints([k])], n_out=2, axis=-1, largest=int(largest),
                           **({"sorted": 0} if unsorted else {}))
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


def inputs(rec, g, experts, tokens=None):
    g.input("x", [tokens or rec["t"], rec["h"]])
    g.input("Wr", [rec["h"], rec["n"] * rec["per"]])
    g.input("W", [experts, rec["h"], rec["h"]])


def tokens(rec):
    return rec["t"] * (rec["n"] if rec["dispatch"] in ("a2a", "padded", "argsort") else 1)


def spec(rec):
    g = Builder("spec")
    inputs(rec, g, rec["n"] * rec["per"], tokens(rec))
    g.output(combine(rec, g, gates(rec, g, rec["k"]), "W"), [tokens(rec), rec["h"]], "y")
    return g.model()


def dispatched(rec, g, gate, k, capacity, first_slot_only=False):
    """GShard's dispatch of this rank's tokens: places by an exclusive CumSum of the routing
    mask, buffers [E, capacity, h] by AllToAll to the experts' ranks and back. Padded: slot c of
    every expert's buffer is token c's (capacity = the rank's tokens)."""
    e = rec["n"] * rec["per"]
    idx = g.node("TopK", [g.node("MatMul", ["x", "Wr"]) if not rec["probs"] else
                          g.node("Softmax", [g.node("MatMul", ["x", "Wr"])], axis=-1),
                          g.ints([k])], n_out=2, axis=-1,
                 **({"sorted": 0} if rec.get("unsorted") else {}))[1]
    if first_slot_only:
        idx = g.node("Slice", [idx, g.ints([0]), g.ints([1]), g.ints([1])])
    hot = g.node("OneHot", [idx, g.ints([e]), g.const([0.0, 1.0])], axis=-1)
    mask = g.node("ReduceSum", [hot, g.ints([1])], keepdims=0)  # [t, E]
    if rec["dispatch"] == "padded":
        t = rec["t"]
        slot = g.const([[[1.0 if i == c else 0.0 for c in range(t)]] for i in range(t)])
    else:
        place = g.node("Cast", [g.node("CumSum", [mask, g.ints(0)], exclusive=1)],
                       to=TensorProto.INT64)
        slot = g.node("OneHot", [place, g.ints([capacity]), g.const([0.0, 1.0])], axis=-1)
    disp = g.node("Mul", [g.node("Unsqueeze", [mask, g.ints([-1])]), slot])  # [t, E, C]
    buf = g.node("Einsum", [disp, "x"], equation="tec,th->ech")
    group = list(range(rec["n"]))
    got = g.node("AllToAll", [buf], domain="onnx_tv", group=group, split_axis=0, concat_axis=1)
    out = g.node("MatMul", [got, "W"])
    if rec["act"] == "relu":
        out = g.node("Relu", [out])
    back = g.node("AllToAll", [out], domain="onnx_tv", group=group, split_axis=1, concat_axis=0)
    weights = g.node("Mul", [g.node("Unsqueeze", [gate, g.ints([-1])]), disp])
    return g.node("Einsum", [weights, back], equation="tec,ech->th")


def argsorted(rec, g, gate, k, twice=False):
    """The argsort dispatch of this rank's pairs p = token * k + slot: sorted by expert (TopK,
    smallest first, of expert * pairs + p), gathered into buffers [E, t, h] (slot c of expert
    e holds sorted pair start[e] + c below the expert's count, else a zero row), AllToAll to the
    experts' ranks and back, each sorted pair read from its slot, unpermuted by the argsort of
    the order, weighted by its gate and added into its token (index_add)."""
    e, t, h = rec["n"] * rec["per"], rec["t"], rec["h"]
    pairs = t * k
    scores = g.node("MatMul", ["x", "Wr"])
    if rec["probs"]:
        scores = g.node("Softmax", [scores], axis=-1)
    idx = g.node("TopK", [scores, g.ints([k])], n_out=2, axis=-1,
                 **({"sorted": 0} if rec.get("unsorted") else {}))[1]
    experts = g.node("Reshape", [idx, g.ints([pairs])])
    ids = g.ints(list(range(pairs)))
    key = g.node("Add", [g.node("Mul", [experts, g.ints(pairs)]), ids])
    order = g.node("TopK", [key, g.ints([pairs])], n_out=2, axis=-1, largest=0, sorted=1)[1]
    token_of = g.ints([p // k for p in range(pairs)])
    rows = g.node("Gather", ["x", g.node("Gather", [token_of, order], axis=0)], axis=0)
    hot = g.node("OneHot", [idx, g.ints([e]), g.const([0.0, 1.0])], axis=-1)
    counts_f = g.node("ReduceSum", [g.node("ReduceSum", [hot, g.ints([1])], keepdims=0),
                                    g.ints([0])], keepdims=0)
    start = g.node("Cast", [g.node("CumSum", [counts_f, g.ints(0)], exclusive=1)],
                   to=TensorProto.INT64)
    counts = g.node("Cast", [counts_f], to=TensorProto.INT64)
    places = g.ints([list(range(t))])
    held = g.node("Add", [g.node("Reshape", [start, g.ints([e, 1])]), places])
    filled = g.node("Less", [places, g.node("Reshape", [counts, g.ints([e, 1])])])
    source = g.node("Reshape", [g.node("Where", [filled, held, g.ints(pairs)]), g.ints([e * t])])
    padded = g.node("Concat", [rows, g.const([[0.0] * h])], axis=0)
    buf = g.node("Reshape", [g.node("Gather", [padded, source], axis=0), g.ints([e, t, h])])
    group = list(range(rec["n"]))
    got = g.node("AllToAll", [buf], domain="onnx_tv", group=group, split_axis=0, concat_axis=1)
    out = g.node("MatMul", [got, "W"])
    if rec["act"] == "relu":
        out = g.node("Relu", [out])
    back = g.node("AllToAll", [out], domain="onnx_tv", group=group, split_axis=1, concat_axis=0)
    sorted_expert = g.node("Gather", [experts, order], axis=0)
    place = g.node("Sub", [ids, g.node("Gather", [start, sorted_expert], axis=0)])
    slot = g.node("Add", [g.node("Mul", [sorted_expert, g.ints(t)]), place])
    ys = g.node("Gather", [g.node("Reshape", [back, g.ints([e * t, h])]), slot], axis=0)
    inverse = g.node("TopK", [order, g.ints([pairs])], n_out=2, axis=-1, largest=0, sorted=1)[1]
    by_pair = g.node("Gather", [ys, order if twice else inverse], axis=0)
    w = g.node("Reshape", [g.node("GatherElements", [gate, idx], axis=-1), g.ints([pairs, 1])])
    index = g.node("Expand", [g.node("Unsqueeze", [token_of, g.ints([-1])]), g.ints([pairs, h])])
    zeros = g.const([[0.0] * h for _ in range(t)])
    return g.node("ScatterElements", [zeros, index, g.node("Mul", [by_pair, w])], axis=0,
                  reduction="add")


def rank(rec, r):
    per, bad = rec["per"], r == rec["bad_rank"]
    g = Builder("rank%d" % r)
    inputs(rec, g, per)
    k = rec["k"] - 1 if rec["bug"] == "k_minus" else rec["k"]
    gate = gates(rec, g, k, largest=not (rec["bug"] == "smallest" and bad),
                 raw_weights=rec["bug"] == "weights", unsorted=rec.get("unsorted", False))
    if rec["dispatch"] in ("a2a", "padded", "argsort"):
        t = rec["t"]
        padded = rec["dispatch"] == "padded"
        capacity = t - 1 if rec["bug"] == "offset" and not padded else t
        lossy = padded and rec["bug"] == "offset" and bad
        if rec["dispatch"] == "argsort":
            y = argsorted(rec, g, gate, k, twice=rec["bug"] == "offset" and bad)
        else:
            y = dispatched(rec, g, gate, k, capacity, first_slot_only=lossy)
        g.output(y, [t, rec["h"]], "y")
        mine = [[r * t, r * t + t], None]
        binds = [{"value": "x", "spec": "x", "slice": mine}, {"value": "Wr", "spec": "Wr"},
                 {"value": "W", "spec": "W", "slice": [[r * per, r * per + per], None, None]},
                 {"value": "y", "spec": "y", "slice": mine}]
        return g.model({"onnx_tv.bindings": json.dumps(binds)})
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
