#!/usr/bin/env python3
"""Writes models/soundness/: small plans that attack the shortcuts a proof takes (the meaning of
float constants, shape reduction, fewer ranks), each with a correct variant and a wrong one
whose verdict was settled at full size. tests/e2e/soundness_test.cpp holds their verdicts.

f16_mean: spec averages x over 4096 elements (ReduceMean). shards scales a ReduceSum by
float16(2^-12), which stands for 1/4096 (correct); shards_div4095 divides by 4095 (wrong).
f16_scale: the spec scales the ReduceSum by float16(2^-12); shards_div4095 divides by 4095
(wrong: float16(2^-12) is 1/4096, not the 1/4095 that also rounds to it).
masked_mean: the spec averages each row of x[4, 512]; two ranks hold two rows each and divide
a sum by the count of an all-ones mask built as ConstantOfShape(Shape(x)) (correct);
shards_half_count scales by 256 times that count, right only where a row has 2 elements.
Reduction must not shrink the counted dimension (it would count 2, not 512).
count_part: the spec sums each row of x[4, 1024]; two ranks hold two rows each and sum x + 1,
then take the row's 1024 ones back off (correct); shards_minus_2 takes off 2, right only where a
row has 2 elements. A sum of data with a part that does not vary along the summed dimension
counts it, so that dimension keeps its full size.
variance: the spec computes each row's variance as mean((x - mean(x))^2); the plan as
mean(x^2) - mean(x)^2 (correct at every size, but equal to the spec only where every mean
divides by the count it sums over: a reduced row keeps its full-size divisor).
periodic_table: the spec scales x[8, 16] by a constant table of period 4 along its columns; four
ranks hold four columns each and slice their part of the same table, rank 1 at columns 8:12
instead of 4:8 (correct: the periods are equal); shards_shifted reads 9:13 (wrong). A symbolic
table would forget that its pieces are equal, so the columns keep their full size.
cancelled: the spec takes a softmax of x - x along the rows of x[4, 64] (1/64 everywhere, as
the terms cancel); two ranks hold two rows each and compute it the same way (correct);
shards_half writes 1/2, what the softmax gives over 2 columns; shards_const writes 1/64
(correct). Inference cannot see such cancellations, so the check confirms each sum on the
instance's values, before an EQUIVALENT and before a refutation.
reciprocal: the spec's diagonal of x @ (1/x)^T over x[4, 64] is 64 (a count, as x_k/x_k is 1);
two ranks compute their rows of it (correct), shards_count writes 64 (correct), and
shards_count_minus_1 writes 63 (wrong). The terms cancel across the two factors of the
contraction, so the products, not each factor, are confirmed.
hidden_count: the spec sums x * ((x - 1)^2 / x) over the 64 columns of x[4, 64] (a count: each
addend is (x - 1)^2, whose 1 every column holds); the ranks sum x^2 - 2x and add 64 (correct)
or 2 (shards_2, right only where a row has 2 columns). The stage-wise run keeps x - 1 as an
atom, in which no term is common to the columns; the comparison proves the forms equal only
once that atom is unfolded, so the count is judged with it unfolded too.
cases_count: the spec sums max(x + 1, 1) + min(x + 1, 1) - x over the 5 columns of x[4, 5]
(each addend is 2 wherever x is); the ranks write 10 (correct) or 4 (shards_4, right only where
a row has 2 columns). Only case analysis shows the addends equal, so a sum of addends that hold
max, min or abs atoms counts wherever a comparison was decided by cases.
hidden_sums: counts hidden where a sum's addends are not its data. Each spec sums over the 64
columns of x[4, 64]; the ranks hold two rows each and add a count to a sum of x, 64 (correct,
shards) or 2 (shards_2, right only where a row has 2 columns): softmax_log, softmax(log(x + 1))
(a softmax sums exp(log(x + 1)) = x + 1); sum_square, ReduceSumSquare(sqrt(x^2 + 1)) (it sums
the squares, x^2 + 1); mean_exp_log, ReduceMean(exp(log(x + 1))) (rewritten as a ReduceSum
and a division by the full count, the sum is the site); flat_cut, the sum of
(x^3 + x w^2) / x = x^2 + w^2 (a stage-wise run cuts it, and meets the plan's sum of x^2
plus 64 w^2 through the flattened sum: the flattened definitions count as unfolded); matmul,
hidden_count's sum written as a MatMul of x by (x - 1)^2 / x (the contraction's products hold
the count).
causal_mask: the spec masks q @ k^T with Trilu (lower) over 8 queries and 8 keys, q and k
separate inputs; two ranks hold four query rows each and all of k. Rank 1 masks with offset 4
(correct, shards) or not at all (shards_unmasked: wrong, row 4 keeps keys 0..4 only). Trilu
compares row and column positions, so the two axes shrink as one (or keep full size).
index_positions: the spec reads the diagonal of x[160, 160], y[t] = x[t, t], by GatherElements
at positions Range(0, 160); two ranks hold 80 rows each. Rank 1 makes its positions as
Range(80, 160) (shards), or as Range(0, 80) + 80, the offset a literal (shards_literal, also
correct), or + 2 (shards_literal_2, wrong). Positions used as indices are read against the
indexed axis at its full size, so their Range keeps its full size too.
index_table: the spec gathers x[160, 160] at a constant int64 table of one column index per row
(a permutation, its 159 written -1, which ONNX reads as the last); the ranks hold 80 rows and
their part of the table (shards) or clamp its negative entries to 0 (shards_clamped: wrong at
the row of -1). An index table is read by its values, so it is never made a symbolic table
(whose range would be [0, 160), leaving -1 out).
count_from_shape: the spec sums the top K of each row of x[4, 8] (8 experts), with K read from
x's shape (its 4 rows, an axis that reduction shrinks); one rank writes K = 4 (shards, correct)
or 2 (shards_k2, right only where x has 2 rows). one_hot_depth: x[3] scaled by how many of three
constant labels (1, 5, 7) a one-hot holds, its depth read from the shape of z[8]; a rank writes
depth 8 (shards, correct) or 2 (shards_depth2, wrong: labels 5 and 7 are then outside). K and a depth are extents of axes that keep
their full size, so the values keep it too when computed from a reduced shape.
positions: the spec scales x[256, 4] by cos(p / 2) at positions p = Range(0, 256); two ranks
hold 128 rows each and make their positions as Range(128 r, 128 r + 128) (shards, correct).
shards_square writes p + p(p - 1)(p - 2)(p - 3) for p (wrong beyond position 3), and
shards_interpolated writes 1 + p (cos(1/2) - 1) for cos(p / 2) (wrong beyond position 1): both
agree with the spec on the two positions per piece a reduced instance keeps. Positions are
symbols there, so neither is proven; the square keeps its axis whole and is refuted.
shards_interpolated_first interpolates on rank 0 only, whose positions 0 and 1 the instance
keeps: no witness there tells the forms apart, and the check runs again at full size.
shards_literal makes rank r's positions as Range(0, 128) + 128 r (correct): the literal is a
full-size offset the instance does not rewrite, so the check runs at full size (a reduced
instance refuted it before positions were symbols).
window: the spec attends x[256, 4] to itself under a causal sliding window of 100 positions,
the mask made by comparing two Ranges (key j kept for query i where j <= i < j + 100); two
ranks hold 128 query rows each and all of x as keys. shards is correct, shards_window uses a
window of 101 (wrong from distance 100 on). A comparison of shifted positions keeps the
sequence whole. causal_range: the same without a window, which a reduced instance proves (the
order of two positions is kept), and shards_offset, whose rank 1 makes its positions as
Range(0, 128) (wrong: its queries see keys 0..i only)."""
import json
import os
import sys

