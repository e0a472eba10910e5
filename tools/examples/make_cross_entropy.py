#!/usr/bin/python3
"""Writes models/cross_entropy/: a language model's first and last ops trained on int64 token
ids and labels -- the embedding lookup, the cross-entropy on integer labels, and their backward,
with the embedding gradient a scatter-add of rows -- as a spec and plans in the plan format.

spec (forward and backward, outputs loss, grad_W, grad_U):
  e = Gather(W, ids); logits = e @ U; loss = -mean(GatherElements(LogSoftmax(logits), labels))
  dlogits = (Softmax(logits) - OneHot(labels)) / N; grad_U = e^T dlogits;
  grad_W = ScatterND(zeros, ids, dlogits U^T, reduction=add)
with ids, labels [B, S] int64 (ranging over the V rows of W and the V columns of U).

Plans (rank programs written as torch's decompositions write them: the one-hot of the labels as
a ScatterElements of ones, the embedding gradient as a ScatterElements-add over ids expanded
along the hidden axis):
  dp2           the batch split over two ranks; loss a partial sum, gradients all-reduced
  sp2           the sequence split over two ranks, likewise
  tp2_vocab     Megatron's vocabulary-parallel embedding: rank r holds rows [rV/2, (r+1)V/2) of
                W, masks the ids outside them, all-reduces the lookup, and scatters only its
                own ids' rows into its shard of grad_W
Seeded bugs:
  tp2_vocab_off_by_one   rank 1's shard taken to start one row early
  tp2_vocab_unmasked_grad  the backward scatters every token's row, also of ids of the other shard
  dp2_local_mean         each rank averages over its own tokens (the loss and gradients twice too large)
  dp2_grad_w_not_reduced the embedding gradient is not all-reduced
"""
import os
import sys

from onnx import TensorProto, helper

from make_soundness import model, vi, write  # the same ONNX helpers

F, I64 = TensorProto.FLOAT, TensorProto.INT64
B, S, V, H = 2, 4, 8, 4
N_ALL = B * S
N = helper.make_node


def const(name, value, t=F, shape=()):
    vals = value if isinstance(value, list) else [value]
    return N("Constant", [], [name], name="/" + name,
             value=helper.make_tensor(name + "_v", t, list(shape), vals))


def forward(ids, labels, W, U, n_tokens, loss_name):
    """Lookup, logits, loss = -sum(log p[label]) / n_tokens; returns the nodes."""
    return [N("Gather", [W, ids], ["e"], name="/embed/Gather")] + head(labels, U, n_tokens, loss_name)


def head(labels, U, n_tokens, loss_name):
    return [
        N("MatMul", ["e", U], ["logits"], name="/lm_head/MatMul"),
        N("LogSoftmax", ["logits"], ["logp"], name="/loss/LogSoftmax", axis=-1),
        const("last", [-1], I64, [1]),
        N("Unsqueeze", [labels, "last"], ["labels_u"], name="/loss/Unsqueeze"),
        N("GatherElements", ["logp", "labels_u"], ["picked"], name="/loss/GatherElements", axis=-1),
        N("ReduceSum", ["picked"], ["total"], name="/loss/ReduceSum", keepdims=0),
        const("minus_inv_n", -1.0 / n_tokens),
        N("Mul", ["total", "minus_inv_n"], [loss_name], name="/loss/Mul"),
    ]


def spec():
    nodes = forward("ids", "labels", "W", "U", N_ALL, "loss") + [
        N("Softmax", ["logits"], ["p"], name="/loss_bw/Softmax", axis=-1),
        const("depth", V, I64),
        const("off_on", [0.0, 1.0], F, [2]),
        N("OneHot", ["labels", "depth", "off_on"], ["hot"], name="/loss_bw/OneHot", axis=-1),
        N("Sub", ["p", "hot"], ["p_minus"], name="/loss_bw/Sub"),
        const("inv_n", 1.0 / N_ALL),
        N("Mul", ["p_minus", "inv_n"], ["dlogits"], name="/loss_bw/Mul"),
        const("flat_h", [N_ALL, H], I64, [2]),
        const("flat_v", [N_ALL, V], I64, [2]),
        N("Reshape", ["e", "flat_h"], ["e2"], name="/lm_head_bw/Reshape_e"),
        N("Reshape", ["dlogits", "flat_v"], ["d2"], name="/lm_head_bw/Reshape_d"),
        N("Transpose", ["e2"], ["e2t"], name="/lm_head_bw/Transpose_e", perm=[1, 0]),
        N("MatMul", ["e2t", "d2"], ["grad_U"], name="/lm_head_bw/MatMul_wgrad"),
        N("Transpose", ["U"], ["Ut"], name="/lm_head_bw/Transpose_U", perm=[1, 0]),
        N("MatMul", ["dlogits", "Ut"], ["de"], name="/lm_head_bw/MatMul_dgrad"),
        const("w_shape", [V, H], I64, [2]),
        N("ConstantOfShape", ["w_shape"], ["w_zeros"], name="/embed_bw/ConstantOfShape",
          value=helper.make_tensor("z", F, [1], [0.0])),
        N("Unsqueeze", ["ids", "last"], ["ids_u"], name="/embed_bw/Unsqueeze"),
        N("ScatterND", ["w_zeros", "ids_u", "de"], ["grad_W"], name="/embed_bw/ScatterND",
          reduction="add"),
    ]
    return model(nodes, [vi("ids", [B, S], I64), vi("labels", [B, S], I64), vi("W", [V, H]),
                         vi("U", [H, V])],
                 [vi("loss", []), vi("grad_W", [V, H]), vi("grad_U", [H, V])])


