#!/usr/bin/env python3
"""Writes models/handwritten/: plans written directly in the plan format, in a style of their
own (SPMD programs per pipeline stage, mesh placements, bindings in model metadata, Gemm and
explicit Transpose, Send/Recv by peer_axis), to check that onnx-tv reads the format and not
just the zoo generator's habits.

mlp_dp2_pp2: loss = mean(y^2) with y = tanh(x w1) w2, forward and hand-written backward;
mesh dp x pp = 2 x 2; stage 0 holds w1, stage 1 holds w2 and the loss; gradients all-reduced
over dp. The variant shards_local_mean scales each data-parallel loss by its local token count
instead of the global one (the loss comes out twice too large)."""
import json
import os
import sys

import onnx
from onnx import TensorProto, helper

B, D = 4, 8
N = B * D  # elements averaged by the loss
DP = 2


def mdl(nodes, name, inputs, outputs, bindings=None, comm=False):
    g = helper.make_graph(nodes, name, inputs, outputs)
    ops = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("onnx_tv", 1)] if comm else [])
    m = helper.make_model(g, opset_imports=ops, producer_name="hand")
    m.ir_version = 9
    if bindings is not None:
        helper.set_model_props(m, {"onnx_tv.bindings": json.dumps(bindings)})
    return m


