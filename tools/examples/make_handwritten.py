#!/usr/bin/env python3
"""Writes models/handwritten/: plans written directly in the plan format, in a style of their
own (SPMD programs per pipeline stage, mesh placements, bindings in model metadata, Gemm and
explicit Transpose, Send/Recv by peer_axis), to check that onnx-tv reads the format and not
just the zoo generator's habits.

mlp_dp2_pp2: loss = mean(y^2) with y = tanh(x w1) w2, forward and hand-written backward;
mesh dp x pp = 2 x 2; stage 0 holds w1, stage 1 holds w2 and the loss; gradients all-reduced
over dp. The variant shards_local_mean scales each data-parallel loss by its local token count
instead of the global one (the loss comes out twice too large).

mlp_mb4 and mlp_wd_mb4: the same MLP (mlp_wd_mb4 with weight decay on w2) on one rank that
accumulates gradients over four micro-batches, for checks with fewer micro-batches."""
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


# Gradient accumulation: one rank, MB micro-batches of B // MB rows, written in a style of its
# own (each micro-batch writes its own constants, one Sum adds them up). With weight decay lam,
# the spec's loss adds lam * sum(w2^2); each micro-batch adds its share lam * wd_share.
MB = 4


def spec_wd(lam):
    n = [
        helper.make_node("Gemm", ["x", "w1"], ["a"], name="/fc1/Gemm"),
        helper.make_node("Tanh", ["a"], ["h"], name="/fc1/Tanh"),
        helper.make_node("MatMul", ["h", "w2"], ["y"], name="/fc2/MatMul"),
        helper.make_node("Mul", ["y", "y"], ["y2"], name="/loss/Square"),
        helper.make_node("ReduceSum", ["y2"], ["sq"], name="/loss/ReduceSum", keepdims=0),
        const("inv_n", 1.0 / N),
        helper.make_node("Mul", ["sq", "inv_n"], ["data_loss"], name="/loss/Scale"),
        const("two_inv_n", 2.0 / N),
        helper.make_node("Mul", ["y", "two_inv_n"], ["dy"], name="/loss/Mul_grad"),
        helper.make_node("Gemm", ["h", "dy"], ["dw2_data"], name="/fc2/Gemm_grad_w", transA=1),
        helper.make_node("Gemm", ["dy", "w2"], ["dh"], name="/fc2/Gemm_grad_x", transB=1),
        helper.make_node("Mul", ["h", "h"], ["hh"], name="/fc1/Tanh_grad_sq"),
        const("one", 1.0),
        helper.make_node("Sub", ["one", "hh"], ["dtanh"], name="/fc1/Tanh_grad_sub"),
        helper.make_node("Mul", ["dh", "dtanh"], ["da"], name="/fc1/Tanh_grad"),
        helper.make_node("Gemm", ["x", "da"], ["dw1"], name="/fc1/Gemm_grad_w", transA=1),
    ]
    n += weight_decay("", "data_loss", "dw2_data", "loss", "dw2", lam)
    return mdl(n, "spec", [f("x", [B, D]), f("w1", [D, D]), f("w2", [D, D])],
               [f("loss", []), f("dw1", [D, D]), f("dw2", [D, D])])


def weight_decay(p, loss_in, grad_in, loss_out, grad_out, lam):
    """loss_out = loss_in + lam * sum(w2^2), grad_out = grad_in + 2 lam w2 (identities when
    lam is 0)."""
    if not lam:
        return [helper.make_node("Identity", [loss_in], [loss_out], name=p + "/wd/Identity_loss"),
                helper.make_node("Identity", [grad_in], [grad_out], name=p + "/wd/Identity_grad")]
    return [
        helper.make_node("Mul", ["w2", "w2"], [p + "w2_sq"], name=p + "/wd/Square"),
        helper.make_node("ReduceSum", [p + "w2_sq"], [p + "w2_ss"], name=p + "/wd/ReduceSum",
                         keepdims=0),
        const(p + "lam", lam),
        helper.make_node("Mul", [p + "w2_ss", p + "lam"], [p + "wd_loss"], name=p + "/wd/Scale"),
        helper.make_node("Add", [loss_in, p + "wd_loss"], [loss_out], name=p + "/wd/Add_loss"),
        const(p + "two_lam", 2 * lam),
        helper.make_node("Mul", ["w2", p + "two_lam"], [p + "wd_grad"], name=p + "/wd/Mul_grad"),
        helper.make_node("Add", [grad_in, p + "wd_grad"], [grad_out], name=p + "/wd/Add_grad"),
    ]


