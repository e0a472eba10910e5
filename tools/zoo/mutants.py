"""The bug catalogue: mutants of correct plans, each a bug that really happens.

Most are edits of the correct plan's rank programs (remove a collective, reroute an input,
change a constant, swap a peer); a few need the generator itself (`PlanConfig.bug`). Every edit
returns the node where the bug starts on the catalogue rank: the mutated node, or for a removed
op the node that produced the value it consumed. Edits take the models, the model config and the
plan config, so that the constants they write follow the sizes (the same bug at any size)."""
import math

import numpy as np
from onnx import helper, numpy_helper


# ---- edits on {rank: ModelProto} -----------------------------------------------------------------
def _find(model, name):
    for i, n in enumerate(model.graph.node):
        if n.name == name:
            return i, n
    raise KeyError("no node %s in %s" % (name, model.graph.name))


def _producer(model, value):
    for n in model.graph.node:
        if value in n.output:
            return n.name
    return value  # a graph input


def _replace_uses(model, old, new):
    for n in model.graph.node:
        for k, v in enumerate(n.input):
            if v == old:
                n.input[k] = new


def remove(models, ranks, name, keep=0, blame=None):
    """Delete `name` on each rank; its consumers read its input `keep` instead."""
    start = None
    for r in ranks:
        m = models[r]
        i, n = _find(m, name)
        if start is None:
            start = _producer(m, n.input[keep if blame is None else blame])
        _replace_uses(m, n.output[0], n.input[keep])
        del m.graph.node[i]
    return start


def reroute(models, rank, name, old, new):
    """Node `name` reads value `new` where it read `old`."""
    _, n = _find(models[rank], name)
    k = list(n.input).index(old)
    n.input[k] = new
    return name


def set_const(models, ranks, name, index, value):
    """Input `index` of node `name` becomes a new constant `value` (float32)."""
    for r in ranks:
        m = models[r]
        i, n = _find(m, name)
        out = "%s_const%d_output_0" % (name, index)
        c = helper.make_node("Constant", [], [out], name="%s_const%d" % (name, index),
                             value=numpy_helper.from_array(np.asarray(value, np.float32)))
        m.graph.node.insert(i, c)
        n.input[index] = out
    return name


def swap_inputs(models, rank, name):
    _, n = _find(models[rank], name)
    a, b = n.input[0], n.input[1]
    n.input[0], n.input[1] = b, a
    return name


def set_attr(models, rank, name, key, value):
    _, n = _find(models[rank], name)
    for a in n.attribute:
        if a.name == key:
            n.attribute.remove(a)
            break
    n.attribute.append(helper.make_attribute(key, value))
    return name


def allreduce_as_allgather(models, ranks, name, axis, length):
    """AllReduce(x) becomes AllGather(my chunk of x along axis): same shape, no reduction."""
    for idx, r in enumerate(ranks):
        m = models[r]
        i, n = _find(m, name)
        c = length // len(ranks)
        consts = []
        for tag, v in (("starts", [idx * c]), ("ends", [(idx + 1) * c]), ("axes", [axis])):
            consts.append(helper.make_node("Constant", [], [name + "_" + tag], name=name + "_" + tag,
                                           value=numpy_helper.from_array(np.array(v, np.int64))))
        sl = helper.make_node("Slice", [n.input[0]] + [c.output[0] for c in consts],
                              [name + "_chunk_output_0"], name=name + "_chunk")
        n.op_type = "AllGather"
        n.input[0] = sl.output[0]
        for a in list(n.attribute):
            if a.name == "reduce":
                n.attribute.remove(a)
        n.attribute.append(helper.make_attribute("axis", axis))
        for k, node in enumerate(consts + [sl]):
            m.graph.node.insert(i + k, node)
    return name