def f(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def const(name, value):
    return helper.make_node("Constant", [], [name], name="/" + name,
                            value=helper.make_tensor(name + "_v", TensorProto.FLOAT, [], [value]))


def spec():
    n = [
        helper.make_node("Gemm", ["x", "w1"], ["a"], name="/fc1/Gemm"),
        helper.make_node("Tanh", ["a"], ["h"], name="/fc1/Tanh"),
        helper.make_node("MatMul", ["h", "w2"], ["y"], name="/fc2/MatMul"),
        helper.make_node("Mul", ["y", "y"], ["y2"], name="/loss/Square"),
        helper.make_node("ReduceMean", ["y2"], ["loss"], name="/loss/ReduceMean", keepdims=0),
        const("two_over_n", 2.0 / N),
        helper.make_node("Mul", ["y", "two_over_n"], ["dy"], name="/loss/Mul_grad"),
        helper.make_node("Transpose", ["h"], ["hT"], name="/fc2/Transpose_h"),
        helper.make_node("MatMul", ["hT", "dy"], ["dw2"], name="/fc2/MatMul_grad_w"),
        helper.make_node("Transpose", ["w2"], ["w2T"], name="/fc2/Transpose_w"),
        helper.make_node("MatMul", ["dy", "w2T"], ["dh"], name="/fc2/MatMul_grad_x"),
        helper.make_node("Mul", ["h", "h"], ["hh"], name="/fc1/Tanh_grad_sq"),
        const("one", 1.0),
        helper.make_node("Sub", ["one", "hh"], ["dtanh"], name="/fc1/Tanh_grad_sub"),
        helper.make_node("Mul", ["dh", "dtanh"], ["da"], name="/fc1/Tanh_grad"),
        helper.make_node("Gemm", ["x", "da"], ["dw1"], name="/fc1/Gemm_grad_w", transA=1),
    ]
    return mdl(n, "spec", [f("x", [B, D]), f("w1", [D, D]), f("w2", [D, D])],
               [f("loss", []), f("dw1", [D, D]), f("dw2", [D, D])])


def stage0():
    b = B // DP
    n = [
        helper.make_node("Gemm", ["x_local", "w1"], ["a"], name="/s0/fc1/Gemm"),
        helper.make_node("Tanh", ["a"], ["h"], name="/s0/fc1/Tanh"),
        helper.make_node("Send", ["h"], [], domain="onnx_tv", name="/s0/send_h",
                         peer_axis="pp", peer_offset=1, tag=1),
        helper.make_node("Recv", [], ["dh"], domain="onnx_tv", name="/s0/recv_dh",
                         peer_axis="pp", peer_offset=1, tag=2),
        helper.make_node("Mul", ["h", "h"], ["hh"], name="/s0/fc1/Tanh_grad_sq"),
        const("one", 1.0),
        helper.make_node("Sub", ["one", "hh"], ["dtanh"], name="/s0/fc1/Tanh_grad_sub"),
        helper.make_node("Mul", ["dh", "dtanh"], ["da"], name="/s0/fc1/Tanh_grad"),
        helper.make_node("Gemm", ["x_local", "da"], ["dw1_local"], name="/s0/fc1/Gemm_grad_w",
                         transA=1),
        helper.make_node("AllReduce", ["dw1_local"], ["dw1"], domain="onnx_tv",
                         name="/s0/dp/AllReduce_dw1", group_axes=["dp"]),
    ]
    bindings = [
        {"value": "x_local", "spec": "x", "placements": ["Shard(0)", "Replicate()"]},
        {"value": "w1", "spec": "w1", "placements": ["Replicate()", "Replicate()"]},
        {"value": "dw1", "spec": "dw1", "placements": ["Replicate()", "Replicate()"]},
    ]
    g = mdl(n, "stage0", [f("x_local", [b, D]), f("w1", [D, D])], [f("dw1", [D, D])],
            bindings, comm=True)
    g.graph.value_info.append(f("dh", [b, D]))
    return g


def stage1(loss_scale):
    b = B // DP
    n = [
        helper.make_node("Recv", [], ["h"], domain="onnx_tv", name="/s1/recv_h",
                         peer_axis="pp", peer_offset=-1, tag=1),
        helper.make_node("MatMul", ["h", "w2"], ["y"], name="/s1/fc2/MatMul"),
        helper.make_node("Mul", ["y", "y"], ["y2"], name="/s1/loss/Square"),
        helper.make_node("ReduceSum", ["y2"], ["sq"], name="/s1/loss/ReduceSum", keepdims=0),
        const("inv_n", loss_scale),
        helper.make_node("Mul", ["sq", "inv_n"], ["loss_part"], name="/s1/loss/Scale"),
        const("two_inv_n", 2 * loss_scale),
        helper.make_node("Mul", ["y", "two_inv_n"], ["dy"], name="/s1/loss/Mul_grad"),
        helper.make_node("Transpose", ["h"], ["hT"], name="/s1/fc2/Transpose_h"),
        helper.make_node("MatMul", ["hT", "dy"], ["dw2_local"], name="/s1/fc2/MatMul_grad_w"),
        helper.make_node("AllReduce", ["dw2_local"], ["dw2"], domain="onnx_tv",
                         name="/s1/dp/AllReduce_dw2", group_axes=["dp"]),
        helper.make_node("Gemm", ["dy", "w2"], ["dh"], name="/s1/fc2/Gemm_grad_x", transB=1),
        helper.make_node("Send", ["dh"], ["send_token"], domain="onnx_tv", name="/s1/send_dh",
                         peer_axis="pp", peer_offset=-1, tag=2),
    ]
    bindings = [
        {"value": "w2", "spec": "w2"},
        {"value": "dw2", "spec": "dw2"},
        {"value": "loss_part", "spec": "loss", "placements": ["Partial()", "Replicate()"]},
    ]
    g = mdl(n, "stage1", [f("w2", [D, D])], [f("loss_part", []), f("dw2", [D, D])],
            bindings, comm=True)
    g.graph.value_info.append(f("h", [b, D]))
    return g


def write(folder, loss_scale):
    os.makedirs(folder, exist_ok=True)
    onnx.save(stage0(), os.path.join(folder, "stage0.onnx"))
    onnx.save(stage1(loss_scale), os.path.join(folder, "stage1.onnx"))
    plan = {
        "format": "onnx-tv.plan/1",
        "world_size": 4,
        "mesh": {"axes": ["dp", "pp"], "shape": [2, 2]},
        "programs": [{"file": "stage0.onnx", "ranks": {"pp": 0}},
                     {"file": "stage1.onnx", "ranks": {"pp": 1}}],
        "bindings": [],
    }
    with open(os.path.join(folder, "plan.json"), "w") as fp:
        json.dump(plan, fp, indent=1)
        fp.write("\n")


def main(out):
    d = os.path.join(out, "mlp_dp2_pp2")
    os.makedirs(d, exist_ok=True)
    onnx.save(spec(), os.path.join(d, "spec.onnx"))
    write(os.path.join(d, "shards"), 1.0 / N)
    write(os.path.join(d, "shards_local_mean"), 1.0 / (N // DP))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(__file__), "..", "..", "models", "handwritten"))
