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
  ep2_routing_map         Megatron's probs * routing_map: the scattered gates times a 0/1 map
                          made by scattering ones at the selected experts
                          (Cast to bool: the map is 0 or 1 only because no expert is in two
                          slots, which the canonical form does not know and CaDiCaL proves, as
                          it proves the map times the gates equal to the gates)
  ep4_or_map              the same map made as Or over the slots of Equal(idx[:, j], expert id),
                          which agrees by algebra alone: (p + q - pq) p = p
Seeded bugs:
  ep2_offset              rank 1 takes the gate columns of its experts one to the left
  ep2_map_first_slot      the routing map scatters ones at the first slot's expert only, so
                          every token loses its second expert
  ep2_full_softmax        the combine weights are the softmax over all E scores, read at the
                          selected experts, not the softmax of the selected scores
TopK with sorted=0 (the runtime orders the k results as it likes):
  ep2_unsorted            ep2 with sorted=0 in the ranks: the gates sum over the slots, so any
  a2a2_capacity_unsorted  order gives them (proven), and so do the capacity dispatch's places
  ep2_unsorted_mixed      the weights from an unsorted TopK, the experts from a sorted one:
                          right only where the runtime sorts (UNKNOWN, naming the routing)
The argsort permutation (torchtitan's and Megatron-Core's dispatch, argsort_rank):
  a2a2_argsort            pairs sorted by expert, gathered into padded buffers, AllToAll, and
                          unpermuted by the argsort of the order
  a2a2_argsort_twice      the combine permutes by the order again (torchtitan #1237)
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


def routing_map(kind):
    """Megatron's form: the gates scattered as torch does, times a 0/1 routing map of the
    selected experts, made by scattering ones (`scatter`) or by Or of each slot's Equal (`or`).
    Each expert appears in the map once because no expert is in two slots: the forms agree
    only through that axiom."""
    nodes = [const("one_f", 1.0, F), const("expert_ids", list(range(E)), I64, [1, E]),
             const("k_start", [0], I64, [1]), const("one_i", [1], I64, [1])]
    if kind in ("scatter", "first_slot"):
        slots = "k" if kind == "scatter" else "one_i"
        nodes += [N("Add", ["zeros", "one_f"], ["ones_e"], name="/router/Add_ones"),
                  N("Slice", ["ones_e", "k_start", slots, "last"], ["ones_k"], name="/router/Slice_ones"),
                  N("Slice", ["idx", "k_start", slots, "last"], ["idx_map"], name="/router/Slice_idx"),
                  N("ScatterElements", ["zeros", "idx_map", "ones_k"], ["map_f"],
                    name="/router/routing_map", axis=-1),
                  N("Cast", ["map_f"], ["map"], name="/router/Cast_map", to=TensorProto.BOOL)]
    else:
        nodes += [N("Slice", ["idx", "k_start", "one_i", "last"], ["idx0"], name="/router/Slice0"),
                  N("Slice", ["idx", "one_i", "k", "last"], ["idx1"], name="/router/Slice1"),
                  N("Equal", ["idx0", "expert_ids"], ["is0"], name="/router/Equal0"),
                  N("Equal", ["idx1", "expert_ids"], ["is1"], name="/router/Equal1"),
                  N("Or", ["is0", "is1"], ["map"], name="/router/routing_map")]
    return nodes + [
        N("Cast", ["map"], ["map_float"], name="/router/Cast", to=F),
        N("Mul", ["probs_scattered", "map_float"], ["gates"], name="/router/Mul_map")]


def top_k(order):
    """TopK of the scores: sorted, `unsorted` (sorted=0: the runtime orders the k results), or
    `mixed`, the weights from an unsorted TopK and the experts from a sorted one, which agree
    only where the runtime happens to sort."""
    if order == "sorted":
        return [N("TopK", ["scores", "k"], ["vals", "idx"], name="/router/TopK", axis=-1)]
    nodes = [N("TopK", ["scores", "k"], ["vals", "idx" if order == "unsorted" else "idx_unsorted"],
               name="/router/TopK", axis=-1, sorted=0)]
    if order == "mixed":
        nodes.append(N("TopK", ["scores", "k"], ["vals_sorted", "idx"], name="/router/TopK_sorted",
                       axis=-1))
    return nodes


def routing(full_softmax=False, scatter=False, masked=None, order="sorted"):
    """gates[T, E] from x and Wr."""
    nodes = [N("MatMul", ["x", "Wr"], ["scores"], name="/router/MatMul"),
             const("k", [K], I64, [1])] + top_k(order) + [
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
    if masked:
        return nodes + [
            N("Mul", ["scores", "zero_f"], ["zeros"], name="/router/Mul_zero"),
            N("ScatterElements", ["zeros", "idx", "weights"], ["probs_scattered"],
              name="/router/ScatterElements", axis=-1)] + routing_map(masked)
    if scatter:  # torch's zeros_like(scores).scatter(1, idx, weights)
        return nodes + [
            N("Mul", ["scores", "zero_f"], ["zeros"], name="/router/Mul_zero"),
            N("ScatterElements", ["zeros", "idx", "weights"], ["gates"],
              name="/router/ScatterElements", axis=-1)]
    nodes += [N("Unsqueeze", ["weights", "last"], ["weights_u"], name="/router/Unsqueeze"),
              N("Mul", ["hot", "weights_u"], ["weighted"], name="/router/Mul"),
              N("ReduceSum", ["weighted", "slots"], ["gates"], name="/router/ReduceSum", keepdims=0)]
    return nodes


ACT = "Relu"  # the experts' activation (models/moe8_tanh: Tanh, which is not piecewise)


def experts(gates, w1, w2, out):
    """out[T, H] = sum over the experts of w1/w2 of gates[:, e] * relu(x @ w1[e]) @ w2[e]."""
    return [const("zero_axis", [0], I64, [1]),
            N("Unsqueeze", ["x", "zero_axis"], ["x1"], name="/experts/Unsqueeze_x"),
            N("MatMul", ["x1", w1], ["up"], name="/experts/MatMul_up"),
            N(ACT, ["up"], ["act"], name="/experts/" + ACT),
            N("MatMul", ["act", w2], ["down"], name="/experts/MatMul_down"),
            N("Transpose", [gates], ["gates_t"], name="/combine/Transpose", perm=[1, 0]),
            N("Unsqueeze", ["gates_t", "last"], ["gates_u"], name="/combine/Unsqueeze"),
            N("Mul", ["gates_u", "down"], ["scaled"], name="/combine/Mul"),
            N("ReduceSum", ["scaled", "zero_axis"], [out], name="/combine/ReduceSum", keepdims=0)]


def spec():
    return model(routing() + experts("gates", "W1", "W2", "y"),
                 [vi("x", [T, H]), vi("Wr", [H, E]), vi("W1", [E, H, FF]), vi("W2", [E, FF, H])],
                 [vi("y", [T, H])])


def ep_rank(r, ranks, column_shift=0, full_softmax=False, scatter=False, masked=None,
            order="sorted"):
    e = E // ranks
    start = r * e + column_shift
    nodes = routing(full_softmax, scatter, masked, order) + [
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


def token_split_rank(nodes, r, t, e):
    """Rank r of a plan with tokens and experts split: it holds tokens [r t, r t + t) and
    experts [r e, r e + e)."""
    experts_of = [[r * e, r * e + e], None, None]
    tokens_of = [[r * t, r * t + t], None]
    binds = [{"value": "x", "spec": "x", "slice": tokens_of}, {"value": "Wr", "spec": "Wr"},
             {"value": "W1_local", "spec": "W1", "slice": experts_of},
             {"value": "W2_local", "spec": "W2", "slice": experts_of},
             {"value": "y", "spec": "y", "slice": tokens_of}]
    return model(nodes, [vi("x", [t, H]), vi("Wr", [H, E]), vi("W1_local", [e, H, FF]),
                         vi("W2_local", [e, FF, H])], [vi("y", [t, H])], binds, comm=True)


def experts_by_all_to_all(ranks):
    """buffer [E, slots, H] to each expert's rank by AllToAll, the rank's experts applied to
    the slots from every rank, and the outputs back as returned [E, slots, H]."""
    return [
        N("AllToAll", ["buffer"], ["received"], domain="onnx_tv", name="/dispatch/AllToAll",
          group=list(range(ranks)), split_axis=0, concat_axis=1),
        N("MatMul", ["received", "W1_local"], ["up"], name="/experts/MatMul_up"),
        N(ACT, ["up"], ["act"], name="/experts/" + ACT),
        N("MatMul", ["act", "W2_local"], ["down"], name="/experts/MatMul_down"),
        N("AllToAll", ["down"], ["returned"], domain="onnx_tv", name="/combine/AllToAll",
          group=list(range(ranks)), split_axis=1, concat_axis=0)]


def a2a_rank(r, ranks, masked=True, combine_shift=0):
    """Tokens split over the ranks, experts too; every rank routes its own tokens and sends
    expert e a buffer of one slot per token (capacity = its token count), the slot holding the
    token where it is routed to e and zeros elsewhere (`masked`), or every token (dense
    dispatch). AllToAll delivers each expert its slots from every rank, and a second AllToAll
    returns the outputs, which the gates combine."""
    t, e = T // ranks, E // ranks
    nodes = routing() + [
        const("two_axes", [1], I64, [1]),
        N("ReduceSum", ["hot", "two_axes"], ["mask"], name="/dispatch/ReduceSum_mask", keepdims=0),
        N("Transpose", ["mask"], ["mask_t"], name="/dispatch/Transpose", perm=[1, 0]),
        N("Unsqueeze", ["mask_t", "last"], ["mask_u"], name="/dispatch/Unsqueeze_mask"),
        const("zero_axis", [0], I64, [1]),
        N("Unsqueeze", ["x", "zero_axis"], ["x1"], name="/dispatch/Unsqueeze_x")]
    if masked:
        nodes += [N("Mul", ["mask_u", "x1"], ["buffer"], name="/dispatch/Mul")]
    else:
        nodes += [const("e_shape", [E, t, H], I64, [3]),
                  N("Expand", ["x1", "e_shape"], ["buffer"], name="/dispatch/Expand")]
    nodes += experts_by_all_to_all(ranks)
    gates = "gates"
    if combine_shift:  # the gates of the expert next door
        nodes += [const("shift", [combine_shift], I64, [1]), const("axis1", [1], I64, [1]),
                  N("Gather", ["gates", "rolled"], ["gates_rolled"], name="/combine/Gather", axis=1),
                  const("rolled", [(i + combine_shift) % E for i in range(E)], I64, [E])]
        nodes = nodes[:-4] + [nodes[-1]] + nodes[-4:-1]
        gates = "gates_rolled"
    nodes += [
        N("Transpose", [gates], ["gates_t"], name="/combine/Transpose", perm=[1, 0]),
        N("Unsqueeze", ["gates_t", "last"], ["gates_u"], name="/combine/Unsqueeze"),
        N("Mul", ["gates_u", "returned"], ["scaled"], name="/combine/Mul"),
        N("ReduceSum", ["scaled", "zero_axis"], ["y"], name="/combine/ReduceSum", keepdims=0)]
    return token_split_rank(nodes, r, t, e)


def capacity_rank(r, ranks, capacity, triangular=False, order="sorted"):
    """GShard's dispatch with a fixed capacity: a token's place in expert e's buffer is the
    number of this rank's earlier tokens routed to e (an exclusive CumSum of the routing mask),
    the dispatch mask is the routing mask times OneHot(place, capacity), the buffers
    [E, capacity, H] are an Einsum of it with the tokens, AllToAll sends each expert its
    buffers, and the combine weights are the gates times the dispatch mask. A token whose place
    is at or past the capacity is dropped: with every rank's tokens (T / ranks) as capacity
    none is."""
    t, e = T // ranks, E // ranks
    nodes = routing(order=order) + [
        const("two_axes", [1], I64, [1]), const("zero_axis", [0], I64, [1]),
        const("token_axis", 0, I64), const("capacity", capacity),
        N("ReduceSum", ["hot", "two_axes"], ["mask"], name="/dispatch/ReduceSum_mask", keepdims=0)]
    if triangular:  # place = L @ mask, L strictly lower triangular, made from x's shape
        nodes += [
            N("Shape", ["x"], ["x_shape"], name="/dispatch/Shape", end=1),
            N("Concat", ["x_shape", "x_shape"], ["tt"], name="/dispatch/Concat", axis=0),
            N("ConstantOfShape", ["tt"], ["ones_tt"], name="/dispatch/ConstantOfShape",
              value=helper.make_tensor("one", F, [1], [1.0])),
            const("below", -1, I64),
            N("Trilu", ["ones_tt", "below"], ["earlier"], name="/dispatch/Trilu", upper=0),
            N("MatMul", ["earlier", "mask"], ["place_f"], name="/dispatch/MatMul_place")]
    else:
        nodes += [N("CumSum", ["mask", "token_axis"], ["place_f"], name="/dispatch/CumSum", exclusive=1)]
    nodes += [
        N("Cast", ["place_f"], ["place"], name="/dispatch/Cast", to=I64),
        N("OneHot", ["place", "capacity", "off_on"], ["slot"], name="/dispatch/OneHot", axis=-1),
        N("Unsqueeze", ["mask", "last"], ["mask_u"], name="/dispatch/Unsqueeze_mask"),
        N("Mul", ["mask_u", "slot"], ["dispatch"], name="/dispatch/Mul"),
        N("Einsum", ["dispatch", "x"], ["buffer"], name="/dispatch/Einsum", equation="tec,th->ech")]
    nodes += experts_by_all_to_all(ranks) + [
        N("Unsqueeze", ["gates", "last"], ["gates_u"], name="/combine/Unsqueeze"),
        N("Mul", ["gates_u", "dispatch"], ["combine"], name="/combine/Mul"),
        N("Einsum", ["combine", "returned"], ["y"], name="/combine/Einsum", equation="tec,ech->th")]
    return token_split_rank(nodes, r, t, e)


def argsort_rank(r, ranks, bug=None):
    """Expert parallelism as torchtitan and Megatron-Core permute tokens: the rank's (token,
    top-k slot) pairs p = t*K + k are sorted by expert with TopK (smallest first, sorted) over the
    distinct keys expert * N + p, the token rows gathered in that order and then into per-expert
    buffers of one slot per token (slot c of expert e holds the sorted pair start[e] + c while c
    is below the expert's count, else a zero row), AllToAll to the experts' ranks and back; the
    combine reads each sorted pair from its slot, unpermutes by the inverse permutation (the
    argsort of the order), weights by the gates and adds the top-k rows of each token into the
    token's row (index_add). `bug="twice"`: the combine gathers by the order again instead of
    its inverse (torchtitan #1237), right only where the order is its own inverse."""
    t, e = T // ranks, E // ranks
    n, cap = t * K, t
    nodes = routing() + [
        const("pairs_shape", [n], I64, [1]), const("n_i", n), const("k_all", [n], I64, [1]),
        const("pair_ids", list(range(n)), I64, [n]),
        const("pair_token", [p // K for p in range(n)], I64, [n]),
        const("one_axis", [1], I64, [1]), const("zero_axis", [0], I64, [1]), const("zero_i", 0),
        const("places", list(range(cap)), I64, [1, cap]), const("e_1", [E, 1], I64, [2]),
        const("slots_shape", [E * cap], I64, [1]), const("zero_row", [0.0] * H, F, [1, H]),
        const("buffer_shape", [E, cap, H], I64, [3]), const("rows_shape", [E * cap, H], I64, [2]),
        const("cap_i", cap), const("n_1", [n, 1], I64, [2]), const("n_h", [n, H], I64, [2]),
        const("zeros_th", [0.0] * (t * H), F, [t, H]),
        N("Reshape", ["idx", "pairs_shape"], ["experts"], name="/dispatch/Reshape_pairs"),
        N("Mul", ["experts", "n_i"], ["scaled"], name="/dispatch/Mul_key"),
        N("Add", ["scaled", "pair_ids"], ["key"], name="/dispatch/Add_key"),
        N("TopK", ["key", "k_all"], ["key_sorted", "order"], name="/dispatch/TopK_argsort",
          axis=-1, largest=0, sorted=1),
        N("Gather", ["pair_token", "order"], ["token"], name="/dispatch/Gather_token", axis=0),
        N("Gather", ["x", "token"], ["rows"], name="/dispatch/Gather_rows", axis=0),
        N("ReduceSum", ["hot", "one_axis"], ["mask"], name="/dispatch/ReduceSum_mask", keepdims=0),
        N("ReduceSum", ["mask", "zero_axis"], ["counts_f"], name="/dispatch/ReduceSum_counts",
          keepdims=0),
        N("CumSum", ["counts_f", "zero_i"], ["start_f"], name="/dispatch/CumSum", exclusive=1),
        N("Cast", ["start_f"], ["start"], name="/dispatch/Cast_start", to=I64),
        N("Cast", ["counts_f"], ["counts"], name="/dispatch/Cast_counts", to=I64),
        N("Reshape", ["start", "e_1"], ["first"], name="/dispatch/Reshape_start"),
        N("Add", ["first", "places"], ["held"], name="/dispatch/Add_source"),
        N("Reshape", ["counts", "e_1"], ["counts_e"], name="/dispatch/Reshape_counts"),
        N("Less", ["places", "counts_e"], ["filled"], name="/dispatch/Less_count"),
        N("Where", ["filled", "held", "n_i"], ["source_ec"], name="/dispatch/Where_padding"),
        N("Reshape", ["source_ec", "slots_shape"], ["source"], name="/dispatch/Reshape_source"),
        N("Concat", ["rows", "zero_row"], ["padded"], name="/dispatch/Concat_zero_row", axis=0),
        N("Gather", ["padded", "source"], ["buffer_rows"], name="/dispatch/Gather_buffers", axis=0),
        N("Reshape", ["buffer_rows", "buffer_shape"], ["buffer"], name="/dispatch/Reshape_buffer"),
    ] + experts_by_all_to_all(ranks) + [
        N("Reshape", ["returned", "rows_shape"], ["returned_rows"], name="/combine/Reshape_returned"),
        N("Gather", ["experts", "order"], ["expert_sorted"], name="/combine/Gather_experts", axis=0),
        N("Gather", ["start", "expert_sorted"], ["begin"], name="/combine/Gather_start", axis=0),
        N("Sub", ["pair_ids", "begin"], ["place"], name="/combine/Sub_place"),
        N("Mul", ["expert_sorted", "cap_i"], ["base"], name="/combine/Mul_capacity"),
        N("Add", ["base", "place"], ["slot"], name="/combine/Add_slot"),
        N("Gather", ["returned_rows", "slot"], ["sorted_rows"], name="/combine/Gather_slots", axis=0),
        N("TopK", ["order", "k_all"], ["order_sorted", "inverse"], name="/combine/TopK_inverse",
          axis=-1, largest=0, sorted=1),
        N("Gather", ["sorted_rows", "order" if bug == "twice" else "inverse"], ["pair_rows"],
          name="/combine/Gather_unpermute", axis=0),
        N("Reshape", ["weights", "n_1"], ["pair_weights"], name="/combine/Reshape_gates"),
        N("Mul", ["pair_rows", "pair_weights"], ["weighted_rows"], name="/combine/Mul_gates"),
        N("Unsqueeze", ["pair_token", "one_axis"], ["token_u"], name="/combine/Unsqueeze_index"),
        N("Expand", ["token_u", "n_h"], ["index"], name="/combine/Expand_index"),
        N("ScatterElements", ["zeros_th", "index", "weighted_rows"], ["y"],
          name="/combine/ScatterElements_index_add", axis=0, reduction="add")]
    return token_split_rank(nodes, r, t, e)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "moe")
    write(out, spec(), {
        "ep2": [ep_rank(r, 2) for r in range(2)],
        "ep4": [ep_rank(r, 4) for r in range(4)],
        "ep2_scatter": [ep_rank(r, 2, scatter=True) for r in range(2)],
        "ep2_routing_map": [ep_rank(r, 2, masked="scatter") for r in range(2)],
        "ep4_or_map": [ep_rank(r, 4, masked="or") for r in range(4)],
        "ep2_map_first_slot": [ep_rank(r, 2, masked="first_slot") for r in range(2)],
        "a2a2_padded": [a2a_rank(r, 2) for r in range(2)],
        "a2a2_dense": [a2a_rank(r, 2, masked=False) for r in range(2)],
        "a2a2_wrong_gate": [a2a_rank(0, 2), a2a_rank(1, 2, combine_shift=1)],
        "a2a2_capacity": [capacity_rank(r, 2, T // 2) for r in range(2)],
        "a2a2_capacity_per_rank": [capacity_rank(r, 2, T // 2 // 2) for r in range(2)],
        "a2a2_triangular": [capacity_rank(r, 2, T // 2, triangular=True) for r in range(2)],
        "ep2_offset": [ep_rank(0, 2), ep_rank(1, 2, column_shift=-1)],
        "ep2_full_softmax": [ep_rank(r, 2, full_softmax=True) for r in range(2)],
        "ep2_unsorted": [ep_rank(r, 2, order="unsorted") for r in range(2)],
        "a2a2_capacity_unsorted": [capacity_rank(r, 2, T // 2, order="unsorted") for r in range(2)],
        "ep2_unsorted_mixed": [ep_rank(r, 2, order="mixed") for r in range(2)],
        "a2a2_argsort": [argsort_rank(r, 2) for r in range(2)],
        "a2a2_argsort_twice": [argsort_rank(r, 2, bug="twice") for r in range(2)],
    })


def main_tokens8():
    """models/moe8: the same layer over 8 tokens, 4 per rank: GShard's dispatch with every
    rank's tokens as capacity (places by CumSum or a triangular MatMul) proves; a capacity of 3
    drops a token only where all 4 of a rank's tokens share an expert: an instance with fewer
    tokens never does, so the token axis must keep its size (reduce/sizes_as_data.cpp)."""
    global T
    T = 8
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "moe8")
    write(out, spec(), {
        "a2a2_capacity": [capacity_rank(r, 2, 4) for r in range(2)],
        "a2a2_triangular": [capacity_rank(r, 2, 4, triangular=True) for r in range(2)],
        "a2a2_triangular_short": [capacity_rank(r, 2, 3, triangular=True) for r in range(2)],
    })


def drop_rank(r, ranks, capacity):
    """The padded dispatch, where a token whose place (earlier tokens routed to the same expert,
    by a triangular MatMul) reaches the capacity is dropped from the mask: keep = 1 - place //
    capacity, an integer division of a count."""
    t, e = T // ranks, E // ranks
    nodes = routing() + [
        const("two_axes", [1], I64, [1]), const("zero_axis", [0], I64, [1]),
        const("capacity", capacity), const("one_i", 1),
        N("ReduceSum", ["hot", "two_axes"], ["mask"], name="/dispatch/ReduceSum_mask", keepdims=0),
        N("Shape", ["x"], ["x_shape"], name="/dispatch/Shape", end=1),
        N("Concat", ["x_shape", "x_shape"], ["tt"], name="/dispatch/Concat", axis=0),
        N("ConstantOfShape", ["tt"], ["ones_tt"], name="/dispatch/ConstantOfShape",
          value=helper.make_tensor("one", F, [1], [1.0])),
        const("below", -1, I64),
        N("Trilu", ["ones_tt", "below"], ["earlier"], name="/dispatch/Trilu", upper=0),
        N("MatMul", ["earlier", "mask"], ["place_f"], name="/dispatch/MatMul_place"),
        N("Cast", ["place_f"], ["place"], name="/dispatch/Cast", to=I64),
        N("Div", ["place", "capacity"], ["full"], name="/dispatch/Div"),
        N("Sub", ["one_i", "full"], ["keep_i"], name="/dispatch/Sub_keep"),
        N("Cast", ["keep_i"], ["keep"], name="/dispatch/Cast_keep", to=F),
        N("Mul", ["mask", "keep"], ["kept"], name="/dispatch/Mul_keep"),
        N("Transpose", ["kept"], ["kept_t"], name="/dispatch/Transpose", perm=[1, 0]),
        N("Unsqueeze", ["kept_t", "last"], ["mask_u"], name="/dispatch/Unsqueeze_mask"),
        N("Unsqueeze", ["x", "zero_axis"], ["x1"], name="/dispatch/Unsqueeze_x"),
        N("Mul", ["mask_u", "x1"], ["buffer"], name="/dispatch/Mul")]
    nodes += experts_by_all_to_all(ranks) + [
        N("Transpose", ["gates"], ["gates_t"], name="/combine/Transpose", perm=[1, 0]),
        N("Unsqueeze", ["gates_t", "last"], ["gates_u"], name="/combine/Unsqueeze"),
        N("Mul", ["gates_u", "returned"], ["scaled"], name="/combine/Mul"),
        N("ReduceSum", ["scaled", "zero_axis"], ["y"], name="/combine/ReduceSum", keepdims=0)]
    return token_split_rank(nodes, r, t, e)


def main_tanh8():
    """models/moe8_tanh: 8 tokens, Tanh experts, a token dropped where its place reaches the
    capacity by an integer division: capacity 4 drops none of a rank's 4 tokens, capacity 3
    drops one where all 4 share an expert, which no instance of fewer tokens shows."""
    global T, ACT
    T, ACT = 8, "Tanh"
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "moe8_tanh")
    write(out, spec(), {
        "a2a2_drop": [drop_rank(r, 2, 4) for r in range(2)],
        "a2a2_drop_short": [drop_rank(r, 2, 3) for r in range(2)],
    })
    T, ACT = 4, "Relu"


def main_experts8():
    """models/moe_e8: the layer with top-2 of 8 experts: tokens replicated, Megatron's routing
    map, the padded AllToAll dispatch and GShard's capacity dispatch (places by CumSum or a
    triangular MatMul), and three bugs: a rank's expert offset, combine weights from the
    softmax over all scores, a capacity counted per rank."""
    global E, T
    E, T = 8, 4
    out = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "moe_e8")
    write(out, spec(), {
        "ep2": [ep_rank(r, 2) for r in range(2)],
        "ep4": [ep_rank(r, 4) for r in range(4)],
        "ep2_routing_map": [ep_rank(r, 2, masked="scatter") for r in range(2)],
        "a2a2_padded": [a2a_rank(r, 2) for r in range(2)],
        "a2a2_capacity": [capacity_rank(r, 2, T // 2) for r in range(2)],
        "a2a2_triangular": [capacity_rank(r, 2, T // 2, triangular=True) for r in range(2)],
        "ep2_offset": [ep_rank(0, 2), ep_rank(1, 2, column_shift=-1)],
        "ep2_full_softmax": [ep_rank(r, 2, full_softmax=True) for r in range(2)],
        "a2a2_capacity_per_rank": [capacity_rank(r, 2, 1) for r in range(2)],
    })


if __name__ == "__main__":
    main()
    main_tokens8()
    main_experts8()
    main_tanh8()