def torch_style_backward(b, s, n_tokens, ids, w_rows, masked=None):
    """Backward as torch's decompositions write it: the label's one-hot is a ScatterElements
    of ones into zeros; the embedding gradient a ScatterElements-add of rows at the ids expanded
    along the hidden axis. `masked`: a bool [b, s] of tokens whose rows are not this rank's
    (their gradient rows are zeroed before the scatter)."""
    n = b * s
    nodes = [
        N("Softmax", ["logits"], ["p"], name="/loss_bw/Softmax", axis=-1),
        const("hot_shape", [b, s, V], I64, [3]),
        N("ConstantOfShape", ["hot_shape"], ["hot_zeros"], name="/loss_bw/ConstantOfShape",
          value=helper.make_tensor("z", F, [1], [0.0])),
        const("ones", [1.0] * n, F, [b, s, 1]),
        N("ScatterElements", ["hot_zeros", "labels_u", "ones"], ["hot"],
          name="/loss_bw/ScatterElements", axis=-1),
        N("Sub", ["p", "hot"], ["p_minus"], name="/loss_bw/Sub"),
        const("inv_n", 1.0 / n_tokens),
        N("Mul", ["p_minus", "inv_n"], ["dlogits"], name="/loss_bw/Mul"),
        const("flat_h", [n, H], I64, [2]),
        const("flat_v", [n, V], I64, [2]),
        N("Reshape", ["e", "flat_h"], ["e2"], name="/lm_head_bw/Reshape_e"),
        N("Reshape", ["dlogits", "flat_v"], ["d2"], name="/lm_head_bw/Reshape_d"),
        N("Transpose", ["e2"], ["e2t"], name="/lm_head_bw/Transpose_e", perm=[1, 0]),
        N("MatMul", ["e2t", "d2"], ["dU_local"], name="/lm_head_bw/MatMul_wgrad"),
        N("Transpose", ["U"], ["Ut"], name="/lm_head_bw/Transpose_U", perm=[1, 0]),
        N("MatMul", ["dlogits", "Ut"], ["de3"], name="/lm_head_bw/MatMul_dgrad"),
        N("Reshape", ["de3", "flat_h"], ["de"], name="/embed_bw/Reshape_de"),
        const("flat_n", [n, 1], I64, [2]),
    ]
    if masked:
        nodes += [const("zero_f", 0.0),
                  N("Reshape", [masked, "flat_n"], ["masked_n"], name="/embed_bw/Reshape_mask"),
                  N("Where", ["masked_n", "zero_f", "de"], ["de_own"], name="/embed_bw/Where")]
    else:
        nodes += [N("Identity", ["de"], ["de_own"], name="/embed_bw/Identity")]
    nodes += [
        N("Reshape", [ids, "flat_n"], ["ids_n"], name="/embed_bw/Reshape_ids"),
        N("Expand", ["ids_n", "flat_h"], ["ids_nh"], name="/embed_bw/Expand"),
        const("w_shape", [w_rows, H], I64, [2]),
        N("ConstantOfShape", ["w_shape"], ["w_zeros"], name="/embed_bw/ConstantOfShape",
          value=helper.make_tensor("z", F, [1], [0.0])),
        N("ScatterElements", ["w_zeros", "ids_nh", "de_own"], ["dW_local"],
          name="/embed_bw/ScatterElements", axis=0, reduction="add"),
    ]
    return nodes


