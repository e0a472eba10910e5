#!/usr/bin/env python3
"""Writes models/handwritten/lora_ln256/: a LoRA-style adapter after a LayerNorm of dimension
256, where the plan regroups the product. The spec computes (LN(x) @ A) @ B; each of two
data-parallel ranks computes LN(x_local) @ (A @ B) on its rows of x.

shards: the correct plan (the same values, grouped differently).
shards_wrong: the same plan plus a small error term, 2^-40 * x, added to the output. The
difference is below the margin a long double witness search allowed itself (1e-9 of the
values), so the check used to expand every definition instead (each output element is a sum
over the 256 normalised inputs, under a square root of 33,000 terms) and ended UNKNOWN after
45 s; intervals confirm the difference at once.
"""
import json
import os
import sys

import onnx
from onnx import TensorProto, helper

B, D, R = 4, 256, 4  # rows, LayerNorm dimension, adapter rank
EPS = 2.0 ** -40  # the wrong plan's error term, relative to values of order 1 to 1000
DP = 2


def mdl(nodes, name, inputs, outputs, initializers=(), bindings=None):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="hand")
    m.ir_version = 9
    if bindings is not None:
        helper.set_model_props(m, {"onnx_tv.bindings": json.dumps(bindings)})
    return m


def f(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def layer_norm(x, out, prefix):
    return helper.make_node("LayerNormalization", [x, "gamma", "beta"], [out], axis=-1,
                            epsilon=1e-5, name=prefix + "/ln/LayerNormalization")


def spec():
    n = [layer_norm("x", "h", ""),
         helper.make_node("MatMul", ["h", "A"], ["ha"], name="/lora/MatMul_A"),
         helper.make_node("MatMul", ["ha", "B"], ["y"], name="/lora/MatMul_B")]
    return mdl(n, "spec", [f("x", [B, D]), f("gamma", [D]), f("beta", [D]), f("A", [D, R]),
                           f("B", [R, D])], [f("y", [B, D])])


def rank(r, wrong):
    b = B // DP
    n = [layer_norm("x_local", "h", "/rank"),
         helper.make_node("MatMul", ["A", "B"], ["ab"], name="/rank/lora/MatMul_AB"),
         helper.make_node("MatMul", ["h", "ab"], ["y0"], name="/rank/lora/MatMul")]
    inits = []
    if wrong:
        inits.append(helper.make_tensor("eps", TensorProto.FLOAT, [], [EPS]))
        n += [helper.make_node("Mul", ["x_local", "eps"], ["err"], name="/rank/err/Mul"),
              helper.make_node("Add", ["y0", "err"], ["y_local"], name="/rank/err/Add")]
    else:
        n.append(helper.make_node("Identity", ["y0"], ["y_local"], name="/rank/Identity"))
    rows = [[r * b, (r + 1) * b], None]
    bindings = [{"value": "x_local", "spec": "x", "slice": rows},
                {"value": "gamma", "spec": "gamma"}, {"value": "beta", "spec": "beta"},
                {"value": "A", "spec": "A"}, {"value": "B", "spec": "B"},
                {"value": "y_local", "spec": "y", "slice": rows}]
    return mdl(n, "rank%d" % r, [f("x_local", [b, D]), f("gamma", [D]), f("beta", [D]),
                                  f("A", [D, R]), f("B", [R, D])], [f("y_local", [b, D])],
               inits, bindings)


def main(out):
    d = os.path.join(out, "lora_ln256")
    os.makedirs(d, exist_ok=True)
    onnx.save(spec(), os.path.join(d, "spec.onnx"))
    for folder, wrong in (("shards", False), ("shards_wrong", True)):
        os.makedirs(os.path.join(d, folder), exist_ok=True)
        for r in range(DP):
            onnx.save(rank(r, wrong), os.path.join(d, folder, "rank%d.onnx" % r))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models",
                      "handwritten"))
