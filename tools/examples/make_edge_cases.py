#!/usr/bin/env python3
"""Writes models/edge_cases/: small plans, each on an input that once gave a wrong verdict or a
crash (tests/e2e/edge_cases_test.cpp runs them). Each case is a folder with spec.onnx and one or
more shards folders (rank<N>.onnx with bindings in metadata, plan.json where collectives need a
world size).

mean_2p24: a mean over 2 * (2^24 + 1) elements, split over two ranks; the count is not a float32.
const_outputs: rank outputs that are constants (an initializer, Identity, Transpose, Slice and
  Split of constants) bound to spec outputs; shards_wrong holds one constant that differs.
const_table_outputs: a rank's Constant output along a dimension reduction shrinks.
ir<V>: the same small plan as IR version V (3 to 6) with default-domain opset 9; ir3_opset5
  with opset 5, whose Relu (Relu-1) onnx-tv does not model.
reshape_allowzero: Reshape of an empty [4, 0] to [0, 4] with allowzero=1.
nan_log, nan_zero_inf, nan_const: a rank value undefined over the reals (log of -1; 0 * inf;
  a NaN initializer), on inputs too large to check at full size.
relu_odd: relu(x) - relu(-x) for x (shards) and relu(x) + relu(-x) for x (shards_wrong).
uneven_gather: rows 0-1 and 2-5 of x on two ranks, gathered back by an AllGather of pieces of
  different sizes (shards); the same gathered in the wrong order (shards_wrong).
many_kept: twelve inputs x<i>[3, 4], each concatenated with two rows of its own, so twelve
  dimensions of size 3 keep their full size for twelve reasons; one rank runs the spec."""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=(), bindings=None, opset=17, ir=8, comm=False):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("onnx_tv", 1)] if comm else [])
    m = helper.make_model(g, opset_imports=ops, producer_name="edge")
    m.ir_version = ir
    if bindings is not None:
        helper.set_model_props(m, {"onnx_tv.bindings": json.dumps(bindings)})
    return m


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def const(name, array):
    return helper.make_node("Constant", [], [name], name="/" + name,
                            value=numpy_helper.from_array(np.asarray(array), name + "_v"))


def save(folder, spec, ranks, plan=None, shards="shards"):
    d = os.path.join(folder, shards)
    os.makedirs(d, exist_ok=True)
    if spec is not None:
        onnx.save(spec, os.path.join(folder, "spec.onnx"))
    for r, m in enumerate(ranks):
        onnx.save(m, os.path.join(d, "rank%d.onnx" % r))
    if plan is not None:
        with open(os.path.join(d, "plan.json"), "w") as f:
            json.dump(plan, f, indent=1)


def mean_2p24(out):
    half = (1 << 24) + 1
    spec = model([helper.make_node("ReduceMean", ["x"], ["y"], name="/mean", keepdims=0)],
                 [vi("x", [2 * half])], [vi("y", [])])
    ranks = []
    bindings = []
    for r in range(2):
        nodes = [
            helper.make_node("ReduceMean", ["x_local"], ["m"], name="/mean", keepdims=0),
            helper.make_node("AllReduce", ["m"], ["s"], domain="onnx_tv", name="/allreduce",
                             group=[0, 1]),
            const("half", np.float32(0.5)),
            helper.make_node("Mul", ["s", "half"], ["y"], name="/scale"),
        ]
        ranks.append(model(nodes, [vi("x_local", [half])], [vi("y", [])], comm=True))
        bindings += [{"rank": r, "value": "x_local", "spec": "x", "slice": [[r * half, (r + 1) * half]]},
                     {"rank": r, "value": "y", "spec": "y"}]
    save(out, spec, ranks, {"format": "onnx-tv.plan/1", "world_size": 2, "bindings": bindings})