def split_rank(r, axis, local_mean=False, reduce_w=True):
    """A rank of the data-parallel (axis 0) or sequence-parallel (axis 1) plan."""
    b, s = (B // 2, S) if axis == 0 else (B, S // 2)
    region = [[r * b, r * b + b], None] if axis == 0 else [None, [r * s, r * s + s]]
    n_tokens = b * s if local_mean else N_ALL
    nodes = forward("ids", "labels", "W", "U", n_tokens, "loss_part")
    nodes += torch_style_backward(b, s, n_tokens, "ids", V)
    nodes += [N("AllReduce", ["dU_local"], ["dU"], domain="onnx_tv", name="/lm_head_bw/AllReduce",
                group=[0, 1])]
    if reduce_w:
        nodes += [N("AllReduce", ["dW_local"], ["dW"], domain="onnx_tv", name="/embed_bw/AllReduce",
                    group=[0, 1])]
    else:
        nodes += [N("Identity", ["dW_local"], ["dW"], name="/embed_bw/Identity_dW")]
    binds = [{"value": "ids", "spec": "ids", "slice": region},
             {"value": "labels", "spec": "labels", "slice": region},
             {"value": "W", "spec": "W"}, {"value": "U", "spec": "U"},
             {"value": "loss_part", "spec": "loss", "partial": "sum"},
             {"value": "dW", "spec": "grad_W"}, {"value": "dU", "spec": "grad_U"}]
    return model(nodes, [vi("ids", [b, s], I64), vi("labels", [b, s], I64), vi("W", [V, H]),
                         vi("U", [H, V])],
                 [vi("loss_part", []), vi("dW", [V, H]), vi("dU", [H, V])], binds, comm=True)


def vocab_rank(r, start, mask_grad=True):
    """Rank r of the vocabulary-parallel embedding holding rows [start, start + V/2) of W."""
    v = V // 2
    nodes = [const("start", start, I64), const("end", start + v, I64), const("zero", 0, I64),
             N("Less", ["ids", "start"], ["below"], name="/embed/Less"),
             N("GreaterOrEqual", ["ids", "end"], ["above"], name="/embed/GreaterOrEqual"),
             N("Or", ["below", "above"], ["outside"], name="/embed/Or"),
             N("Sub", ["ids", "start"], ["shifted"], name="/embed/Sub"),
             N("Where", ["outside", "zero", "shifted"], ["local"], name="/embed/Where_ids"),
             N("Gather", ["W_local", "local"], ["e_all"], name="/embed/Gather"),
             const("axis", [-1], I64, [1]), const("zero_e", 0.0),
             N("Unsqueeze", ["outside", "axis"], ["outside_h"], name="/embed/Unsqueeze"),
             N("Where", ["outside_h", "zero_e", "e_all"], ["e_part"], name="/embed/Where_rows"),
             N("AllReduce", ["e_part"], ["e"], domain="onnx_tv", name="/embed/AllReduce",
               group=[0, 1])]
    nodes += head("labels", "U", N_ALL, "loss")
    nodes += torch_style_backward(B, S, N_ALL, "local", v, masked="outside" if mask_grad else None)
    binds = [{"value": "ids", "spec": "ids"}, {"value": "labels", "spec": "labels"},
             {"value": "W_local", "spec": "W", "slice": [[r * v, r * v + v], None]},
             {"value": "U", "spec": "U"}, {"value": "loss", "spec": "loss"},
             {"value": "dW_local", "spec": "grad_W", "slice": [[r * v, r * v + v], None]},
             {"value": "dU_local", "spec": "grad_U"}]
    return model(nodes, [vi("ids", [B, S], I64), vi("labels", [B, S], I64), vi("W_local", [v, H]),
                         vi("U", [H, V])],
                 [vi("loss", []), vi("dW_local", [v, H]), vi("dU_local", [H, V])], binds, comm=True)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "cross_entropy")
    v = V // 2
    write(out, spec(), {
        "dp2": [split_rank(r, 0) for r in range(2)],
        "sp2": [split_rank(r, 1) for r in range(2)],
        "tp2_vocab": [vocab_rank(r, r * v) for r in range(2)],
        "tp2_vocab_off_by_one": [vocab_rank(0, 0), vocab_rank(1, v - 1)],
        "tp2_vocab_unmasked_grad": [vocab_rank(r, r * v, mask_grad=False) for r in range(2)],
        "dp2_local_mean": [split_rank(r, 0, local_mean=True) for r in range(2)],
        "dp2_grad_w_not_reduced": [split_rank(r, 0, reduce_w=False) for r in range(2)],
    })


if __name__ == "__main__":
    main()
