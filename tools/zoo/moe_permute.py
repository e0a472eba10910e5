"""Expert parallelism by AllToAll with an argsort permutation, as torchtitan and Megatron-Core
permute tokens: forward and hand-derived backward (PlanConfig.permute = "argsort").

A rank's (token, top-k slot) pairs p = t*K + k (N = T*K of them) are sorted by expert with a
stable order: TopK, smallest first and sorted, of the distinct integer key expert * N + p (the
pair index breaks the ties, so the order is the stable argsort's whatever a runtime does with
equal keys). The token rows are gathered in that expert-major order (index_select) and placed
in fixed-capacity buffers [E*C, hidden], C = T slots per expert (a token is routed at most once
to an expert, so none is dropped and every AllToAll splits equally): the sorted pair j, routed
to expert e, takes slot j - start[e] of e's buffer, start[e] being the number of pairs routed
to the experts before e. The AllToAll sends each rank the rows of its E / ep local experts; they
arrive rank-major (all of rank 0's rows for each local expert, then rank 1's...) and are
re-sorted expert-major before the experts run, and back before the AllToAll that returns them.
The combine reads each sorted pair's row from its slot, unpermutes (the sort permutation's
inverse: back to pair order), weights by the gates and adds the top-k rows of each token into
the token's row (index_add: ScatterElements with reduction add at the token index, built as
batch row * seq + position).

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
            order, expert = self.sort_pairs(S["idx"], N)
            slot = self.buffer_slots(S["routed"], expert, N, T)
            token = g.node("Gather", [g.ints(np.arange(N) // m.topk), order], "Gather_token",
                           axis=0)
            rows = g.node("Gather", [xf, token], "Gather_rows", axis=0)
            buf = self.scatter_rows(rows, slot, m.experts * T, "ScatterND_buffers")
            sent = c.alltoall(buf, ["ep"], 0, 0, "ep/AllToAll")
            received = self.expert_major(sent, T)
        with g.scope("experts"):
            out, S["experts"] = self.swiglu(received, W[p + "experts.w_gate"],
                                            W[p + "experts.w_up"], W[p + "experts.w_down"],
                                            m.moe_ffn)
        with g.scope("combine"):
            back = c.alltoall(self.rank_major(out, T), ["ep"], 0, 0, "ep/AllToAll")
            ys = g.node("Gather", [back, slot], "Gather_slots", axis=0)
            if self.par.bug == "permute_twice":
                pairs = self.permute_rows(ys, order)      # a bug: the permutation again
            else:
                pairs = self.unpermute_rows(ys, order, N)
            w = g.node("GatherElements", [gates, S["idx"]], "GatherElements_gates", axis=-1)
            wu = g.node("Reshape", [w, g.ints([N, 1])], "Reshape_gates")
            weighted = g.node("Mul", [pairs, wu], "Mul_gates")
            index = self.token_index(N)
            y = g.node("ScatterElements", [g.filled([T, m.hidden], 0.0), index, weighted],
                       "ScatterElements_index_add", axis=0,
                       reduction=None if self.par.bug == "index_add_overwrites" else "add")
        S.update(moe_order=order, moe_slot=slot, moe_token=token, moe_received=received,
                 moe_pairs=pairs, moe_wu=wu, moe_index=index)
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
            # each permutation's backward is its inverse
            if self.par.bug == "permute_twice":
                dys = self.unpermute_rows(dpairs, S["moe_order"], N, "Gather_permute")
            else:
                dys = self.permute_rows(dpairs, S["moe_order"], "ScatterND_unpermute")
            dback = self.scatter_rows(dys, S["moe_slot"], m.experts * T, "Gather_slots")
            dout = self.expert_major(c.alltoall(dback, ["ep"], 0, 0, "ep/AllToAll"), T)
        with g.scope("experts"):
            drecv = self.expert_weights_bwd(dout, S["moe_received"], W, p, S["experts"], G)
        with g.scope("dispatch"), g.backward():
            dbuf = c.alltoall(self.rank_major(drecv, T), ["ep"], 0, 0, "ep/AllToAll")
            drows = g.node("Gather", [dbuf, S["moe_slot"]], "ScatterND_buffers", axis=0)
            # the row gather's backward adds each pair's row into its token's (index_add)
            index = self.expand_rows(S["moe_token"], N)
            dx = g.node("ScatterElements", [g.filled([T, m.hidden], 0.0), index, drows],
                        "Gather_rows", axis=0, reduction="add")
        return dx, dgates

    # ---- the permutation ---------------------------------------------------------------------
    def sort_pairs(self, idx, N):
        """The stable argsort of the pairs' experts: order [N] (the pair at each sorted place)
        and the expert [N] of each sorted place."""
        g = self.g
        experts = g.node("Reshape", [idx, g.ints([N])], "Reshape_pairs")
        scaled = g.node("Mul", [experts, g.ints(N)], "Mul_key")
        key = g.node("Add", [scaled, g.ints(np.arange(N))], "Add_key")
        _, order = g.node("TopK", [key, g.ints([N])], "TopK_argsort", outputs=2, axis=-1,
                          largest=0, sorted=1)
        expert = g.node("Gather", [experts, order], "Gather_experts", axis=0)
        return order, expert

    def buffer_slots(self, routed, expert, N, C):
        """The row [N] of each sorted pair in the buffers [E*C, hidden]: expert * C plus its
        place among the pairs of its expert (its sorted place minus where the expert begins)."""
        g = self.g
        counts = g.node("ReduceSum", [routed, g.ints([0])], "ReduceSum_counts", keepdims=0)
        start_f = g.node("CumSum", [counts, g.ints(0)], exclusive=1)
        start = g.node("Cast", [start_f], to=7)
        begin = g.node("Gather", [start, expert], "Gather_start", axis=0)
        place = g.node("Sub", [g.ints(np.arange(N)), begin], "Sub_place")
        base = g.node("Mul", [expert, g.ints(C)], "Mul_capacity")
        return g.node("Add", [base, place], "Add_slot")

    def scatter_rows(self, rows, at, n, name):
        """[n, hidden] zeros with rows[j] at row at[j] (distinct rows)."""
        g = self.g
        at2 = g.node("Unsqueeze", [at, g.ints([-1])])
        return g.node("ScatterND", [g.filled([n, self.m.hidden], 0.0), at2, rows], name)

    def permute_rows(self, x, order, name="Gather_permute"):
        """Row j of the result is row order[j] of x: pair order to sorted order."""
        return self.g.node("Gather", [x, order], name, axis=0)

    def unpermute_rows(self, x, order, N, name="ScatterND_unpermute"):
        """Row order[j] of the result is row j of x: the inverse, sorted order to pair order."""
        return self.scatter_rows(x, order, N, name)

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
