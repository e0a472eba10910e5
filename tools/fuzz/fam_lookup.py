"""The `lookup` family: embedding lookups by int64 token ids (integer inputs modeled by their
indicators, plan-format section 1), the way exporters write data- and vocabulary-parallel
embeddings.

Spec: e = Gather(W, ids) with ids[B, S] int64 in [0, V) and W[V, H]; out = e @ P, then a tail:
none, a sum over the tokens, or a scale by a constant.
Plans (one rank file each, bindings in metadata):
  dp     n ranks split the rows of ids; W and P whole.
  vocab  n ranks each hold V/n rows of W; ids whole. A rank masks the ids outside its rows
         (Less / GreaterOrEqual / Or, or GreaterOrEqual / Less / And / Not), shifts the others,
         looks them up, zeroes the masked rows (Where, or Mul by a Cast of the mask) and
         all-reduces.
Bugs: offset (one vocab rank's first row off by one), unmasked (a vocab rank adds the row it
looks up for ids it does not hold), reversed (one dp rank looks up V - 1 - id).
"""
import json
import os
import random

from onnx import TensorProto, helper

from .onnxb import Builder, save, start_case

BUGS = {"dp": [None, None, "reversed"], "vocab": [None, None, "offset", "unmasked"]}


def generate(seed):
    r = random.Random(seed * 31 + 7)
    plan = r.choice(["dp", "vocab", "vocab"])
    n = r.choice([2, 2, 3, 4])
    rec = dict(family="lookup", seed=seed, plan=plan, n=n, b=r.choice([1, 2]), s=r.choice([1, 2, 3]),
               v=r.choice([2, 3, 4]), h=r.choice([1, 2, 3]), o=r.choice([1, 2]),
               tail=r.choice(["none", "sum", "scale"]), mask=r.choice(["or", "and_not"]),
               zero=r.choice(["where", "mul"]), bug=r.choice(BUGS[plan]), bad_rank=r.randrange(n))
    return rec


def candidates(rec):
    for key, smaller in (("n", 2), ("b", 1), ("s", 1), ("v", 2), ("h", 1), ("o", 1),
                         ("tail", "none"), ("mask", "or"), ("zero", "where")):
        if rec[key] != smaller:
            c = dict(rec, **{key: smaller})
            c["bad_rank"] = min(c["bad_rank"], c["n"] - 1)
            yield c


def issue_class(rec):
    return None


def cost(rec):
    return (rec["n"], rec["b"] * rec["s"] * rec["v"] * rec["h"])


def sizes(rec):
    rows = rec["b"] * (rec["n"] if rec["plan"] == "dp" else 1)
    vocab = rec["v"] * (rec["n"] if rec["plan"] == "vocab" else 1)
    return rows, rec["s"], vocab, rec["h"], rec["o"]


def int_input(g, name, shape):
    g.inputs.append(helper.make_tensor_value_info(name, TensorProto.INT64, list(shape)))
    return name


def int_const(g, value):
    name = g.fresh("k")
    g.nodes.append(helper.make_node("Constant", [], [name], name=g.fresh("/Constant"),
                                    value=helper.make_tensor(name + "_v", TensorProto.INT64, [], [value])))
    return name


def tail(rec, g, e, rows):
    """out = e @ P and the recipe's tail; the output's name and shape."""
    _, s, _, _, o = sizes(rec)
    y = g.node("MatMul", [e, "P"])
    if rec["tail"] == "sum":
        return g.node("ReduceSum", [y, g.ints([1])], keepdims=0), [rows, o]
    if rec["tail"] == "scale":
        return g.node("Mul", [y, g.const(0.25, "float32")]), [rows, s, o]
    return y, [rows, s, o]


def spec(rec):
    rows, s, vocab, h, o = sizes(rec)
    g = Builder("spec")
    int_input(g, "ids", [rows, s])
    g.input("W", [vocab, h])
    g.input("P", [h, o])
    out, shape = tail(rec, g, g.node("Gather", ["W", "ids"]), rows)
    g.output(out, shape, "out")
    return g.model()


def dp_rank(rec, r):
    rows, s, vocab, h, o = sizes(rec)
    b = rec["b"]
    g = Builder("rank%d" % r)
    ids = int_input(g, "ids", [b, s])
    g.input("W", [vocab, h])
    g.input("P", [h, o])
    if rec["bug"] == "reversed" and r == rec["bad_rank"]:
        ids = g.node("Sub", [int_const(g, vocab - 1), ids])
    out, shape = tail(rec, g, g.node("Gather", ["W", ids]), b)
    g.output(out, shape, "out")
    rows_of = [[r * b, r * b + b]] + [None] * (len(shape) - 1)
    binds = [{"value": "ids", "spec": "ids", "slice": [[r * b, r * b + b], None]},
             {"value": "W", "spec": "W"}, {"value": "P", "spec": "P"},
             {"value": "out", "spec": "out", "slice": rows_of}]
    return g.model({"onnx_tv.bindings": json.dumps(binds)})


def vocab_rank(rec, r):
    rows, s, vocab, h, o = sizes(rec)
    v = rec["v"]
    bad = r == rec["bad_rank"]
    start = r * v + (1 if rec["bug"] == "offset" and bad and r == 0 else
                     -1 if rec["bug"] == "offset" and bad else 0)
    g = Builder("rank%d" % r)
    int_input(g, "ids", [rows, s])
    g.input("W_local", [v, h])
    g.input("P", [h, o])
    lo, hi = int_const(g, start), int_const(g, start + v)
    if rec["mask"] == "or":
        outside = g.node("Or", [g.node("Less", ["ids", lo]), g.node("GreaterOrEqual", ["ids", hi])])
    else:
        inside = g.node("And", [g.node("GreaterOrEqual", ["ids", lo]), g.node("Less", ["ids", hi])])
        outside = g.node("Not", [inside])
    local = g.node("Where", [outside, int_const(g, 0), g.node("Sub", ["ids", lo])])
    e = g.node("Gather", ["W_local", local])
    if not (rec["bug"] == "unmasked" and bad):
        mask = g.node("Unsqueeze", [outside, g.ints([-1])])
        if rec["zero"] == "where":
            e = g.node("Where", [mask, g.const(0.0), e])
        else:
            e = g.node("Mul", [e, g.node("Cast", [g.node("Not", [mask])], to=TensorProto.DOUBLE)])
    e = g.node("AllReduce", [e], domain="onnx_tv", group=list(range(rec["n"])))
    out, shape = tail(rec, g, e, rows)
    g.output(out, shape, "out")
    binds = [{"value": "ids", "spec": "ids"},
             {"value": "W_local", "spec": "W", "slice": [[r * v, r * v + v], None]},
             {"value": "P", "spec": "P"}, {"value": "out", "spec": "out"}]
    return g.model({"onnx_tv.bindings": json.dumps(binds)})


def write(rec, folder):
    shards = start_case(folder, spec(rec))
    make = dp_rank if rec["plan"] == "dp" else vocab_rank
    for r in range(rec["n"]):
        save(make(rec, r), os.path.join(shards, "rank%d.onnx" % r))
    return folder