def const_outputs(out):
    table = np.arange(6, dtype=np.float32).reshape(2, 3)
    spec_nodes = [
        const("t", table),
        helper.make_node("Identity", ["t"], ["c_init"], name="/init"),
        helper.make_node("Identity", ["t"], ["c_id"], name="/id"),
        helper.make_node("Transpose", ["t"], ["c_tr"], name="/tr"),
        const("c_sl", table[:1]),
        const("c_sp", table[1:]),
        helper.make_node("Mul", ["x", "x"], ["y"], name="/sq"),
    ]
    outputs = [vi("y", [4]), vi("c_init", [2, 3]), vi("c_id", [2, 3]), vi("c_tr", [3, 2]),
               vi("c_sl", [1, 3]), vi("c_sp", [1, 3])]
    spec = model(spec_nodes, [vi("x", [4])], outputs)

    def rank(wrong):
        t = table.copy()
        if wrong:
            t[1, 2] = 7
        nodes = [
            const("k", t),
            helper.make_node("Identity", ["k"], ["c_id"], name="/id"),
            helper.make_node("Transpose", ["k"], ["c_tr"], name="/tr"),
            const("starts", np.array([0], np.int64)),
            const("ends", np.array([1], np.int64)),
            helper.make_node("Slice", ["k", "starts", "ends"], ["c_sl"], name="/slice"),
            helper.make_node("Split", ["k"], ["c_sp0", "c_sp"], name="/split", axis=0,
                             num_outputs=2),
            helper.make_node("Mul", ["x", "x"], ["y"], name="/sq"),
        ]
        init = numpy_helper.from_array(t, "c_init")
        names = ["y", "c_init", "c_id", "c_tr", "c_sl", "c_sp"]
        bindings = [{"value": "x", "spec": "x"}] + [{"value": n, "spec": n} for n in names]
        return model(nodes, [vi("x", [4])], [vi("y", [4]), vi("c_init", [2, 3]),
                     vi("c_id", [2, 3]), vi("c_tr", [3, 2]), vi("c_sl", [1, 3]),
                     vi("c_sp", [1, 3])], inits=[init], bindings=bindings, opset=18)

    save(out, spec, [rank(False)])
    save(out, None, [rank(True)], shards="shards_wrong")


def const_table_outputs(out):
    # A table along x's dimension, which reduction shrinks: the spec outputs its Constant and
    # an Identity of it, the rank its own Constant directly (shards_wrong: reversed).
    tab = np.arange(4, dtype=np.float32)
    spec = model([const("t", tab), helper.make_node("Mul", ["x", "t"], ["y"], name="/mul"),
                  helper.make_node("Identity", ["t"], ["ti"], name="/ti")],
                 [vi("x", [4])], [vi("y", [4]), vi("t", [4]), vi("ti", [4])])

    def rank(k):
        b = [{"value": "x", "spec": "x"}, {"value": "y", "spec": "y"},
             {"value": "k", "spec": "t"}, {"value": "k", "spec": "ti"}]
        return model([const("k", k), helper.make_node("Mul", ["x", "k"], ["y"], name="/mul")],
                     [vi("x", [4])], [vi("y", [4]), vi("k", [4])], bindings=b)

    save(out, spec, [rank(tab)])
    save(out, None, [rank(tab[::-1].copy())], shards="shards_wrong")


def ir_version(out, ir, opset=9):
    # y = relu(x @ w) split by columns of w over two ranks; opset 9 (Relu-6, MatMul-9).
    spec = model([helper.make_node("MatMul", ["x", "w"], ["h"], name="/mm"),
                  helper.make_node("Relu", ["h"], ["y"], name="/relu")],
                 [vi("x", [2, 4]), vi("w", [4, 6])], [vi("y", [2, 6])], opset=opset, ir=ir)
    ranks = []
    for r in range(2):
        cols = [[r * 3, (r + 1) * 3]]
        b = [{"value": "x", "spec": "x"},
             {"value": "w_part", "spec": "w", "slice": [None, cols[0]]},
             {"value": "y_part", "spec": "y", "slice": [None, cols[0]]}]
        ranks.append(model([helper.make_node("MatMul", ["x", "w_part"], ["h"], name="/mm"),
                            helper.make_node("Relu", ["h"], ["y_part"], name="/relu")],
                           [vi("x", [2, 4]), vi("w_part", [4, 3])], [vi("y_part", [2, 3])],
                           bindings=b, opset=opset, ir=ir))
    save(out, spec, ranks)


def reshape_allowzero(out):
    # An empty e[4, 0] reshaped to [0, 4] with allowzero=1: the target's 0 is a real 0.
    def nodes():
        return [const("target", np.array([0, 4], np.int64)),
                helper.make_node("Reshape", ["e", "target"], ["z"], name="/reshape",
                                 allowzero=1),
                helper.make_node("Mul", ["x", "x"], ["y"], name="/sq")]
    ins = [vi("x", [4, 4]), vi("e", [4, 0])]
    outs = [vi("y", [4, 4]), vi("z", [0, 4])]
    spec = model(nodes(), ins, outs)
    b = [{"value": n, "spec": n} for n in ("x", "e", "y", "z")]
    save(out, spec, [model(nodes(), ins, outs, bindings=b)])


