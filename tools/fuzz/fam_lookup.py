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

With loss "ce" the out = e @ P are logits over O classes and the step trains on int64 labels:
loss = -sum(GatherElements(LogSoftmax(out), labels)) and grad_W, the embedding gradient,
ScatterND-added from (Softmax(out) - OneHot(labels)) @ P^T at the ids. The ranks pick the
label's log-probability by GatherElements or by a sum with OneHot, make the one-hot by OneHot
or a ScatterElements of ones, and scatter grad_W by ScatterND or by ScatterElements-add at the
ids expanded along the hidden axis. dp ranks add their losses (a partial sum) and all-reduce
grad_W; vocab ranks hold the whole loss and scatter only their own ids' rows.
More bugs: labels_reversed (one rank reads class O - 1 - label), grad_unreduced (grad_W not
all-reduced), grad_unmasked (a vocab rank scatters every token's row).

Plan "positions": positions from a Range used as indices, with a rank's offset written as the
Range's start or as a literal added to it (see positions_rank).
"""
import json
import os
import random

from onnx import TensorProto, helper

from .onnxb import Builder, save, start_case

BUGS = {"dp": [None, None, "reversed"], "vocab": [None, None, "offset", "unmasked"]}
CE_BUGS = {"dp": [None, None, "labels_reversed", "grad_unreduced"],
           "vocab": [None, None, "offset", "labels_reversed", "grad_unmasked"]}


def generate(seed):
    r = random.Random(seed * 31 + 7)
    plan = r.choice(["dp", "vocab", "vocab", "positions"])
    if plan == "positions":
        return dict(family="lookup", seed=seed, plan=plan, n=r.choice([2, 3]), rows=r.choice([65, 80]),
                    h=r.choice([1, 2]), op=r.choice(["gather_elements", "gather"]),
                    offset=r.choice(["start", "literal"]),
                    bug=r.choice([None, None, "literal_off", "no_offset"]), bad_rank=1)
    n = r.choice([2, 2, 3, 4])
    rec = dict(family="lookup", seed=seed, plan=plan, n=n, b=r.choice([1, 2]), s=r.choice([1, 2, 3]),
               v=r.choice([2, 3, 4]), h=r.choice([1, 2, 3]), o=r.choice([1, 2]),
               tail=r.choice(["none", "sum", "scale"]), mask=r.choice(["or", "and_not"]),
               zero=r.choice(["where", "mul"]), bug=r.choice(BUGS[plan]), bad_rank=r.randrange(n))
    if r.random() < 0.4:  # a training step on labels instead of a tail
        rec.update(loss="ce", o=r.choice([2, 3]), tail="none", bug=r.choice(CE_BUGS[plan]),
                   pick=r.choice(["gather_elements", "one_hot"]),
                   hot=r.choice(["one_hot", "scatter"]), scatter=r.choice(["nd", "elements"]))
    return rec


def candidates(rec):
    if rec["plan"] == "positions":
        for key, smaller in (("n", 2), ("rows", 65), ("h", 1), ("op", "gather_elements"),
                             ("offset", "start")):
            if rec[key] != smaller:
                yield dict(rec, **{key: smaller})
        return
    ce = rec.get("loss") == "ce"
    for key, smaller in (("n", 2), ("b", 1), ("s", 1), ("v", 2), ("h", 1), ("o", 2 if ce else 1),
                         ("tail", "none"), ("mask", "or"), ("zero", "where"),
                         ("pick", "gather_elements"), ("hot", "one_hot"), ("scatter", "nd")):
        if key in rec and rec[key] != smaller:
            c = dict(rec, **{key: smaller})
            c["bad_rank"] = min(c["bad_rank"], c["n"] - 1)
            yield c


def issue_class(rec):
    return None


def cost(rec):
    if rec["plan"] == "positions":
        return (rec["n"], rec["rows"] * rec["h"])
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
    if rec.get("loss") == "ce":
        int_input(g, "labels", [rows, s])
    g.input("W", [vocab, h])
    g.input("P", [h, o])
    e = g.node("Gather", ["W", "ids"])
    if rec.get("loss") == "ce":
        logits = g.node("MatMul", [e, "P"])
        g.output(ce_loss(g, logits, "labels", "gather_elements"), [], "loss")
        de = ce_backward(g, logits, "labels", "one_hot", o)
        g.output(scatter_rows(g, "nd", "ids", de, vocab, h, [rows, s]), [vocab, h], "grad_W")
        return g.model()
    out, shape = tail(rec, g, e, rows)
    g.output(out, shape, "out")
    return g.model()


# ---- the cross-entropy step (loss "ce") ----

def ce_loss(g, logits, labels, pick):
    """-sum over tokens of log p[label]."""
    logp = g.node("LogSoftmax", [logits], axis=-1)
    if pick == "gather_elements":
        picked = g.node("GatherElements", [logp, g.node("Unsqueeze", [labels, g.ints([-1])])], axis=-1)
    else:
        o = g.node("Shape", [logits], start=-1)
        hot = g.node("OneHot", [labels, o, g.const([0.0, 1.0])], axis=-1)
        picked = g.node("Mul", [hot, logp])
    return g.node("Neg", [g.node("ReduceSum", [picked], keepdims=0)])


def ce_backward(g, logits, labels, hot_form, o):
    """d loss / d e: (Softmax - one-hot of the labels) @ P^T."""
    if hot_form == "one_hot":
        hot = g.node("OneHot", [labels, g.ints([o]), g.const([0.0, 1.0])], axis=-1)
    else:  # as torch's nll backward: ones scattered into zeros at the labels
        zeros = g.node("Mul", [logits, g.const(0.0)])
        lab = g.node("Unsqueeze", [labels, g.ints([-1])])
        ones = g.node("Add", [g.node("Mul", [g.node("Cast", [lab], to=TensorProto.DOUBLE), g.const(0.0)]),
                              g.const(1.0)])
        hot = g.node("ScatterElements", [zeros, lab, ones], axis=-1)
    d = g.node("Sub", [g.node("Softmax", [logits], axis=-1), hot])
    return g.node("MatMul", [d, g.node("Transpose", ["P"], perm=[1, 0])])


def scatter_rows(g, form, ids, de, rows_out, h, token_shape):
    """Every token's row of `de` added into row ids[t] of a zero [rows_out, h] table."""
    zeros = g.node("ConstantOfShape", [g.ints([rows_out, h])],
                   value=helper.make_tensor("z", TensorProto.DOUBLE, [1], [0.0]))
    if form == "nd":
        return g.node("ScatterND", [zeros, g.node("Unsqueeze", [ids, g.ints([-1])]), de], reduction="add")
    n = token_shape[0] * token_shape[1]
    flat = g.node("Expand", [g.node("Reshape", [ids, g.ints([n, 1])]), g.ints([n, h])])
    return g.node("ScatterElements", [zeros, flat, g.node("Reshape", [de, g.ints([n, h])])],
                  axis=0, reduction="add")


def dp_rank(rec, r):
    rows, s, vocab, h, o = sizes(rec)
    b = rec["b"]
    g = Builder("rank%d" % r)
    ids = int_input(g, "ids", [b, s])
    g.input("W", [vocab, h])
    g.input("P", [h, o])
    if rec["bug"] == "reversed" and r == rec["bad_rank"]:
        ids = g.node("Sub", [int_const(g, vocab - 1), ids])
    if rec.get("loss") == "ce":
        return ce_dp_rank(rec, r, g, ids)
    out, shape = tail(rec, g, g.node("Gather", ["W", ids]), b)
    g.output(out, shape, "out")
    rows_of = [[r * b, r * b + b]] + [None] * (len(shape) - 1)
    binds = [{"value": "ids", "spec": "ids", "slice": [[r * b, r * b + b], None]},
             {"value": "W", "spec": "W"}, {"value": "P", "spec": "P"},
             {"value": "out", "spec": "out", "slice": rows_of}]
    return g.model({"onnx_tv.bindings": json.dumps(binds)})


def rank_labels(rec, r, g, shape):
    labels = int_input(g, "labels", shape)
    if rec["bug"] == "labels_reversed" and r == rec["bad_rank"]:
        labels = g.node("Sub", [int_const(g, rec["o"] - 1), labels])
    return labels


def ce_dp_rank(rec, r, g, ids):
    rows, s, vocab, h, o = sizes(rec)
    b = rec["b"]
    labels = rank_labels(rec, r, g, [b, s])
    logits = g.node("MatMul", [g.node("Gather", ["W", ids]), "P"])
    g.output(ce_loss(g, logits, labels, rec["pick"]), [], "loss_part")
    dw = scatter_rows(g, rec["scatter"], ids, ce_backward(g, logits, labels, rec["hot"], o), vocab, h, [b, s])
    if rec["bug"] != "grad_unreduced":
        dw = g.node("AllReduce", [dw], domain="onnx_tv", group=list(range(rec["n"])))
    g.output(dw, [vocab, h], "dW")
    region = [[r * b, r * b + b], None]
    binds = [{"value": "ids", "spec": "ids", "slice": region},
             {"value": "labels", "spec": "labels", "slice": region},
             {"value": "W", "spec": "W"}, {"value": "P", "spec": "P"},
             {"value": "loss_part", "spec": "loss", "partial": "sum"},
             {"value": "dW", "spec": "grad_W"}]
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
    if rec.get("loss") == "ce":
        return ce_vocab_rank(rec, r, g, e, outside, local)
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


def ce_vocab_rank(rec, r, g, e, outside, local):
    rows, s, vocab, h, o = sizes(rec)
    v = rec["v"]
    bad = r == rec["bad_rank"]
    labels = rank_labels(rec, r, g, [rows, s])
    mask = g.node("Unsqueeze", [outside, g.ints([-1])])
    e = g.node("AllReduce", [g.node("Where", [mask, g.const(0.0), e])], domain="onnx_tv",
               group=list(range(rec["n"])))
    logits = g.node("MatMul", [e, "P"])
    g.output(ce_loss(g, logits, labels, rec["pick"]), [], "loss")
    de = ce_backward(g, logits, labels, rec["hot"], o)
    if not (rec["bug"] == "grad_unmasked" and bad):
        de = g.node("Where", [mask, g.const(0.0), de])
    g.output(scatter_rows(g, rec["scatter"], local, de, v, h, [rows, s]), [v, h], "dW_local")
    binds = [{"value": "ids", "spec": "ids"}, {"value": "labels", "spec": "labels"},
             {"value": "W_local", "spec": "W", "slice": [[r * v, r * v + v], None]},
             {"value": "P", "spec": "P"}, {"value": "loss", "spec": "loss"},
             {"value": "dW_local", "spec": "grad_W", "slice": [[r * v, r * v + v], None]}]
    return g.model({"onnx_tv.bindings": json.dumps(binds)})


# ---- positions used as indices (plan "positions") ----
# Each rank holds `rows` rows of x[T, T] (or of the lookup's output) and makes its positions
# as Range(start, start + rows) or as Range(0, rows) + start, the offset a literal; more than
# 64 rows, so they are not small tensors held exact but a Range that shape reduction meets.
# The spec reads x's diagonal (GatherElements) or the rows of W[T, h] (Gather) at Range(0, T).
# Bugs: literal_off (rank 1's literal is 2, an offset written for blocks of 2 rows: right only
# on an instance reduced to 2 rows a rank), no_offset (every rank starts at 0).

def positions_nodes(g, rec, start, count, literal, data):
    if literal is None:
        pos = g.node("Range", [g.ints(start), g.ints(start + count), g.ints(1)])
    else:
        pos = g.node("Add", [g.node("Range", [g.ints(0), g.ints(count), g.ints(1)]), g.ints(literal)])
    if rec["op"] == "gather":
        return g.node("Gather", [data, pos])
    return g.node("GatherElements", [data, g.node("Unsqueeze", [pos, g.ints([1])])], axis=1)


def positions_shapes(rec, count):
    total = rec["n"] * rec["rows"]
    data = [total, rec["h"]] if rec["op"] == "gather" else [count, total]
    out = [count, rec["h"]] if rec["op"] == "gather" else [count, 1]
    return data, out


def positions_spec(rec):
    total = rec["n"] * rec["rows"]
    g = Builder("spec")
    data, out = positions_shapes(rec, total)
    g.input("x", data)
    g.output(positions_nodes(g, rec, 0, total, None, "x"), out, "y")
    return g.model()


def positions_rank(rec, r):
    b = rec["rows"]
    total = rec["n"] * b
    g = Builder("rank%d" % r)
    data, out = positions_shapes(rec, b)
    g.input("x", data)
    start = 0 if rec["bug"] == "no_offset" else r * b
    literal = None
    if rec["offset"] == "literal" or rec["bug"] == "literal_off":
        start, literal = 0, 2 * r if rec["bug"] == "literal_off" and r == rec["bad_rank"] else start
    g.output(positions_nodes(g, rec, start, b, literal, "x"), out, "y")
    rows = [r * b, r * b + b]
    x_region = None if rec["op"] == "gather" else [rows, None]
    binds = [{"value": "x", "spec": "x", "slice": x_region or [None, None]},
             {"value": "y", "spec": "y", "slice": [rows, None]}]
    return g.model({"onnx_tv.bindings": json.dumps(binds)})


def write(rec, folder):
    if rec["plan"] == "positions":
        shards = start_case(folder, positions_spec(rec))
        for r in range(rec["n"]):
            save(positions_rank(rec, r), os.path.join(shards, "rank%d.onnx" % r))
        return folder
    shards = start_case(folder, spec(rec))
    make = dp_rank if rec["plan"] == "dp" else vocab_rank
    for r in range(rec["n"]):
        save(make(rec, r), os.path.join(shards, "rank%d.onnx" % r))
    return folder
