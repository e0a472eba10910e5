"""Expert parallelism by AllToAll with an argsort permutation, as torchtitan and Megatron-Core
permute tokens: forward and hand-derived backward (PlanConfig.permute = "argsort").

A rank's (token, top-k slot) pairs p = t*K + k (N = T*K of them) are sorted by expert with a
stable order: TopK, smallest first and sorted, of the distinct integer key expert * N + p (the
pair index breaks the ties, so the order is the stable argsort's whatever a runtime does with
equal keys). The token rows are gathered in that expert-major order (index_select) and then
into fixed-capacity buffers [E*C, hidden], C = T slots per expert (a token is routed at most
once to an expert, so none is dropped and every AllToAll splits equally), as torchtitan pads
them: slot c of expert e takes the sorted pair start[e] + c (start[e]: the pairs routed to the
experts before e) while c < count[e], else an appended zero row. The AllToAll sends each rank
the rows of its E / ep local experts; they arrive rank-major (all of rank 0's rows for each
local expert, then rank 1's...) and are re-sorted expert-major before the experts run, and back
before the AllToAll that returns them. The combine reads each sorted pair's row from its slot
(the sorted pair j, routed to e, is in buffer row e*C + j - start[e]), unpermutes (the sort
permutation's inverse, back to pair order), weights by the gates and adds the top-k rows of
each token into the token's row (index_add: ScatterElements with reduction add at the token
index, built as batch row * seq + position).

Every move between orders is a gather (the inverse permutation is the argsort of the order, the
padded buffers gather from the sorted rows): a scatter without reduction is undefined in ONNX
where two indices may meet, and that these indices never do is not visible to a checker.

Generator-level bugs (PlanConfig.bug) from real reports:
  permute_twice           the combine applies the sort permutation again instead of its inverse
                          (torchtitan #1237)
  no_expert_major_resort  the received rows stay rank-major: the experts run on the wrong rows
                          (harmless with one local expert)
  sp_global_token_index   the token index the combine scatters back to leaves out the batch
                          row's offset (torchtitan #3604: right only for one row per rank)
  index_add_overwrites    the combine's index_add as ScatterElements without reduction: a
                          token's second top-k row overwrites the first (pytorch #111159)
"""
import numpy as np