def allgather_as_allreduce(models, ranks, name, axis, n_members):
    """AllGather(x) becomes AllReduce(Tile(x)): same shape, every chunk the sum of all."""
    for r in ranks:
        m = models[r]
        i, n = _find(m, name)
        reps = name + "_reps"
        shape_len = _rank_of_value(m, n.input[0])
        rv = [1] * shape_len
        rv[axis] = n_members
        c = helper.make_node("Constant", [], [reps], name=reps,
                             value=numpy_helper.from_array(np.array(rv, np.int64)))
        t = helper.make_node("Tile", [n.input[0], reps], [name + "_tile_output_0"], name=name + "_tile")
        n.op_type = "AllReduce"
        n.input[0] = t.output[0]
        for a in list(n.attribute):
            if a.name == "axis":
                n.attribute.remove(a)
        n.attribute.append(helper.make_attribute("reduce", "sum"))
        m.graph.node.insert(i, t)
        m.graph.node.insert(i, c)
    return name


def _rank_of_value(model, value):
    for v in list(model.graph.input) + list(model.graph.value_info):
        if v.name == value:
            return len(v.type.tensor_type.shape.dim)
    raise KeyError(value)


def swap_peers(models, pairs):
    """pairs: [(rank, node, new peer)]: Send/Recv talk to another rank (consistently)."""
    for r, name, peer in pairs:
        set_attr(models, r, name, "peer", peer)
    return pairs[0][1]


# ---- the catalogue ---------------------------------------------------------------------------------
TV = "TrainVerify"
A = "/mb0/layers.0/attn"


def _inv_sqrt(n):
    r = math.isqrt(n)
    return "1/%d" % r if r * r == n else "1/sqrt(%d)" % n


def _tokens(m, p):
    """Tokens of one micro-batch on one rank: what a micro-batch's mean loss divides by."""
    return m.batch // (p.dp * p.mb) * (m.seq // p.cp)


def describe(e, m):
    """The catalogue's description of entry `e` for model config `m`."""
    return e["what"](m) if callable(e["what"]) else e["what"]


def _c(id, cls, config, plan, what, output, rank, source, edit=None, bug=None, node=None,
       near=None):
    """A catalogue entry: an `edit` of the correct plan's programs (returning the node where the
    bug starts), or a generator-level `bug` (PlanConfig.bug) that starts at `node`. `near`: the
    node next to it where the value-based locator finds the first wrong value (an op whose
    output is the first to differ from every spec value, e.g. the consumer of the bug's)."""
    return dict(id=id, cls=cls, config=config, plan=plan, what=what, output=output, rank=rank,
                source=source, edit=edit, bug=bug, node=node, near=near)