def accumulating(lam_share, from_zero=False):
    """One program: MB micro-batch bodies, then one Sum per gradient and for the loss; with
    from_zero, a chain of Adds that starts from a zero constant instead."""
    b = B // MB
    n, inputs = [], [f("w1", [D, D]), f("w2", [D, D])]
    bindings = [{"value": "w1", "spec": "w1"}, {"value": "w2", "spec": "w2"}]
    for k in range(MB):
        p = "mb%d_" % k
        s = "/mb%d" % k
        n += [
            helper.make_node("Gemm", [p + "x", "w1"], [p + "a"], name=s + "/fc1/Gemm"),
            helper.make_node("Tanh", [p + "a"], [p + "h"], name=s + "/fc1/Tanh"),
            helper.make_node("MatMul", [p + "h", "w2"], [p + "y"], name=s + "/fc2/MatMul"),
            helper.make_node("Mul", [p + "y", p + "y"], [p + "y2"], name=s + "/loss/Square"),
            helper.make_node("ReduceSum", [p + "y2"], [p + "sq"], name=s + "/loss/ReduceSum",
                             keepdims=0),
            const(p + "inv_n", 1.0 / N),
            helper.make_node("Mul", [p + "sq", p + "inv_n"], [p + "data_loss"],
                             name=s + "/loss/Scale"),
            const(p + "two_inv_n", 2.0 / N),
            helper.make_node("Mul", [p + "y", p + "two_inv_n"], [p + "dy"], name=s + "/loss/Mul_grad"),
            helper.make_node("Gemm", [p + "h", p + "dy"], [p + "dw2_data"],
                             name=s + "/fc2/Gemm_grad_w", transA=1),
            helper.make_node("Gemm", [p + "dy", "w2"], [p + "dh"], name=s + "/fc2/Gemm_grad_x",
                             transB=1),
            helper.make_node("Mul", [p + "h", p + "h"], [p + "hh"], name=s + "/fc1/Tanh_grad_sq"),
            const(p + "one", 1.0),
            helper.make_node("Sub", [p + "one", p + "hh"], [p + "dtanh"],
                             name=s + "/fc1/Tanh_grad_sub"),
            helper.make_node("Mul", [p + "dh", p + "dtanh"], [p + "da"], name=s + "/fc1/Tanh_grad"),
            helper.make_node("Gemm", [p + "x", p + "da"], [p + "dw1"], name=s + "/fc1/Gemm_grad_w",
                             transA=1),
        ]
        n += weight_decay(p, p + "data_loss", p + "dw2_data", p + "loss", p + "dw2", lam_share)
        inputs.append(f(p + "x", [b, D]))
        bindings.append({"value": p + "x", "spec": "x", "local_slice": [[k * b, (k + 1) * b], None]})
    if from_zero:
        n.append(const("zero", 0.0))
    for out in ("loss", "dw1", "dw2"):
        bindings.append({"value": out, "spec": out})
        if not from_zero:
            n.append(helper.make_node("Sum", ["mb%d_%s" % (k, out) for k in range(MB)], [out],
                                      name="/accumulate/Sum_" + out))
            continue
        acc = "zero"
        for k in range(MB):
            nxt = out if k == MB - 1 else "acc%d_%s" % (k, out)
            n.append(helper.make_node("Add", [acc, "mb%d_%s" % (k, out)], [nxt],
                                      name="/accumulate/%s/Add_mb%d" % (out, k)))
            acc = nxt
    return mdl(n, "accumulate", inputs, [f("loss", []), f("dw1", [D, D]), f("dw2", [D, D])],
               bindings)


def write_accumulating(folder, lam_share, from_zero=False):
    os.makedirs(folder, exist_ok=True)
    onnx.save(accumulating(lam_share, from_zero), os.path.join(folder, "rank0.onnx"))


def main(out):
    d = os.path.join(out, "mlp_dp2_pp2")
    os.makedirs(d, exist_ok=True)
    onnx.save(spec(), os.path.join(d, "spec.onnx"))
    write(os.path.join(d, "shards"), 1.0 / N)
    write(os.path.join(d, "shards_local_mean"), 1.0 / (N // DP))
    # mlp_mb4: gradient accumulation (shards_from_zero: into zeros); mlp_wd_mb4: with weight decay, each micro-batch adding
    # its share (lam / MB: right; lam / 2: right only for two micro-batches)
    d = os.path.join(out, "mlp_mb4")
    os.makedirs(d, exist_ok=True)
    onnx.save(spec_wd(0), os.path.join(d, "spec.onnx"))
    write_accumulating(os.path.join(d, "shards"), 0)
    write_accumulating(os.path.join(d, "shards_from_zero"), 0, from_zero=True)
    d = os.path.join(out, "mlp_wd_mb4")
    lam = 0.25
    os.makedirs(d, exist_ok=True)
    onnx.save(spec_wd(lam), os.path.join(d, "spec.onnx"))
    write_accumulating(os.path.join(d, "shards"), lam / MB)
    write_accumulating(os.path.join(d, "shards_wd_per_two"), lam / 2)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(__file__), "..", "..", "models", "handwritten"))
