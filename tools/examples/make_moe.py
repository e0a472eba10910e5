#!/usr/bin/python3
"""Writes models/moe/: a dense Mixture-of-Experts layer routed by top-k, as a spec and expert-
parallel plans in the plan format.

spec: scores = x @ Wr over E experts; (vals, idx) = TopK(scores, K); weights = Softmax(vals);
gates[t, e] = sum_j OneHot(idx[t, j])[e] * weights[t, j]; every expert e is an MLP
relu(x @ W1[e]) @ W2[e]; y = sum_e gates[:, e] * expert_e(x). x[T, H], Wr[H, E], W1[E, H, F],
W2[E, F, H] are inputs; y[T, H] the output.

Plans (tokens and router replicated on every rank, experts split among the ranks, the combined
output all-reduced, as TrainVerify's DeepSeek-V3 plans split experts inside a group):
  ep2, ep4                each rank holds E/n experts, routes every token, and combines the
                          gates of its own experts
  ep2_scatter             the same with the gates made as torch does, the top-k weights
                          scattered into zeros at their experts (ScatterElements, no reduction:
                          distinct slots never meet)
Seeded bugs:
  ep2_offset              rank 1 takes the gate columns of its experts one to the left
  ep2_full_softmax        the combine weights are the softmax over all E scores, read at the
                          selected experts, not the softmax of the selected scores
"""
import os
import sys

from onnx import TensorProto, helper

from make_soundness import model, vi, write  # the same ONNX helpers

F, I64 = TensorProto.FLOAT, TensorProto.INT64
T, H, E, FF, K = 4, 2, 4, 2, 2
N = helper.make_node


def const(name, value, t=I64, shape=()):
    vals = value if isinstance(value, list) else [value]
    return N("Constant", [], [name], name="/" + name,
             value=helper.make_tensor(name + "_v", t, list(shape), vals))


def routing(full_softmax=False, scatter=False):
    """gates[T, E] from x and Wr."""
    nodes = [N("MatMul", ["x", "Wr"], ["scores"], name="/router/MatMul"),
             const("k", [K], I64, [1]),
             N("TopK", ["scores", "k"], ["vals", "idx"], name="/router/TopK", axis=-1),
             const("depth", E), const("off_on", [0.0, 1.0], F, [2]),
             N("OneHot", ["idx", "depth", "off_on"], ["hot"], name="/router/OneHot", axis=-1),
             const("last", [-1], I64, [1]), const("slots", [1], I64, [1]),
             const("zero_f", 0.0, F)]
    if full_softmax:
        nodes += [N("Softmax", ["scores"], ["probs"], name="/router/Softmax_all", axis=-1),
                  N("GatherElements", ["probs", "idx"], ["weights"], name="/router/GatherElements",
                    axis=-1)]
    else:
        nodes += [N("Softmax", ["vals"], ["weights"], name="/router/Softmax", axis=-1)]
    if scatter:  # torch's zeros_like(scores).scatter(1, idx, weights)
        return nodes + [
            N("Mul", ["scores", "zero_f"], ["zeros"], name="/router/Mul_zero"),
            N("ScatterElements", ["zeros", "idx", "weights"], ["gates"],
              name="/router/ScatterElements", axis=-1)]
    nodes += [N("Unsqueeze", ["weights", "last"], ["weights_u"], name="/router/Unsqueeze"),
              N("Mul", ["hot", "weights_u"], ["weighted"], name="/router/Mul"),
              N("ReduceSum", ["weighted", "slots"], ["gates"], name="/router/ReduceSum", keepdims=0)]
    return nodes


def experts(gates, w1, w2, out):
    """out[T, H] = sum over the experts of w1/w2 of gates[:, e] * relu(x @ w1[e]) @ w2[e]."""
    return [const("zero_axis", [0], I64, [1]),
            N("Unsqueeze", ["x", "zero_axis"], ["x1"], name="/experts/Unsqueeze_x"),
            N("MatMul", ["x1", w1], ["up"], name="/experts/MatMul_up"),
            N("Relu", ["up"], ["act"], name="/experts/Relu"),
            N("MatMul", ["act", w2], ["down"], name="/experts/MatMul_down"),
            N("Transpose", [gates], ["gates_t"], name="/combine/Transpose", perm=[1, 0]),
            N("Unsqueeze", ["gates_t", "last"], ["gates_u"], name="/combine/Unsqueeze"),
            N("Mul", ["gates_u", "down"], ["scaled"], name="/combine/Mul"),
            N("ReduceSum", ["scaled", "zero_axis"], [out], name="/combine/ReduceSum", keepdims=0)]


def spec():
    return model(routing() + experts("gates", "W1", "W2", "y"),
                 [vi("x", [T, H]), vi("Wr", [H, E]), vi("W1", [E, H, FF]), vi("W2", [E, FF, H])],
                 [vi("y", [T, H])])


def ep_rank(r, ranks, column_shift=0, full_softmax=False, scatter=False):
    e = E // ranks
    start = r * e + column_shift
    nodes = routing(full_softmax, scatter) + [
        const("cols_start", [start], I64, [1]), const("cols_end", [start + e], I64, [1]),
        const("cols_axis", [1], I64, [1]),
        N("Slice", ["gates", "cols_start", "cols_end", "cols_axis"], ["gates_local"],
          name="/combine/Slice")]
    nodes += experts("gates_local", "W1_local", "W2_local", "y_part")
    nodes += [N("AllReduce", ["y_part"], ["y"], domain="onnx_tv", name="/combine/AllReduce",
                group=list(range(ranks)))]
    experts_of = [[r * e, r * e + e], None, None]
    binds = [{"value": "x", "spec": "x"}, {"value": "Wr", "spec": "Wr"},
             {"value": "W1_local", "spec": "W1", "slice": experts_of},
             {"value": "W2_local", "spec": "W2", "slice": experts_of},
             {"value": "y", "spec": "y"}]
    return model(nodes, [vi("x", [T, H]), vi("Wr", [H, E]), vi("W1_local", [e, H, FF]),
                         vi("W2_local", [e, FF, H])], [vi("y", [T, H])], binds, comm=True)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "moe")
    write(out, spec(), {
        "ep2": [ep_rank(r, 2) for r in range(2)],
        "ep4": [ep_rank(r, 4) for r in range(4)],
        "ep2_scatter": [ep_rank(r, 2, scatter=True) for r in range(2)],
        "ep2_offset": [ep_rank(0, 2), ep_rank(1, 2, column_shift=-1)],
        "ep2_full_softmax": [ep_rank(r, 2, full_softmax=True) for r in range(2)],
    })


if __name__ == "__main__":
    main()