from onnx import TensorProto, helper, save

F, F16 = TensorProto.FLOAT, TensorProto.FLOAT16


def model(nodes, inputs, outputs, bindings=None, comm=False, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("onnx_tv", 1)] if comm else [])
    m = helper.make_model(g, opset_imports=ops, producer_name="soundness")
    m.ir_version = 8
    if bindings is not None:
        helper.set_model_props(m, {"onnx_tv.bindings": json.dumps(bindings)})
    return m


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def const(name, value, t=F, shape=()):
    vals = value if isinstance(value, list) else [value]
    return helper.make_node("Constant", [], [name], name="/" + name,
                            value=helper.make_tensor(name + "_v", t, list(shape), vals))


def write(folder, spec, shards):
    """shards: {folder name: [rank models]}"""
    os.makedirs(folder, exist_ok=True)
    save(spec, os.path.join(folder, "spec.onnx"))
    for name, ranks in shards.items():
        d = os.path.join(folder, name)
        os.makedirs(d, exist_ok=True)
        for r, m in enumerate(ranks):
            if isinstance(m, dict):  # plan.json
                with open(os.path.join(d, "plan.json"), "w") as f:
                    json.dump(m, f, indent=1)
            else:
                save(m, os.path.join(d, f"rank{r}.onnx"))


def whole(*names):
    return [{"value": n, "spec": n} for n in names]


def f16_cases(out):
    n = 4096
    xs = [vi("x", [n])]
    mean = model([helper.make_node("ReduceMean", ["x"], ["y"], name="/mean", keepdims=0)],
                 xs, [vi("y", [])])
    f16_scale = [const("s16", 2.0 ** -12, F16),
                 helper.make_node("Cast", ["s16"], ["s"], name="/cast", to=F),
                 helper.make_node("ReduceSum", ["x"], ["t"], name="/sum", keepdims=0),
                 helper.make_node("Mul", ["t", "s"], ["y"], name="/scale")]
    div = [const("d", 4095.0),
           helper.make_node("ReduceSum", ["x"], ["t"], name="/sum", keepdims=0),
           helper.make_node("Div", ["t", "d"], ["y"], name="/div4095")]
    b = whole("x", "y")
    write(os.path.join(out, "f16_mean"), mean, {
        "shards": [model(f16_scale, xs, [vi("y", [])], b)],
        "shards_div4095": [model(div, xs, [vi("y", [])], b)]})
    write(os.path.join(out, "f16_scale"), model(f16_scale, xs, [vi("y", [])]), {
        "shards": [model([helper.make_node("ReduceMean", ["x"], ["y"], name="/mean", keepdims=0)],
                         xs, [vi("y", [])], b)],
        "shards_div4095": [model(div, xs, [vi("y", [])], b)]})