def nan_value(out, kind, n=1 << 22):
    spec = model([helper.make_node("Mul", ["x", "x"], ["y"], name="/sq")],
                 [vi("x", [n])], [vi("y", [n])])
    inits = []
    if kind == "nan":
        bad = [helper.make_node("Identity", ["nan"], ["u"], name="/bad/Identity")]
        inits = [numpy_helper.from_array(np.float32(np.nan), "nan")]
    elif kind == "log":
        bad = [const("minus_one", np.float32(-1)),
               helper.make_node("Log", ["minus_one"], ["u"], name="/bad/Log")]
    else:
        bad = [const("zero", np.float32(0)), const("inf", np.float32(np.inf)),
               helper.make_node("Mul", ["zero", "inf"], ["u"], name="/bad/Mul")]
    nodes = bad + [helper.make_node("Mul", ["x", "x"], ["sq"], name="/sq"),
                   helper.make_node("Add", ["sq", "u"], ["y"], name="/add")]
    b = [{"value": "x", "spec": "x"}, {"value": "y", "spec": "y"}]
    save(out, spec, [model(nodes, [vi("x", [n])], [vi("y", [n])], inits=inits, bindings=b)])


def relu_odd(out):
    spec = model([helper.make_node("Identity", ["x"], ["y"], name="/id")],
                 [vi("x", [4])], [vi("y", [4])])

    def rank(op):
        nodes = [helper.make_node("Relu", ["x"], ["p"], name="/relu_pos"),
                 helper.make_node("Neg", ["x"], ["nx"], name="/neg"),
                 helper.make_node("Relu", ["nx"], ["n"], name="/relu_neg"),
                 helper.make_node(op, ["p", "n"], ["y"], name="/combine")]
        b = [{"value": "x", "spec": "x"}, {"value": "y", "spec": "y"}]
        return model(nodes, [vi("x", [4])], [vi("y", [4])], bindings=b)

    save(out, spec, [rank("Sub")])
    save(out, None, [rank("Add")], shards="shards_wrong")


def uneven_gather(out):
    spec = model([helper.make_node("Relu", ["x"], ["y"], name="/relu")],
                 [vi("x", [6, 8])], [vi("y", [6, 8])])
    cuts = [0, 2, 6]

    def ranks(group):
        out_ranks, bindings = [], []
        for r in range(2):
            nodes = [helper.make_node("Relu", ["x_local"], ["h"], name="/relu"),
                     helper.make_node("AllGather", ["h"], ["y"], domain="onnx_tv",
                                      name="/allgather", group=group, axis=0)]
            rows = cuts[r + 1] - cuts[r]
            out_ranks.append(model(nodes, [vi("x_local", [rows, 8])], [vi("y", [6, 8])], comm=True))
            bindings += [{"rank": r, "value": "x_local", "spec": "x",
                          "slice": [[cuts[r], cuts[r + 1]], [0, 8]]},
                         {"rank": r, "value": "y", "spec": "y"}]
        return out_ranks, {"format": "onnx-tv.plan/1", "world_size": 2, "bindings": bindings}

    save(out, spec, *ranks([0, 1]))
    save(out, None, *ranks([1, 0]), shards="shards_wrong")


def many_kept(out):
    nodes, inputs, outputs, binds = [], [], [], []
    for i in range(12):
        nodes += [const("pad%d" % i, np.zeros((2, 4), np.float32)),
                  helper.make_node("Concat", ["x%d" % i, "pad%d" % i], ["y%d" % i], name="/concat%d" % i, axis=0)]
        inputs.append(vi("x%d" % i, [3, 4]))
        outputs.append(vi("y%d" % i, [5, 4]))
        binds += [{"value": "x%d" % i, "spec": "x%d" % i}, {"value": "y%d" % i, "spec": "y%d" % i}]
    save(out, model(nodes, inputs, outputs), [model(nodes, inputs, outputs, bindings=binds)])


def main(out):
    d = lambda name: os.path.join(out, name)
    mean_2p24(d("mean_2p24"))
    const_outputs(d("const_outputs"))
    const_table_outputs(d("const_table_outputs"))
    for ir in (3, 4, 5, 6):
        ir_version(d("ir%d" % ir), ir)
    ir_version(d("ir3_opset5"), 3, opset=5)
    reshape_allowzero(d("reshape_allowzero"))
    nan_value(d("nan_log"), "log")
    nan_value(d("nan_zero_inf"), "zero_inf")
    nan_value(d("nan_const"), "nan")
    relu_odd(d("relu_odd"))
    uneven_gather(d("uneven_gather"))
    many_kept(d("many_kept"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(__file__), "..", "..", "models", "edge_cases"))
