"""Expert parallelism by AllToAll: fixed-capacity dispatch and combine, forward and
hand-derived backward.

Every rank of the `ep` group routes its own tokens into buffers [E, C, hidden], C slots per
expert, by a dispatch mask [T, E, C] (an Einsum of it with the tokens). Padded (capacity 0 in
the plan): C is the rank's token count and token t takes slot t of every expert it is routed
to (the mask is the routing mask times an identity). GShard's (capacity C): a token's place in
expert e's buffer is the number of this rank's earlier tokens routed to e (an exclusive CumSum
of the routing mask), and the mask is the routing mask times OneHot(place, C). AllToAll sends each rank the buffers of its E / ep experts
from every rank, the experts run on them, a second AllToAll returns the outputs, and the gates
times the dispatch mask combine them. A token whose place reaches the capacity C is dropped, so
the plan equals the dropless spec only where no rank routes more than C of its tokens to one
expert: C = tokens per rank always holds.
"""
import numpy as np


class Dispatch:
    def dispatch_experts(self, xf, gates, W, p, S, T):
        """The routed experts' output [T, hidden] for this rank's tokens."""
        g, m, c = self.g, self.m, self._c()
        C = self.par.capacity
        if C and self.par.bug == "capacity_per_rank":
            # Computed per rank from an even load of the rank's own tokens that forgets the
            # top-k factor (tokens / experts, not tokens * k / experts), where the plan meant
            # a capacity above every rank's token count: an expert more tokens choose drops
            # the rest.
            C = max(1, T // m.experts)
        with g.scope("dispatch"):
            if C:
                place_f = g.node("CumSum", [S["routed"], g.ints(0)], exclusive=1)
                place = g.node("Cast", [place_f], to=7)
                slot = g.node("OneHot", [place, g.ints([C]), g.const([0.0, 1.0])], axis=-1)
            else:
                slot = g.const(np.eye(T)[:, None, :])
            mu = g.node("Unsqueeze", [S["routed"], g.ints([-1])])
            dispatch = g.node("Mul", [mu, slot], "Mul_dispatch")
            buf = g.node("Einsum", [dispatch, xf], equation="tec,th->ech")
            received = c.alltoall(buf, ["ep"], 0, 1, "ep/AllToAll")
        with g.scope("experts"):
            out, S["experts"] = self.swiglu(received, W[p + "experts.w_gate"],
                                            W[p + "experts.w_up"], W[p + "experts.w_down"],
                                            m.moe_ffn)
        with g.scope("combine"):
            returned = c.alltoall(out, ["ep"], 1, 0, "ep/AllToAll")
            gu = g.node("Unsqueeze", [gates, g.ints([-1])])
            combine = g.node("Mul", [gu, dispatch], "Mul_combine")
            y = g.node("Einsum", [combine, returned], equation="tec,ech->th")
        S.update(moe_dispatch=dispatch, moe_combine=combine, moe_received=received,
                 moe_returned=returned)
        return y

    def dispatch_experts_bwd(self, dyf, W, p, S, G):
        """d(tokens) [T, hidden] and d(gates) [T, E]; the local experts' gradients into G."""
        g, c = self.g, self._c()
        with g.scope("combine"), g.backward():
            dret = g.node("Einsum", [S["moe_combine"], dyf], equation="tec,th->ech")
            dcomb = g.node("Einsum", [dyf, S["moe_returned"]], equation="th,ech->tec")
            dg = g.node("Mul", [dcomb, S["moe_dispatch"]], "Mul_dispatch")
            dgates = g.node("ReduceSum", [dg, g.ints([2])], keepdims=0)
            dout = c.alltoall(dret, ["ep"], 0, 1, "ep/AllToAll")
        with g.scope("experts"):
            drecv = self.expert_weights_bwd(dout, S["moe_received"], W, p, S["experts"], G)
        with g.scope("dispatch"), g.backward():
            dbuf = c.alltoall(drecv, ["ep"], 1, 0, "ep/AllToAll")
            dx = g.node("Einsum", [S["moe_dispatch"], dbuf], equation="tec,ech->th")
        return dx, dgates