def masked_mean_cases(out):
    rows, cols, ranks = 4, 512, 2
    spec = model([helper.make_node("ReduceMean", ["x"], ["y"], name="/mean", axes=[1], keepdims=0)],
                 [vi("x", [rows, cols])], [vi("y", [rows])])

    def rank(r, extra_scale):
        nodes = [helper.make_node("Shape", ["x_local"], ["shape"], name="/mask/Shape"),
                 helper.make_node("ConstantOfShape", ["shape"], ["mask"], name="/mask/Ones",
                                  value=helper.make_tensor("one", F, [1], [1.0])),
                 helper.make_node("Mul", ["x_local", "mask"], ["xm"], name="/masked"),
                 const("axes", [1], TensorProto.INT64, [1]),
                 helper.make_node("ReduceSum", ["xm", "axes"], ["total"], name="/sum", keepdims=0),
                 helper.make_node("ReduceSum", ["mask", "axes"], ["count"], name="/count",
                                  keepdims=0)]
        if extra_scale != 1:
            nodes += [const("k", float(extra_scale)),
                      helper.make_node("Mul", ["count", "k"], ["count_k"], name="/count_scaled")]
        nodes.append(helper.make_node("Div", ["total", "count_k" if extra_scale != 1 else "count"],
                                      ["y_local"], name="/div"))
        b = rows // ranks
        binds = [{"value": "x_local", "spec": "x", "slice": [[r * b, r * b + b], None]},
                 {"value": "y_local", "spec": "y", "slice": [[r * b, r * b + b]]}]
        return model(nodes, [vi("x_local", [b, cols])], [vi("y_local", [b])], binds)

    write(os.path.join(out, "masked_mean"), spec, {
        "shards": [rank(r, 1) for r in range(ranks)],
        "shards_half_count": [rank(r, cols // 2) for r in range(ranks)]})


def row_plan(nodes, r, rows, cols, ranks, out="y"):
    b = rows // ranks
    binds = [{"value": "x_local", "spec": "x", "slice": [[r * b, r * b + b], None]},
             {"value": out + "_local", "spec": out, "slice": [[r * b, r * b + b]]}]
    return model(nodes, [vi("x_local", [b, cols])], [vi(out + "_local", [b])], binds)


def count_part_cases(out):
    rows, cols, ranks = 4, 1024, 2
    spec = model([helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="/sum", keepdims=0),
                  const("axes", [1], TensorProto.INT64, [1])][::-1],
                 [vi("x", [rows, cols])], [vi("y", [rows])])

    def rank(r, minus):
        nodes = [const("one", 1.0), const("axes", [1], TensorProto.INT64, [1]),
                 const("minus", float(minus)),
                 helper.make_node("Add", ["x_local", "one"], ["x1"], name="/plus_one"),
                 helper.make_node("ReduceSum", ["x1", "axes"], ["t"], name="/sum", keepdims=0),
                 helper.make_node("Sub", ["t", "minus"], ["y_local"], name="/take_off")]
        return row_plan(nodes, r, rows, cols, ranks)

    write(os.path.join(out, "count_part"), spec, {
        "shards": [rank(r, cols) for r in range(ranks)],
        "shards_minus_2": [rank(r, 2) for r in range(ranks)]})


def variance_cases(out):
    rows, cols, ranks = 4, 64, 2
    spec = model([helper.make_node("ReduceMean", ["x"], ["m"], name="/mean", axes=[1], keepdims=1),
                  helper.make_node("Sub", ["x", "m"], ["d"], name="/center"),
                  helper.make_node("Mul", ["d", "d"], ["d2"], name="/square"),
                  helper.make_node("ReduceMean", ["d2"], ["v"], name="/var", axes=[1], keepdims=0)],
                 [vi("x", [rows, cols])], [vi("v", [rows])])

    def rank(r):
        nodes = [helper.make_node("Mul", ["x_local", "x_local"], ["x2"], name="/square"),
                 helper.make_node("ReduceMean", ["x2"], ["e2"], name="/mean_sq", axes=[1], keepdims=0),
                 helper.make_node("ReduceMean", ["x_local"], ["m"], name="/mean", axes=[1], keepdims=0),
                 helper.make_node("Mul", ["m", "m"], ["m2"], name="/mean_squared"),
                 helper.make_node("Sub", ["e2", "m2"], ["v_local"], name="/var")]
        return row_plan(nodes, r, rows, cols, ranks, "v")

    write(os.path.join(out, "variance"), spec, {"shards": [rank(r) for r in range(ranks)]})


def periodic_table_cases(out):
    from onnx import numpy_helper
    import numpy as np
    rows, cols, ranks, period = 8, 16, 4, 4
    table = np.array([[1.5, -2.0, 0.25, 3.0] * (cols // period)], dtype=np.float32)
    init = numpy_helper.from_array(table, "c")
    spec = model([helper.make_node("Mul", ["x", "c"], ["y"], name="/scale")],
                 [vi("x", [rows, cols])], [vi("y", [rows, cols])], inits=[init])
    w = cols // ranks

    def rank(r, start):
        nodes = [const("starts", [start], TensorProto.INT64, [1]),
                 const("ends", [start + w], TensorProto.INT64, [1]),
                 const("axes", [1], TensorProto.INT64, [1]),
                 helper.make_node("Slice", ["c", "starts", "ends", "axes"], ["c_local"],
                                  name="/table_part"),
                 helper.make_node("Mul", ["x_local", "c_local"], ["y_local"], name="/scale")]
        binds = [{"value": "x_local", "spec": "x", "slice": [None, [r * w, r * w + w]]},
                 {"value": "y_local", "spec": "y", "slice": [None, [r * w, r * w + w]]}]
        return model(nodes, [vi("x_local", [rows, w])], [vi("y_local", [rows, w])], binds,
                     inits=[init])

    def starts(shift):
        return [r * w + (shift if r == 1 else 0) for r in range(ranks)]

    write(os.path.join(out, "periodic_table"), spec, {
        "shards": [rank(r, s) for r, s in enumerate(starts(4))],
        "shards_shifted": [rank(r, s) for r, s in enumerate(starts(5))]})


def cancelled_cases(out):
    rows, cols, ranks = 4, 64, 2
    spec = model([helper.make_node("Sub", ["x", "x"], ["z"], name="/cancel"),
                  helper.make_node("Softmax", ["z"], ["p"], name="/softmax", axis=1)],
                 [vi("x", [rows, cols])], [vi("p", [rows, cols])])
    b = rows // ranks

    def rank(r, fill):
        if fill:
            nodes = [const("shape", [b, cols], TensorProto.INT64, [2]),
                     helper.make_node("ConstantOfShape", ["shape"], ["p_local"], name="/fill",
                                      value=helper.make_tensor("h", F, [1], [fill]))]
        else:
            nodes = [helper.make_node("Sub", ["x_local", "x_local"], ["z"], name="/cancel"),
                     helper.make_node("Softmax", ["z"], ["p_local"], name="/softmax", axis=1)]
        binds = [{"value": "x_local", "spec": "x", "slice": [[r * b, r * b + b], None]},
                 {"value": "p_local", "spec": "p", "slice": [[r * b, r * b + b], None]}]
        return model(nodes, [vi("x_local", [b, cols])], [vi("p_local", [b, cols])], binds)

    write(os.path.join(out, "cancelled"), spec, {
        "shards": [rank(r, None) for r in range(ranks)],
        "shards_half": [rank(r, 0.5) for r in range(ranks)],
        "shards_const": [rank(r, 1 / cols) for r in range(ranks)]})


def reciprocal_cases(out):
    rows, cols, ranks = 4, 64, 2
    eye = [1.0 if i == j else 0.0 for i in range(rows) for j in range(rows)]
    spec = model([helper.make_node("Reciprocal", ["x"], ["r"], name="/reciprocal"),
                  helper.make_node("Transpose", ["r"], ["rt"], name="/transpose", perm=[1, 0]),
                  helper.make_node("MatMul", ["x", "rt"], ["m"], name="/matmul"),
                  const("eye", eye, F, [rows, rows]),
                  helper.make_node("Mul", ["m", "eye"], ["d"], name="/diagonal")],
                 [vi("x", [rows, cols])], [vi("d", [rows, rows])])
    b = rows // ranks

    def rank(r, count):
        if count is None:
            nodes = [helper.make_node("Reciprocal", ["x_local"], ["r"], name="/reciprocal"),
                     helper.make_node("Transpose", ["r"], ["rt"], name="/transpose", perm=[1, 0]),
                     helper.make_node("MatMul", ["x_local", "rt"], ["m"], name="/matmul"),
                     const("eye", eye[r * b * rows:(r + 1) * b * rows], F, [b, rows]),
                     const("starts", [r * b], TensorProto.INT64, [1]),
                     const("ends", [r * b + b], TensorProto.INT64, [1]),
                     const("axes", [0], TensorProto.INT64, [1]),
                     helper.make_node("Slice", ["m", "starts", "ends", "axes"], ["m_rows"],
                                      name="/rows"),
                     helper.make_node("Mul", ["m_rows", "eye"], ["d_local"], name="/diagonal")]
        else:
            nodes = [const("d_local", [count * e for e in eye[r * b * rows:(r + 1) * b * rows]],
                           F, [b, rows])]
        binds = [{"value": "x_local", "spec": "x", "slice": [None, None]},
                 {"value": "d_local", "spec": "d", "slice": [[r * b, r * b + b], None]}]
        return model(nodes, [vi("x_local", [rows, cols])], [vi("d_local", [b, rows])], binds)

    write(os.path.join(out, "reciprocal"), spec, {
        "shards": [rank(r, None) for r in range(ranks)],
        "shards_count": [rank(r, float(cols)) for r in range(ranks)],
        "shards_count_minus_1": [rank(r, float(cols - 1)) for r in range(ranks)]})


def hidden_count_cases(out):
    rows, cols, ranks = 4, 64, 2
    N = helper.make_node
    spec = model([const("one", 1.0), const("two", 2.0),
                  const("axes", [1], TensorProto.INT64, [1]),
                  N("Sub", ["x", "one"], ["xm"], name="/minus_one"),
                  N("Pow", ["xm", "two"], ["p"], name="/square"),
                  N("Div", ["p", "x"], ["q"], name="/div"),
                  N("Mul", ["x", "q"], ["s"], name="/mul"),
                  N("ReduceSum", ["s", "axes"], ["y"], name="/sum", keepdims=1)],
                 [vi("x", [rows, cols])], [vi("y", [rows, 1])])
    b = rows // ranks

    def rank(r, count):
        nodes = [const("minus_two", -2.0), const("axes", [1], TensorProto.INT64, [1]),
                 N("Add", ["x_local", "minus_two"], ["xm2"], name="/minus_two"),
                 N("Mul", ["x_local", "xm2"], ["t"], name="/mul"),
                 N("ReduceSum", ["t", "axes"], ["s"], name="/sum", keepdims=1),
                 const("count", float(count)),
                 N("Add", ["s", "count"], ["y_local"], name="/plus_count")]
        binds = [{"value": "x_local", "spec": "x", "slice": [[r * b, r * b + b], None]},
                 {"value": "y_local", "spec": "y", "slice": [[r * b, r * b + b], None]}]
        return model(nodes, [vi("x_local", [b, cols])], [vi("y_local", [b, 1])], binds)

    write(os.path.join(out, "hidden_count"), spec, {
        "shards": [rank(r, cols) for r in range(ranks)],
        "shards_2": [rank(r, 2) for r in range(ranks)]})


def cases_count_cases(out):
    rows, cols, ranks = 4, 5, 2
    N = helper.make_node
    spec = model([const("one", 1.0), const("axes", [1], TensorProto.INT64, [1]),
                  N("Add", ["x", "one"], ["xp"], name="/plus_one"),
                  N("Max", ["xp", "one"], ["hi"], name="/max"),
                  N("Min", ["xp", "one"], ["lo"], name="/min"),
                  N("Add", ["hi", "lo"], ["both"], name="/both"),
                  N("Sub", ["both", "x"], ["s"], name="/sub"),
                  N("ReduceSum", ["s", "axes"], ["y"], name="/sum", keepdims=1)],
                 [vi("x", [rows, cols])], [vi("y", [rows, 1])])
    b = rows // ranks

    def rank(r, total):
        nodes = [const("total", [float(total)] * b, F, [b, 1]),
                 N("Identity", ["total"], ["y_local"], name="/total")]
        binds = [{"value": "x_local", "spec": "x", "slice": [[r * b, r * b + b], None]},
                 {"value": "y_local", "spec": "y", "slice": [[r * b, r * b + b], None]}]
        return model(nodes, [vi("x_local", [b, cols])], [vi("y_local", [b, 1])], binds)

    write(os.path.join(out, "cases_count"), spec, {
        "shards": [rank(r, 2 * cols) for r in range(ranks)],
        "shards_4": [rank(r, 4) for r in range(ranks)]})


def hidden_sums_cases(out):
    rows, cols, ranks = 4, 64, 2
    b = rows // ranks
    N = helper.make_node
    axes = lambda: const("axes", [1], TensorProto.INT64, [1])

    def case(name, spec_nodes, spec_inputs, out_cols, plan):
        """plan(count) -> nodes from x_local (and w_local) to y_local."""
        spec = model(spec_nodes, [vi(n, [rows, c]) for n, c in spec_inputs],
                     [vi("y", [rows, out_cols])])

        def rank(r, count):
            ins = [vi(n + "_local", [b, c]) for n, c in spec_inputs]
            binds = [{"value": n + "_local", "spec": n, "slice": [[r * b, r * b + b], None]}
                     for n, _ in spec_inputs]
            binds.append({"value": "y_local", "spec": "y", "slice": [[r * b, r * b + b], None]})
            return model(plan(count), ins, [vi("y_local", [b, out_cols])], binds)

        write(os.path.join(out, "hidden_sums", name), spec, {
            "shards": [rank(r, cols) for r in range(ranks)],
            "shards_2": [rank(r, 2) for r in range(ranks)]})

    def sum_plus(count, tail="y_local"):
        return [axes(), const("count", float(count)),
                N("ReduceSum", ["x_local", "axes"], ["s"], keepdims=1),
                N("Add", ["s", "count"], [tail])]

    case("softmax_log",
         [const("one", 1.0), N("Add", ["x", "one"], ["x1"]), N("Log", ["x1"], ["l"]),
          N("Softmax", ["l"], ["y"], axis=1)], [("x", cols)], cols,
         lambda count: sum_plus(count, "total") + [
             const("one", 1.0), N("Add", ["x_local", "one"], ["x1"]),
             N("Div", ["x1", "total"], ["y_local"])])
    case("sum_square",
         [axes(), const("one", 1.0), N("Mul", ["x", "x"], ["x2"]), N("Add", ["x2", "one"], ["a"]),
          N("Sqrt", ["a"], ["r"]), N("ReduceSumSquare", ["r"], ["y"], axes=[1], keepdims=1)],
         [("x", cols)], 1,
         lambda count: [axes(), const("count", float(count)),
                        N("Mul", ["x_local", "x_local"], ["x2"]),
                        N("ReduceSum", ["x2", "axes"], ["s"], keepdims=1),
                        N("Add", ["s", "count"], ["y_local"])])
    case("mean_exp_log",
         [const("one", 1.0), N("Add", ["x", "one"], ["x1"]), N("Log", ["x1"], ["l"]),
          N("Exp", ["l"], ["e"]), N("ReduceMean", ["e"], ["y"], axes=[1], keepdims=1)],
         [("x", cols)], 1,
         lambda count: sum_plus(count, "total") + [
             const("n", float(cols)), N("Div", ["total", "n"], ["y_local"])])
    # x*x is made before w*w, so the flattened sum x_0^2 + x_1^2 + 2 w^2 leads with the
    # coefficient of the cut sum, and the flattening files it under the spec's atom.
    case("flat_cut",
         [axes(), N("Mul", ["x", "x"], ["x2"]), N("Mul", ["w", "w"], ["w2"]),
          N("Mul", ["x2", "x"], ["x3"]), N("Mul", ["x", "w2"], ["xw"]),
          N("Add", ["x3", "xw"], ["num"]), N("Div", ["num", "x"], ["q"]),
          N("ReduceSum", ["q", "axes"], ["y"], keepdims=1)],
         [("x", cols), ("w", 1)], 1,
         lambda count: [axes(), const("count", float(count)),
                        N("Mul", ["x_local", "x_local"], ["x2"]),
                        N("ReduceSum", ["x2", "axes"], ["s"], keepdims=1),
                        N("Mul", ["w_local", "w_local"], ["w2"]),
                        N("Mul", ["w2", "count"], ["cw"]), N("Add", ["s", "cw"], ["y_local"])])
    # hidden_count with the sum written as a contraction: x_k times (x_k - 1)^2 / x_k, whose
    # products hold the 1 of a stage cut's body at every position.
    case("matmul",
         [const("one", 1.0), const("two", 2.0),
          const("row", [rows, 1, cols], TensorProto.INT64, [3]),
          const("col", [rows, cols, 1], TensorProto.INT64, [3]),
          const("out", [rows, 1], TensorProto.INT64, [2]),
          N("Sub", ["x", "one"], ["xm"]), N("Pow", ["xm", "two"], ["p"]),
          N("Div", ["p", "x"], ["q"]), N("Reshape", ["x", "row"], ["xr"]),
          N("Reshape", ["q", "col"], ["qc"]), N("MatMul", ["xr", "qc"], ["d"]),
          N("Reshape", ["d", "out"], ["y"])],
         [("x", cols)], 1,
         lambda count: [axes(), const("count", float(count)), const("minus_two", -2.0),
                        N("Add", ["x_local", "minus_two"], ["xm2"]),
                        N("Mul", ["x_local", "xm2"], ["t"]),
                        N("ReduceSum", ["t", "axes"], ["s"], keepdims=1),
                        N("Add", ["s", "count"], ["y_local"])])


def causal_mask_cases(out):
    seq, dim, ranks = 8, 4, 2
    b = seq // ranks
    N = helper.make_node
    spec = model([N("Transpose", ["k"], ["kt"], name="/kt", perm=[1, 0]),
                  N("MatMul", ["q", "kt"], ["s"], name="/scores"),
                  N("Trilu", ["s"], ["y"], name="/mask", upper=0)],
                 [vi("q", [seq, dim]), vi("k", [seq, dim])], [vi("y", [seq, seq])])

    def rank(r, masked):
        nodes = [N("Transpose", ["k"], ["kt"], name="/kt", perm=[1, 0]),
                 N("MatMul", ["q_local", "kt"], ["s"], name="/scores")]
        if masked:
            nodes += [const("offset", r * b, TensorProto.INT64),
                      N("Trilu", ["s", "offset"], ["y_local"], name="/mask", upper=0)]
        else:
            nodes.append(N("Identity", ["s"], ["y_local"], name="/unmasked"))
        binds = [{"value": "q_local", "spec": "q", "slice": [[r * b, r * b + b], None]},
                 {"value": "k", "spec": "k"},
                 {"value": "y_local", "spec": "y", "slice": [[r * b, r * b + b], None]}]
        return model(nodes, [vi("q_local", [b, dim]), vi("k", [seq, dim])],
                     [vi("y_local", [b, seq])], binds)

    write(os.path.join(out, "causal_mask"), spec, {
        "shards": [rank(r, True) for r in range(ranks)],
        "shards_unmasked": [rank(r, r == 0) for r in range(ranks)]})


def int_const(name, values, shape):
    return helper.make_node("Constant", [], [name], name="/" + name,
                            value=helper.make_tensor(name + "_v", TensorProto.INT64, list(shape),
                                                     [int(v) for v in values]))


def index_positions_cases(out):
    t, ranks = 160, 2
    b = t // ranks
    N = helper.make_node

    def diagonal(start, end, offset=None, out_name="y"):
        nodes = [int_const("start", [start], []), int_const("end", [end], []),
                 int_const("step", [1], []), int_const("axis", [1], [1]),
                 N("Range", ["start", "end", "step"], ["pos0"], name="/positions")]
        if offset is None:
            nodes.append(N("Identity", ["pos0"], ["pos"], name="/same"))
        else:
            nodes += [int_const("offset", [offset], []),
                      N("Add", ["pos0", "offset"], ["pos"], name="/offset")]
        return nodes + [N("Unsqueeze", ["pos", "axis"], ["pos_col"], name="/column"),
                        N("GatherElements", ["x", "pos_col"], [out_name], name="/diagonal", axis=1)]

    spec = model(diagonal(0, t), [vi("x", [t, t])], [vi("y", [t, 1])])

    def rank(r, start, offset=None):
        binds = [{"value": "x", "spec": "x", "slice": [[r * b, r * b + b], None]},
                 {"value": "y", "spec": "y", "slice": [[r * b, r * b + b], None]}]
        return model(diagonal(start, start + b, offset), [vi("x", [b, t])], [vi("y", [b, 1])], binds)

    write(os.path.join(out, "index_positions"), spec, {
        "shards": [rank(0, 0), rank(1, b)],
        "shards_literal": [rank(0, 0), rank(1, 0, b)],
        "shards_literal_2": [rank(0, 0), rank(1, 0, 2)]})


def index_table_cases(out):
    rows = cols = 160
    b = rows // 2
    N = helper.make_node
    table = [(7 * i + 3) % cols for i in range(rows)]  # a permutation of the columns
    table = [-1 if v == cols - 1 else v for v in table]

    def pick(values, n, clamp=False):
        nodes = [int_const("idx", values, [n, 1])]
        if clamp:
            nodes += [int_const("zero", [0], []), N("Less", ["idx", "zero"], ["negative"], name="/negative"),
                      N("Where", ["negative", "zero", "idx"], ["idx_used"], name="/clamp")]
        else:
            nodes.append(N("Identity", ["idx"], ["idx_used"], name="/same"))
        return nodes + [N("GatherElements", ["x", "idx_used"], ["y"], name="/pick", axis=1)]

    spec = model(pick(table, rows), [vi("x", [rows, cols])], [vi("y", [rows, 1])])

    def rank(r, clamp=False):
        binds = [{"value": "x", "spec": "x", "slice": [[r * b, r * b + b], None]},
                 {"value": "y", "spec": "y", "slice": [[r * b, r * b + b], None]}]
        return model(pick(table[r * b:r * b + b], b, clamp), [vi("x", [b, cols])], [vi("y", [b, 1])],
                     binds)

    write(os.path.join(out, "index_table"), spec, {
        "shards": [rank(0), rank(1)],
        "shards_clamped": [rank(0, True), rank(1, True)]})


def count_from_shape_cases(out):
    N = helper.make_node
    from_shape = [N("Shape", ["x"], ["shape"], name="/shape"), int_const("zero", [0], [1]),
                  N("Gather", ["shape", "zero"], ["count"], name="/count", axis=0)]

    def topk_sum(k_nodes, k_name):
        return k_nodes + [N("TopK", ["x", k_name], ["vals", "idx"], name="/topk"),
                          int_const("last", [1], [1]),
                          N("ReduceSum", ["vals", "last"], ["y"], name="/sum", keepdims=0)]

    spec = model(topk_sum(from_shape, "count"), [vi("x", [4, 8])], [vi("y", [4])])

    def rank(k):
        return model(topk_sum([int_const("k", [k], [1])], "k"), [vi("x", [4, 8])], [vi("y", [4])],
                     whole("x", "y"))

    write(os.path.join(out, "count_from_shape"), spec, {"shards": [rank(4)], "shards_k2": [rank(2)]})

    def one_hot(depth_nodes, depth_name):
        return depth_nodes + [int_const("labels", [1, 5, 7], [3]),
                              helper.make_node("Constant", [], ["off_on"], name="/off_on",
                                               value=helper.make_tensor("v", F, [2], [0.0, 1.0])),
                              N("OneHot", ["labels", depth_name, "off_on"], ["hot"], name="/one_hot"),
                              int_const("classes", [1], [1]),
                              N("ReduceSum", ["hot", "classes"], ["hits"], name="/hits", keepdims=0),
                              N("Mul", ["hits", "x"], ["y"], name="/scale")]

    depth_from_shape = [N("Shape", ["z"], ["shape"], name="/shape"), int_const("zero", [0], [1]),
                        N("Gather", ["shape", "zero"], ["count"], name="/count", axis=0)]
    spec = model(one_hot(depth_from_shape, "count"), [vi("x", [3]), vi("z", [8])], [vi("y", [3])])

    def rank_depth(d):
        return model(one_hot([int_const("d", [d], [1])], "d"), [vi("x", [3]), vi("z", [8])],
                     [vi("y", [3])], whole("x", "z", "y"))

    write(os.path.join(out, "one_hot_depth"), spec, {"shards": [rank_depth(8)],
                                                     "shards_depth2": [rank_depth(2)]})


def narrow_int_cases(out):
    """Token ids shifted in uint8: (t + 100) wraps past 255, so a rank that shifts an id in
    uint8 and back in int64 reads other rows for ids of 156 and more. Shifting in int64 is
    right. Arithmetic in int8 to uint32 wraps as ONNX says (ops/constant_ops.cpp)."""
    N = helper.make_node
    U8, I64 = TensorProto.UINT8, TensorProto.INT64
    spec = model([N("Gather", ["table", "t"], ["y"], name="/lookup", axis=0)],
                 [vi("table", [200, 2]), vi("t", [3], I64)], [vi("y", [3, 2])])

    def rank(narrow):
        t = U8 if narrow else I64
        nodes = [helper.make_node("Constant", [], ["hundred"], name="/hundred",
                                  value=helper.make_tensor("h", t, [], [100])),
                 int_const("hundred64", [100], []),
                 N("Cast", ["t"], ["t_n"], name="/cast_in", to=t),
                 N("Add", ["t_n", "hundred"], ["shifted"], name="/shift"),
                 N("Cast", ["shifted"], ["shifted64"], name="/cast_out", to=I64),
                 N("Sub", ["shifted64", "hundred64"], ["back"], name="/unshift"),
                 N("Gather", ["table", "back"], ["y"], name="/lookup", axis=0)]
        return model(nodes, [vi("table", [200, 2]), vi("t", [3], I64)], [vi("y", [3, 2])],
                     whole("table", "t", "y"))

    write(os.path.join(out, "narrow_int"), spec, {"shards": [rank(False)],
                                                  "shards_uint8": [rank(True)]})


def positions_cases(out):
    seq, dim, ranks = 256, 4, 2
    b = seq // ranks
    N = helper.make_node

    def table(start, end, form):
        nodes = [const("step", 1, TensorProto.INT64), const("half", 0.5),
                 const("axes", [1], TensorProto.INT64, [1])]
        if form == "literal":  # Range(0, rows) + start, as torch.arange(rows) + offset exports
            nodes += [const("start", 0, TensorProto.INT64), const("end", end - start, TensorProto.INT64),
                      const("offset", start, TensorProto.INT64),
                      N("Range", ["start", "end", "step"], ["local"], name="/range"),
                      N("Add", ["local", "offset"], ["pi"], name="/offset")]
        else:
            nodes += [const("start", start, TensorProto.INT64), const("end", end, TensorProto.INT64),
                      N("Range", ["start", "end", "step"], ["pi"], name="/range")]
        nodes.append(N("Cast", ["pi"], ["p"], name="/cast", to=F))
        if form == "square":  # p + p(p - 1)(p - 2)(p - 3): p at 0..3, not beyond
            nodes += [const("c1", 1.0), const("c2", 2.0), const("c3", 3.0),
                      N("Sub", ["p", "c1"], ["p1"], name="/p1"), N("Sub", ["p", "c2"], ["p2"], name="/p2"),
                      N("Sub", ["p", "c3"], ["p3"], name="/p3"), N("Mul", ["p", "p1"], ["a"], name="/a"),
                      N("Mul", ["a", "p2"], ["b"], name="/b"), N("Mul", ["b", "p3"], ["c"], name="/c"),
                      N("Add", ["p", "c"], ["q"], name="/q")]
        else:
            nodes.append(N("Identity", ["p"], ["q"], name="/q"))
        if form == "interpolated":  # 1 + p (cos(1/2) - 1): cos(p / 2) at 0 and 1, not beyond
            nodes += [const("one", 1.0), N("Cos", ["half"], ["cos_half"], name="/cos_half"),
                      N("Sub", ["cos_half", "one"], ["slope"], name="/slope"),
                      N("Mul", ["q", "slope"], ["rise"], name="/rise"),
                      N("Add", ["rise", "one"], ["cs"], name="/cos")]
        else:
            nodes += [N("Mul", ["q", "half"], ["angle"], name="/angle"),
                      N("Cos", ["angle"], ["cs"], name="/cos")]
        return nodes + [N("Unsqueeze", ["cs", "axes"], ["cs2"], name="/unsqueeze")]

    spec = model(table(0, seq, "") + [N("Mul", ["x", "cs2"], ["y"], name="/scale")],
                 [vi("x", [seq, dim])], [vi("y", [seq, dim])])

    def rank(r, form):
        nodes = table(r * b, r * b + b, form) + [N("Mul", ["x_local", "cs2"], ["y_local"], name="/scale")]
        binds = [{"value": "x_local", "spec": "x", "slice": [[r * b, r * b + b], None]},
                 {"value": "y_local", "spec": "y", "slice": [[r * b, r * b + b], None]}]
        return model(nodes, [vi("x_local", [b, dim])], [vi("y_local", [b, dim])], binds)

    write(os.path.join(out, "positions"), spec, {
        "shards": [rank(r, "") for r in range(ranks)],
        "shards_square": [rank(r, "square") for r in range(ranks)],
        "shards_interpolated": [rank(r, "interpolated") for r in range(ranks)],
        "shards_interpolated_first": [rank(r, "interpolated" if r == 0 else "") for r in range(ranks)],
        "shards_literal": [rank(r, "literal") for r in range(ranks)]})


def window_cases(out):
    seq, dim, ranks, window = 256, 4, 2, 100
    b = seq // ranks
    N = helper.make_node

    def attention(q, y, q_start, q_end, w):
        # Key j is kept for query i where j <= i (and i < j + w): a bias of 0 or -inf.
        nodes = [const("qs", q_start, TensorProto.INT64), const("qe", q_end, TensorProto.INT64),
                 const("ks", 0, TensorProto.INT64), const("ke", seq, TensorProto.INT64),
                 const("one", 1, TensorProto.INT64), const("ax1", [1], TensorProto.INT64, [1]),
                 const("ax0", [0], TensorProto.INT64, [1]),
                 N("Range", ["qs", "qe", "one"], ["qi"], name="/query_positions"),
                 N("Range", ["ks", "ke", "one"], ["kj"], name="/key_positions"),
                 N("Unsqueeze", ["qi", "ax1"], ["qc"], name="/query_column"),
                 N("Unsqueeze", ["kj", "ax0"], ["kr"], name="/key_row"),
                 N("LessOrEqual", ["kr", "qc"], ["keep"], name="/causal")]
        if w:
            nodes += [const("w", w, TensorProto.INT64), N("Add", ["kr", "w"], ["kw"], name="/window_end"),
                      N("Less", ["qc", "kw"], ["inside"], name="/inside"),
                      N("And", ["keep", "inside"], ["kept"], name="/kept")]
        else:
            nodes.append(N("Identity", ["keep"], ["kept"], name="/kept"))
        return nodes + [
            const("zero", 0.0), const("ninf", float("-inf")),
            N("Where", ["kept", "zero", "ninf"], ["bias"], name="/bias"),
            N("Transpose", ["x"], ["xt"], name="/keys", perm=[1, 0]),
            N("MatMul", [q, "xt"], ["s"], name="/scores"),
            N("Add", ["s", "bias"], ["sm"], name="/masked"),
            N("Softmax", ["sm"], ["p"], name="/softmax", axis=1),
            N("MatMul", ["p", "x"], [y], name="/mix")]

    def plan(w, start_of=lambda r: r * b):
        ranks_out = []
        for r in range(ranks):
            binds = [{"value": "x_local", "spec": "x", "slice": [[r * b, r * b + b], None]},
                     {"value": "x", "spec": "x"},
                     {"value": "y_local", "spec": "y", "slice": [[r * b, r * b + b], None]}]
            s = start_of(r)
            ranks_out.append(model(attention("x_local", "y_local", s, s + b, w),
                                   [vi("x_local", [b, dim]), vi("x", [seq, dim])],
                                   [vi("y_local", [b, dim])], binds))
        return ranks_out

    for name, w in (("window", window), ("causal_range", 0)):
        spec = model(attention("x", "y", 0, seq, w), [vi("x", [seq, dim])], [vi("y", [seq, dim])])
        shards = {"shards": plan(w)}
        if w:
            shards["shards_window"] = plan(w + 1)
        else:
            shards["shards_offset"] = plan(w, start_of=lambda r: 0)
        write(os.path.join(out, name), spec, shards)


CASES = [f16_cases, masked_mean_cases, count_part_cases, variance_cases, periodic_table_cases,
         cancelled_cases, reciprocal_cases, hidden_count_cases, cases_count_cases, hidden_sums_cases,
         causal_mask_cases, index_positions_cases, index_table_cases, count_from_shape_cases,
         narrow_int_cases, positions_cases, window_cases]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "soundness")
    for case in CASES:
        case(out)


if __name__ == "__main__":
    main()
