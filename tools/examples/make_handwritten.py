#!/usr/bin/env python3
"""Writes models/handwritten/: plans written directly in the plan format, in a style of their
own (SPMD programs per pipeline stage, mesh placements, bindings in model metadata, Gemm and
explicit Transpose, Send/Recv by peer_axis), to check that onnx-tv reads the format and not
just the zoo generator's habits.

mlp_dp2_pp2: loss = mean(y^2) with y = tanh(x w1) w2, forward and hand-written backward;
mesh dp x pp = 2 x 2; stage 0 holds w1, stage 1 holds w2 and the loss; gradients all-reduced
over dp. The variant shards_local_mean scales each data-parallel loss by its local token count
instead of the global one (the loss comes out twice too large).

mlp_mb4 and mlp_wd_mb4: the same MLP (mlp_mb4 with a square for tanh, mlp_wd_mb4 with weight
decay on w2) on one rank that
accumulates gradients over four micro-batches, for checks with fewer micro-batches.
hidden_count_mb4: a plan wrong at full size that counts its micro-batches through a term each
adds, hidden in products (see hidden_count)."""
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


def square_activation(nodes):
    """The same nodes with h = a * a instead of tanh(a), and its derivative 2a: tanh's canonical
    form 1 - 2/(1 + exp(2a)) has a constant part, so every micro-batch's loss holds a term in the
    weights alone, which the guard on sums over micro-batches counts (a correct plan, kept
    whole); the square has none."""
    out = []
    for n in nodes:
        a = list(n.input)
        if n.op_type == "Tanh":
            n = helper.make_node("Mul", [a[0], a[0]], list(n.output), name=n.name.replace("Tanh", "Square"))
        elif n.name.endswith("Tanh_grad_sq"):  # hh = h * h -> 2a
            x = a[0][:-1] + "a"  # "<p>h" -> "<p>a"
            n = helper.make_node("Add", [x, x], list(n.output), name=n.name.replace("Tanh", "Square"))
        elif n.name.endswith("Tanh_grad_sub"):  # 1 - hh -> hh
            n = helper.make_node("Identity", [a[1]], list(n.output),
                                 name=n.name.replace("Tanh", "Square"))
        out.append(n)
    return out


def spec_wd(lam, square=False):
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
    if square:
        n = square_activation(n)
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


def accumulating(lam_share, from_zero=False, square=False):
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
    if square:
        n = square_activation(n)
    return mdl(n, "accumulate", inputs, [f("loss", []), f("dw1", [D, D]), f("dw2", [D, D])],
               bindings)


def write_accumulating(folder, lam_share, from_zero=False, square=False):
    os.makedirs(folder, exist_ok=True)
    onnx.save(accumulating(lam_share, from_zero, square), os.path.join(folder, "rank0.onnx"))


def hidden_count():
    """A plan wrong at full size that only counts its micro-batches in disguise: each of MB
    bodies adds (s+1)^2 - s^2 - 2s = 1, s a sum of W inputs (a Gather with constant indices keeps
    W whole), so T = sum over bodies = MB, and O = c * (T^2 - 5T + 7) is c with 2 or 3 bodies
    and 3c with 4. The spec's O is c."""
    W = 40
    spec = mdl([helper.make_node("Identity", ["c"], ["O"], name="/Identity")], "spec",
               [f("x", [MB, W]), f("c", [])], [f("O", [])])
    idx = helper.make_node("Constant", [], ["idx"], name="/idx",
                           value=helper.make_tensor("idx_v", TensorProto.INT64, [W], list(range(W))))
    n = [idx, const("one", 1.0), const("two", 2.0), const("five", 5.0), const("seven", 7.0)]
    for k in range(MB):
        p, s = "mb%d_" % k, "/mb%d" % k
        n += [helper.make_node("Gather", [p + "x", "idx"], [p + "g"], axis=1, name=s + "/Gather"),
              helper.make_node("ReduceSum", [p + "g"], [p + "s"], keepdims=0, name=s + "/ReduceSum"),
              helper.make_node("Add", [p + "s", "one"], [p + "s1"], name=s + "/Add"),
              helper.make_node("Mul", [p + "s1", p + "s1"], [p + "sq1"], name=s + "/Square_1"),
              helper.make_node("Mul", [p + "s", p + "s"], [p + "sq"], name=s + "/Square"),
              helper.make_node("Mul", [p + "s", "two"], [p + "twice"], name=s + "/Twice"),
              helper.make_node("Sub", [p + "sq1", p + "sq"], [p + "d"], name=s + "/Sub"),
              helper.make_node("Sub", [p + "d", p + "twice"], [p + "one"], name=s + "/Sub_1")]
    n += [helper.make_node("Sum", ["mb%d_one" % k for k in range(MB)], ["T"], name="/accumulate/Sum"),
          helper.make_node("Mul", ["T", "T"], ["TT"], name="/out/Square"),
          helper.make_node("Mul", ["T", "five"], ["T5"], name="/out/Mul"),
          helper.make_node("Sub", ["TT", "T5"], ["U1"], name="/out/Sub"),
          helper.make_node("Add", ["U1", "seven"], ["U"], name="/out/Add"),
          helper.make_node("Mul", ["c", "U"], ["O"], name="/out/Mul_1")]
    bindings = [{"value": "mb%d_x" % k, "spec": "x", "local_slice": [[k, k + 1], None]}
                for k in range(MB)] + [{"value": "c", "spec": "c"}, {"value": "O", "spec": "O"}]
    rank = mdl(n, "hidden_count", [f("mb%d_x" % k, [1, W]) for k in range(MB)] + [f("c", [])],
               [f("O", [])], bindings)
    return spec, rank


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
    onnx.save(spec_wd(0, square=True), os.path.join(d, "spec.onnx"))
    write_accumulating(os.path.join(d, "shards"), 0, square=True)
    write_accumulating(os.path.join(d, "shards_from_zero"), 0, from_zero=True, square=True)
    d = os.path.join(out, "mlp_wd_mb4")
    lam = 0.25
    os.makedirs(d, exist_ok=True)
    onnx.save(spec_wd(lam), os.path.join(d, "spec.onnx"))
    write_accumulating(os.path.join(d, "shards"), lam / MB)
    write_accumulating(os.path.join(d, "shards_wd_per_two"), lam / 2)
    d = os.path.join(out, "hidden_count_mb4")
    os.makedirs(os.path.join(d, "shards"), exist_ok=True)
    spec_h, rank_h = hidden_count()
    onnx.save(spec_h, os.path.join(d, "spec.onnx"))
    onnx.save(rank_h, os.path.join(d, "shards", "rank0.onnx"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(__file__), "..", "..", "models", "handwritten"))