class Permute:
    def permute_experts(self, xf, gates, W, p, S, T):
        """The routed experts' output [T, hidden] for this rank's tokens."""
        g, m, c = self.g, self.m, self._c()
        assert not self.par.capacity, "the argsort dispatch pads every expert to T slots"
        N = T * m.topk
        with g.scope("dispatch"):
            order, inverse, expert = self.sort_pairs(S["idx"], N)
            source, slot = self.buffer_rows(S["routed"], expert, N, T)
            token = g.node("Gather", [g.ints(np.arange(N) // m.topk), order], "Gather_token",
                           axis=0)
            rows = g.node("Gather", [xf, token], "Gather_rows", axis=0)
            buf = self.gather_padded(rows, source, "Gather_buffers")
            sent = c.alltoall(buf, ["ep"], 0, 0, "ep/AllToAll")
            received = self.expert_major(sent, T)
        with g.scope("experts"):
            out, S["experts"] = self.swiglu(received, W[p + "experts.w_gate"],
                                            W[p + "experts.w_up"], W[p + "experts.w_down"],
                                            m.moe_ffn)
        with g.scope("combine"):
            back = c.alltoall(self.rank_major(out, T), ["ep"], 0, 0, "ep/AllToAll")
            ys = g.node("Gather", [back, slot], "Gather_slots", axis=0)
            # a bug: the sort permutation applied again where its inverse was meant
            to_pairs = order if self.par.bug == "permute_twice" else inverse
            pairs = g.node("Gather", [ys, to_pairs], "Gather_unpermute", axis=0)
            w = g.node("GatherElements", [gates, S["idx"]], "GatherElements_gates", axis=-1)
            wu = g.node("Reshape", [w, g.ints([N, 1])], "Reshape_gates")
            weighted = g.node("Mul", [pairs, wu], "Mul_gates")
            index = self.token_index(N)
            y = g.node("ScatterElements", [g.filled([T, m.hidden], 0.0), index, weighted],
                       "ScatterElements_index_add", axis=0,
                       reduction=None if self.par.bug == "index_add_overwrites" else "add")
        S.update(moe_order=order, moe_inverse=inverse, moe_source=source, moe_slot=slot,
                 moe_token=token, moe_received=received, moe_pairs=pairs, moe_wu=wu,
                 moe_index=index)
        return y

    def permute_experts_bwd(self, dyf, W, p, S, G):
        """d(tokens) [T, hidden] and d(gates) [T, E]; the local experts' gradients into G."""
        g, m, c = self.g, self.m, self._c()
        T = self.bm * self.sq
        N = T * m.topk
        with g.scope("combine"), g.backward():
            # the index_add's backward gathers at the same index
            dw_rows = g.node("GatherElements", [dyf, S["moe_index"]], "ScatterElements_index_add",
                             axis=0)
            dpairs = g.node("Mul", [dw_rows, S["moe_wu"]], "Mul_gates")
            prod = g.node("Mul", [dw_rows, S["moe_pairs"]], "Mul_gates_grad")
            dw = g.node("ReduceSum", [prod, g.ints([-1])], "ReduceSum_gates_grad", keepdims=0)
            dw2 = g.node("Reshape", [dw, g.ints([T, m.topk])], "Reshape_gates")
            dgates = g.node("ScatterElements", [g.filled([T, m.experts], 0.0), S["idx"], dw2],
                            "GatherElements_gates", axis=-1)
            # the backward of a gather by a permutation is the gather by its inverse
            order, inverse = S["moe_order"], S["moe_inverse"]
            to_sorted = inverse if self.par.bug == "permute_twice" else order
            dys = g.node("Gather", [dpairs, to_sorted], "Gather_unpermute", axis=0)
            # a gather's backward scatters to its index; the two maps being inverse, that is
            # the gather by the other one
            dback = self.gather_padded(dys, S["moe_source"], "Gather_slots")
            dout = self.expert_major(c.alltoall(dback, ["ep"], 0, 0, "ep/AllToAll"), T)
        with g.scope("experts"):
            drecv = self.expert_weights_bwd(dout, S["moe_received"], W, p, S["experts"], G)
        with g.scope("dispatch"), g.backward():
            dbuf = c.alltoall(self.rank_major(drecv, T), ["ep"], 0, 0, "ep/AllToAll")
            drows = g.node("Gather", [dbuf, S["moe_slot"]], "Gather_buffers", axis=0)
            # the row gather's backward adds each pair's row into its token's (index_add)
            index = self.expand_rows(S["moe_token"], N)
            dx = g.node("ScatterElements", [g.filled([T, m.hidden], 0.0), index, drows],
                        "Gather_rows", axis=0, reduction="add")
        return dx, dgates

    # ---- the permutation ---------------------------------------------------------------------
    def sort_pairs(self, idx, N):
        """The stable argsort of the pairs' experts: order [N] (the pair at each sorted place),
        its inverse [N] (the sorted place of each pair) and the expert [N] of each sorted
        place."""
        g = self.g
        experts = g.node("Reshape", [idx, g.ints([N])], "Reshape_pairs")
        scaled = g.node("Mul", [experts, g.ints(N)], "Mul_key")
        key = g.node("Add", [scaled, g.ints(np.arange(N))], "Add_key")
        _, order = g.node("TopK", [key, g.ints([N])], "TopK_argsort", outputs=2, axis=-1,
                          largest=0, sorted=1)
        expert = g.node("Gather", [experts, order], "Gather_experts", axis=0)
        # the argsort of a permutation is its inverse
        _, inverse = g.node("TopK", [order, g.ints([N])], "TopK_inverse", outputs=2, axis=-1,
                            largest=0, sorted=1)
        return order, inverse, expert

    def buffer_rows(self, routed, expert, N, C):
        """The two maps between sorted pairs and buffer rows [E*C, hidden]: source [E*C], the
        sorted pair each buffer row holds (N, the appended zero row, past its expert's count),
        and slot [N], the buffer row of each sorted pair: expert * C plus its place among its
        expert's pairs (its sorted place minus where the expert begins)."""
        g, E = self.g, self.m.experts
        counts_f = g.node("ReduceSum", [routed, g.ints([0])], "ReduceSum_counts", keepdims=0)
        start_f = g.node("CumSum", [counts_f, g.ints(0)], exclusive=1)
        start = g.node("Cast", [start_f], "Cast_start", to=7)
        counts = g.node("Cast", [counts_f], "Cast_counts", to=7)
        places = g.ints(np.arange(C)[None, :])
        first = g.node("Reshape", [start, g.ints([E, 1])], "Reshape_start")
        held = g.node("Add", [first, places], "Add_source")
        filled = g.node("Less", [places, g.node("Reshape", [counts, g.ints([E, 1])],
                                                "Reshape_counts")], "Less_count")
        source = g.node("Where", [filled, held, g.ints(N)], "Where_padding")
        source = g.node("Reshape", [source, g.ints([E * C])], "Reshape_source")
        begin = g.node("Gather", [start, expert], "Gather_start", axis=0)
        place = g.node("Sub", [g.ints(np.arange(N)), begin], "Sub_place")
        base = g.node("Mul", [expert, g.ints(C)], "Mul_capacity")
        return source, g.node("Add", [base, place], "Add_slot")

    def gather_padded(self, rows, at, name):
        """rows [N, hidden] with a zero row appended, gathered at `at` (N: the zero row)."""
        g = self.g
        zero = g.filled([1, self.m.hidden], 0.0)
        padded = g.node("Concat", [rows, zero], "Concat_zero_row", axis=0)
        return g.node("Gather", [padded, at], name, axis=0)

    def token_index(self, N):
        """The index [N, hidden] of each pair's token row in the combine's output: batch row *
        seq + position (torchtitan rebuilds the global index from the local layout this way)."""
        g, sq = self.g, self.sq
        token = np.arange(N) // self.m.topk
        index = g.ints(token % sq)
        if self.par.bug != "sp_global_token_index":   # the bug leaves out the row's offset
            index = g.node("Add", [index, g.ints(token // sq * sq)], "Add_row_offset")
        return self.expand_rows(index, N)

    def expand_rows(self, index, N):
        """A row index [N] as ScatterElements and GatherElements want it, [N, hidden]."""
        g = self.g
        u = g.node("Unsqueeze", [index, g.ints([-1])], "Unsqueeze_index")
        return g.node("Expand", [u, g.ints([N, self.m.hidden])], "Expand_index")

    # ---- rank-major and expert-major rows ------------------------------------------------------
    def expert_major(self, x, C):
        """Rows [ep * E_local * C, hidden] as received (rank-major) -> [E_local, ep * C, hidden]
        (each local expert's rows from every rank together)."""
        g, ep, h = self.g, self.par.ep, self.m.hidden
        el = self.m.experts // ep
        if self.par.bug == "no_expert_major_resort":   # a bug: the rank-major rows as they are
            return g.node("Reshape", [x, g.ints([el, ep * C, h])], "Reshape_expert_major")
        r = g.node("Reshape", [x, g.ints([ep, el, C, h])], "Reshape_rank_major")
        t = g.node("Transpose", [r], "Transpose_expert_major", perm=[1, 0, 2, 3])
        return g.node("Reshape", [t, g.ints([el, ep * C, h])], "Reshape_expert_major")

    def rank_major(self, y, C):
        """The inverse of expert_major: [E_local, ep * C, hidden] -> rows by destination rank."""
        g, ep, h = self.g, self.par.ep, self.m.hidden
        el = self.m.experts // ep
        if self.par.bug == "no_expert_major_resort":
            return g.node("Reshape", [y, g.ints([ep * el * C, h])], "Reshape_rank_major")
        r = g.node("Reshape", [y, g.ints([el, ep, C, h])], "Reshape_expert_major")
        t = g.node("Transpose", [r], "Transpose_rank_major", perm=[1, 0, 2, 3])
        return g.node("Reshape", [t, g.ints([ep * el * C, h])], "Reshape_rank_major")
