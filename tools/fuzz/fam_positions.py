"""The `positions` family: positions from a Range used as data, where a reduced instance keeps
two positions per piece and functions of a position may agree on those alone
(docs/shape-reduction.md, "Positions").

Spec: x[T, h] with T = n * rows (rows > 64, so the Range is not a small tensor held exact), the
positions p = Range(0, T) as float64, and
  table  y = x * f(p)[:, None], f one of: cos(a p) (a RoPE angle), a p + c, exp(-a p), and
         sigmoid(a p - c);
  mask   y = softmax(x x^T + bias) x over the rows, bias 0 where key j <= query i (and, with a
         window w, i < j + w) and -inf elsewhere, made by comparing two Ranges.
Plans: n ranks hold `rows` rows of x (all of x as keys for mask), each makes its positions as
Range(r rows, r rows + rows). Correct variants write f or the mask in another form (the
angle as (p + 1) a - a, the comparison j <= i as j < i + 1). Bugs, on rank `bad_rank` or all:
  square       f(p + p(p-1)(p-2)(p-3)): equal to f(p) on positions 0 to 3 only
  interpolate  f(0) + p (f(1) - f(0)): equal to f on positions 0 and 1 only (wrong unless affine)
  offset       the rank's positions start one later
  window       the mask's window one wider
  late         the mask keeps j <= i + 1 (one later key seen)
exp and sigmoid take a / 64, so that their values at a few hundred positions stay apart in
float64 (the numeric truth) rather than all round to 0 or 1.
"""
import json
import math
import os
import random

from .onnxb import Builder, save, start_case

FUNCTIONS = ["cos", "cos", "affine", "exp", "sigmoid"]


def generate(seed):
    r = random.Random(seed * 13 + 5)
    n = r.choice([2, 2, 3])
    plan = r.choice(["table", "table", "mask"])
    rec = dict(family="positions", seed=seed, plan=plan, n=n, rows=r.choice([65, 80]),
               h=r.choice([1, 2]), f=r.choice(FUNCTIONS), a=r.choice([0.5, 0.25, 1.0 / 3]),
               c=r.choice([0.0, 1.0, 2.5]), window=r.choice([0, 0, 3, 70, 100]),
               form=r.choice(["plain", "plain", "other"]), bad_rank=r.randrange(n))
    bugs = ["square", "interpolate", "offset"] if plan == "table" else ["offset", "window", "late"]
    rec["bug"] = r.choice([None, None] + bugs)
    if rec["bug"] == "window" and not rec["window"]:
        rec["bug"] = None
    return rec


def candidates(rec):
    for key, smaller in (("n", 2), ("rows", 65), ("h", 1), ("form", "plain"), ("f", "affine")):
        if rec[key] != smaller and not (key == "n" and rec["bad_rank"] >= smaller):
            yield dict(rec, **{key: smaller})


def issue_class(rec):
    return None


def cost(rec):
    return (rec["n"] * rec["rows"], rec["h"])


def f_of(g, rec, p, form):
    """f(p) as a [count] float64 value."""
    a, c = g.const(slope(rec)), g.const(rec["c"])
    if form == "other":  # the angle as (p + 1) a - a
        one = g.const(1.0)
        ap = g.node("Sub", [g.node("Mul", [g.node("Add", [p, one]), a]), a])
    else:
        ap = g.node("Mul", [a, p])
    f = rec["f"]
    if f == "cos":
        return g.node("Cos", [ap])
    if f == "affine":
        return g.node("Add", [ap, c])
    if f == "exp":
        return g.node("Exp", [g.node("Neg", [ap])])
    return g.node("Sigmoid", [g.node("Sub", [ap, c])])


def slope(rec):
    return rec["a"] / 64 if rec["f"] in ("exp", "sigmoid") else rec["a"]


def f_number(rec, p):
    a, c = slope(rec), rec["c"]
    return {"cos": math.cos(a * p), "affine": a * p + c, "exp": math.exp(-a * p),
            "sigmoid": 1 / (1 + math.exp(-(a * p - c)))}[rec["f"]]


def positions(g, start, count):
    return g.node("Cast", [g.node("Range", [g.ints(start), g.ints(start + count), g.ints(1)])], to=11)


def table(g, rec, start, count, bug, form):
    x = g.input("x", [count, rec["h"]])
    p = positions(g, start + (1 if bug == "offset" else 0), count)
    if bug == "square":
        q = p
        for k in (1.0, 2.0, 3.0):
            q = g.node("Mul", [q, g.node("Sub", [p, g.const(k)])])
        p = g.node("Add", [p, q])
    if bug == "interpolate":
        f0, f1 = g.const(f_number(rec, 0)), g.const(f_number(rec, 1))
        fp = g.node("Add", [f0, g.node("Mul", [p, g.node("Sub", [f1, f0])])])
    else:
        fp = f_of(g, rec, p, form)
    return g.node("Mul", [x, g.node("Unsqueeze", [fp, g.ints([1])])])


def mask(g, rec, q, keys, start, count, bug, form):
    total = rec["n"] * rec["rows"]
    i = g.node("Unsqueeze", [g.node("Range", [g.ints(start + (1 if bug == "offset" else 0)),
                                              g.ints(start + count + (1 if bug == "offset" else 0)),
                                              g.ints(1)]), g.ints([1])])
    j = g.node("Unsqueeze", [g.node("Range", [g.ints(0), g.ints(total), g.ints(1)]), g.ints([0])])
    if bug == "late":
        keep = g.node("LessOrEqual", [j, g.node("Add", [i, g.ints(1)])])
    elif form == "other":
        keep = g.node("Less", [j, g.node("Add", [i, g.ints(1)])])
    else:
        keep = g.node("LessOrEqual", [j, i])
    if rec["window"]:
        w = rec["window"] + (1 if bug == "window" else 0)
        keep = g.node("And", [keep, g.node("Less", [i, g.node("Add", [j, g.ints(w)])])])
    bias = g.node("Where", [keep, g.const(0.0), g.const(-math.inf)])
    scores = g.node("Add", [g.node("MatMul", [q, g.node("Transpose", [keys], perm=[1, 0])]), bias])
    return g.node("MatMul", [g.node("Softmax", [scores], axis=1), keys])


def program(rec, r):
    """The spec for r = None, else rank r's program and its bindings."""
    total, b = rec["n"] * rec["rows"], rec["rows"]
    start, count = (0, total) if r is None else (r * b, b)
    bug = rec["bug"] if r is not None and (rec["bug"] == "window" or r == rec["bad_rank"]) else None
    form = "plain" if r is None else rec["form"]
    g = Builder("spec" if r is None else "rank%d" % r)
    if rec["plan"] == "table":
        y = table(g, rec, start, count, bug, form)
    else:
        keys = g.input("x", [total, rec["h"]])
        q = keys if r is None else g.input("x_local", [count, rec["h"]])
        y = mask(g, rec, q, keys, start, count, bug, form)
    g.output(y, [count, rec["h"]], "y")
    if r is None:
        return g.model()
    rows = [start, start + count]
    if rec["plan"] == "table":
        binds = [{"value": "x", "spec": "x", "slice": [rows, None]}]
    else:
        binds = [{"value": "x", "spec": "x"}, {"value": "x_local", "spec": "x", "slice": [rows, None]}]
    binds.append({"value": "y", "spec": "y", "slice": [rows, None]})
    return g.model({"onnx_tv.bindings": json.dumps(binds)})


def write(rec, folder):
    shards = start_case(folder, program(rec, None))
    for r in range(rec["n"]):
        save(program(rec, r), os.path.join(shards, "rank%d.onnx" % r))
    return folder
