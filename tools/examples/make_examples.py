#!/usr/bin/env python3
"""Writes the README's example under models/examples/: a two-layer SiLU MLP and its Megatron
tensor-parallel plan over two ranks (column-parallel first layer, row-parallel second layer,
one all-reduce), plus the same plan with the all-reduce missing. Deterministic output."""
import json
import os
import sys

import onnx
from onnx import TensorProto, helper

B, D, F = 4, 8, 16  # batch, model width, hidden width
TP = 2


def mlp_nodes(prefix, w1, w2, out):
    return [
        helper.make_node("MatMul", ["x", w1], ["a"], name=f"{prefix}/fc1/MatMul"),
        helper.make_node("Sigmoid", ["a"], ["s"], name=f"{prefix}/act/Sigmoid"),
        helper.make_node("Mul", ["a", "s"], ["h"], name=f"{prefix}/act/Mul"),
        helper.make_node("MatMul", ["h", w2], [out], name=f"{prefix}/fc2/MatMul"),
    ]


def model(graph, extra_opsets=()):
    opsets = [helper.make_opsetid("", 17)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="onnx-tv examples")
    m.ir_version = 8
    return m


def spec():
    g = helper.make_graph(
        mlp_nodes("", "w1", "w2", "y"), "mlp_spec",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, D]),
         helper.make_tensor_value_info("w1", TensorProto.FLOAT, [D, F]),
         helper.make_tensor_value_info("w2", TensorProto.FLOAT, [F, D])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, D])])
    return model(g)


def rank(r, with_allreduce):
    nodes = mlp_nodes("", "w1_shard", "w2_shard", "y_partial")
    out = "y_partial"
    if with_allreduce:
        nodes.append(helper.make_node("AllReduce", ["y_partial"], ["y"], domain="onnx_tv",
                                      name="/fc2/AllReduce", group=list(range(TP))))
        out = "y"
    g = helper.make_graph(
        nodes, f"mlp_rank{r}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, D]),
         helper.make_tensor_value_info("w1_shard", TensorProto.FLOAT, [D, F // TP]),
         helper.make_tensor_value_info("w2_shard", TensorProto.FLOAT, [F // TP, D])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [B, D])])
    return model(g, [("onnx_tv", 1)]), out


def write_plan(folder, with_allreduce):
    os.makedirs(folder, exist_ok=True)
    bindings = []
    for r in range(TP):
        m, out = rank(r, with_allreduce)
        onnx.save(m, os.path.join(folder, f"rank{r}.onnx"))
        cols = [r * F // TP, (r + 1) * F // TP]
        bindings += [
            {"rank": r, "value": "x", "spec": "x"},
            {"rank": r, "value": "w1_shard", "spec": "w1", "slice": [None, cols]},
            {"rank": r, "value": "w2_shard", "spec": "w2", "slice": [cols, None]},
            {"rank": r, "value": out, "spec": "y"},
        ]
    plan = {"format": "onnx-tv.plan/1", "world_size": TP, "bindings": bindings}
    with open(os.path.join(folder, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1, sort_keys=True)
        f.write("\n")


def main(out_dir):
    ex = os.path.join(out_dir, "mlp_tp2")
    os.makedirs(ex, exist_ok=True)
    onnx.save(spec(), os.path.join(ex, "spec.onnx"))
    write_plan(os.path.join(ex, "shards"), True)
    write_plan(os.path.join(ex, "shards_bug"), False)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "models", "examples"))