CATALOGUE = [
    _c("tp2_missing_allreduce_kept", "missing_allreduce_dataflow_kept", "l1_b2_mha", "tp2_mb2",
       "the forward all-reduce after the row-parallel o_proj of micro-batch 0 is removed on both "
       "TP ranks, its consumers read the partial sum", "loss", 0, TV,
       edit=lambda ms, m, p: remove(ms, [0, 1], A + "/o_proj/tp/AllReduce")),
    _c("tp2_missing_allreduce_broken", "missing_allreduce_dataflow_broken", "l1_b2_mha", "tp2_mb2",
       "the MLP residual add of micro-batch 1 on rank 1 reads the row-parallel down_proj partial "
       "sum instead of the all-reduced value (the all-reduce still runs, its result is unused)",
       "loss", 1, TV,
       edit=lambda ms, m, p: reroute(ms, 1, "/mb1/layers.0/mlp/Add_residual",
                                     "/mb1/layers.0/mlp/down_proj/tp/AllReduce_output_0",
                                     "/mb1/layers.0/mlp/down_proj/MatMul_output_0")),
    _c("dp2_allreduce_as_allgather", "allreduce_replaced_by_allgather", "l1_b4_gqa", "dp2_mb2",
       "the data-parallel gradient all-reduce of w_q becomes an all-gather of each rank's column "
       "chunk (same shape, no reduction)", "grad_layers.0.w_q", 0, TV,
       edit=lambda ms, m, p: allreduce_as_allgather(ms, [0, 1], "/grad_sync/layers.0.w_q/AllReduce",
                                                     1, m.heads * m.head_dim)),
    _c("zero2_allgather_as_allreduce", "allgather_replaced_by_allreduce", "l1_b4_gqa", "zero2_dp2_mb2",
       "the ZeRO parameter all-gather of w_o becomes an all-reduce of the tiled local shard",
       "loss", 0, TV,
       edit=lambda ms, m, p: allgather_as_allreduce(ms, [0, 1], "/zero/layers.0.w_o/AllGather_param",
                                                     0, 2)),
    _c("tp2_missing_backward_reduce", "missing_reduce_in_backward", "l1_b2_mha", "tp2_mb2",
       "the backward all-reduce of the attention input gradient (column-parallel q/k/v) of "
       "micro-batch 1 is removed on both TP ranks", "grad_x", 0, TV,
       edit=lambda ms, m, p: remove(ms, [0, 1], "/mb1/layers.0/attn/tp/AllReduce")),
    _c("dp2tp2pp2_wrong_pipeline_peer", "wrong_pipeline_peer", "l2_b4_mha", "dp2_tp2_pp2_mb2",
       "the activations of micro-batch 0 on TP rank 0 are sent to the last stage of the other "
       "data-parallel replica (Send and Recv peers swapped consistently)", "loss", 0, TV,
       edit=lambda ms, m, p: swap_peers(ms, [(0, "/mb0/pp/Send_activation", 6),
                                             (4, "/mb0/pp/Send_activation", 2),
                                             (2, "/mb0/pp/Recv_activation", 4),
                                             (6, "/mb0/pp/Recv_activation", 0)])),
    _c("tp2_constant_off_one_rank", "constant_off_one_rank", "l1_b2_mha", "tp2_mb2",
       lambda m: "the attention scale of micro-batch 0 is 1/%d instead of 1/sqrt(head_dim) = %s on "
                 "rank 1" % (m.head_dim, _inv_sqrt(m.head_dim)),
       "loss", 1, TV,
       edit=lambda ms, m, p: set_const(ms, [1], A + "/Mul_scale", 1, 1.0 / m.head_dim)),
    _c("dp2_constant_off_all_ranks", "constant_off_all_ranks", "l1_b4_gqa", "dp2_mb2",
       "the RMSNorm epsilon of the attention norm of micro-batch 0 is 1e-4 instead of 1e-5 on "
       "every rank", "loss", 0, TV,
       edit=lambda ms, m, p: set_const(ms, [0, 1], "/mb0/layers.0/input_layernorm/Add", 1, 1e-4)),
    _c("pp2_backward_wrong_input", "backward_wrong_input", "l2_b2_gqa", "pp2_gpipe_mb2",
       "the q_proj weight gradient of layer 1, micro-batch 0, reads the layer input instead of the "
       "normalised input", "grad_layers.1.w_q", 1, TV,
       edit=lambda ms, m, p: reroute(ms, 1, "/mb0/layers.1/attn/q_proj/Reshape_wgrad_in_grad",
                                     "/mb0/layers.1/input_layernorm/Mul_weight_output_0",
                                     "/mb0/pp/Recv_activation_output_0")),
    _c("dp2tp2pp2_rope_swapped", "rope_outputs_swapped", "l2_b4_mha", "dp2_tp2_pp2_mb2",
       "the rotate-half of the query RoPE of micro-batch 1 on rank 5 concatenates its halves in "
       "the wrong order", "loss", 5, TV,
       edit=lambda ms, m, p: swap_inputs(ms, 5, "/mb1/layers.0/attn/rope_q/Concat_rotate_half")),
    _c("dp2_scaling_average_missing", "inconsistent_scaling_average", "l1_b4_gqa", "dp2_mb2",
       "the w_down gradient is all-reduced but not divided by the data-parallel size, unlike "
       "every other gradient", "grad_layers.0.w_down", 0, TV,
       edit=lambda ms, m, p: remove(ms, [0, 1], "/grad_sync/layers.0.w_down/Mul_average")),
    _c("pp2_scaling_microbatch", "inconsistent_scaling_microbatch", "l2_b2_gqa", "pp2_1f1b_mb2",
       "the backward of micro-batch 1 is seeded without the 1/num_microbatches factor that its "
       "loss carries", "grad_lm_head", 1, TV,
       edit=lambda ms, m, p: set_const(ms, [1], "/mb1/loss/Mul_dlogits_grad", 1,
                                       1.0 / _tokens(m, p))),
    _c("dp2_microbatch_missing_last_op", "microbatch_missing_last_op", "l1_b4_gqa", "dp2_mb2",
       "the gradient accumulation of w_gate for micro-batch 1 on rank 0 is missing",
       "grad_layers.0.w_gate", 0, TV,
       edit=lambda ms, m, p: remove(ms, [0], "/grad_accum/layers.0.w_gate/Add_mb1", keep=0,
                                    blame=1)),
    _c("cp2_loss_scaled", "cp_loss_scaled_by_cp_size", "l1_b1_range", "cp2",
       "each context-parallel rank's loss contribution is not divided by the CP size, so the "
       "reported loss is CP times too large", "loss", 0, "Megatron-LM #673, #906",
       edit=lambda ms, m, p: set_const(ms, [0, 1], "/loss/Mul_average", 1, 1.0)),
    _c("tied_embedding_not_summed", "tied_embedding_grad_not_summed", "l2_b4_tied_init",
       "dp2_pp2_zero2_mb2",
       "the tied embedding gradients of the first and last pipeline stages are not summed before "
       "the ZeRO reduce-scatter", "grad_embed", 0, "Megatron-LM #844",
       edit=lambda ms, m, p: remove(ms, list(range(4)), "/grad_sync/embed/AllReduce_tied")),
    _c("tp2_vocab_ce_gathered", "vocab_parallel_ce_on_gathered_logits", "l1_b2_mha", "tp2_mb2",
       "the vocabulary-parallel cross-entropy runs on logits already all-gathered over TP, so its "
       "sums are all-reduced twice", "loss", 0, "Megatron-LM #7452",
       bug="vocab_ce_gathered", node="/mb0/loss/AllGather_logits"),
    _c("pp2_grads_scaled_by_tokens", "pipeline_grads_scaled_by_token_count", "l2_b2_gqa",
       "pp2_gpipe_mb2",
       "the last pipeline stage seeds its backward with the summed instead of the mean token loss, "
       "so every gradient is scaled by the micro-batch token count", "grad_lm_head", 1,
       "torchtitan #2972",
       edit=lambda ms, m, p: [set_const(ms, [1], "/mb%d/loss/Mul_dlogits_grad" % i, 1, 1.0 / p.mb)
                              for i in (1, 0)][-1]),
    _c("tp2sp_partial_grad_as_replicated", "partial_grad_treated_as_replicated", "l1_b2_mha",
       "tp2_sp_mb2",
       "the attention-norm weight gradient, a partial sum over the sequence shards under sequence "
       "parallelism, is not all-reduced (treated as replicated)", "grad_layers.0.attn_norm", 0,
       "torchtitan #3412",
       edit=lambda ms, m, p: [remove(ms, [0, 1], "/mb%d/layers.0/input_layernorm/sp/AllReduce" % i)
                              for i in (1, 0)][-1]),
    _c("cp2_rope_not_offset", "rope_positions_not_offset", "l1_b1_range", "cp2",
       "the RoPE positions of the second sequence shard start at 0 instead of at its offset",
       "loss", 1, "context-parallel RoPE offset",
       edit=lambda ms, m, p: [set_const(ms, [1], "/mb0/layers.0/attn/rotary_emb/Range", k, v)
                              for k, v in ((1, float(m.seq // p.cp)), (0, 0.0))][-1]),
]

CLASSES = sorted({e["cls"] for e in CATALOGUE})
