"""The DeepSeek MoE layer (HF `DeepseekV3MoE`), forward and hand-derived backward.

y = sum over the routed experts e of gates[:, e] * SwiGLU_e(x) + the shared experts' SwiGLU(x),
computed densely: every expert on every token, weighted by its gate (0 where not routed), which
is the single-device meaning a dispatch must match. The router is moe_router.py.

Under tensor parallelism the experts are split inside the TP group with the tokens replicated
(TrainVerify's form of expert parallelism): each rank runs its E / tp experts, the shared
expert is column- and row-parallel, and their partial outputs are all-reduced with the
attention's collective pattern. The router runs whole on every rank: the gates' gradient
columns of the other ranks' experts are all-gathered before its backward.
"""

from .moe_dispatch import Dispatch
from .moe_permute import Permute
from .moe_router import Router


def moe_param_shapes(m, p):
    h, f, e = m.hidden, m.moe_ffn, m.experts
    return {p + "router": [h, e],
            p + "experts.w_gate": [e, h, f], p + "experts.w_up": [e, h, f],
            p + "experts.w_down": [e, f, h],
            p + "shared.w_gate": [h, f * m.shared], p + "shared.w_up": [h, f * m.shared],
            p + "shared.w_down": [f * m.shared, h]}


def moe_tp_shard_dim(param):
    """"other" where the parameter is not the MoE layer's."""
    leaf = param.split(".")
    if len(leaf) < 2 or leaf[-2] not in ("experts", "shared") and leaf[-1] != "router":
        return "other"
    if leaf[-1] == "router":
        return None
    if leaf[-2] == "experts":
        return 0
    return 1 if leaf[-1] in ("w_gate", "w_up") else 0


class MoE(Router, Dispatch, Permute):
    def all_to_all(self):
        """The expert-parallel dispatch's forward and backward: the argsort permutation
        (moe_permute.py) or the one-hot mask (moe_dispatch.py)."""
        if self.par.permute == "argsort":
            return self.permute_experts, self.permute_experts_bwd
        return self.dispatch_experts, self.dispatch_experts_bwd

    def swiglu(self, x, wg, wu, wd, f):
        """SiLU(x wg) * (x wu) wd; returns y and what the backward needs."""
        g = self.g
        with g.scope("gate_proj"):
            gt = g.node("MatMul", [x, wg])
        with g.scope("up_proj"):
            up = g.node("MatMul", [x, wu])
        with g.scope("act_fn"):
            sg = g.node("Sigmoid", [gt])
            act = g.node("Mul", [gt, sg])
        mm = g.node("Mul", [act, up], "Mul_gated")
        with g.scope("down_proj"):
            y = g.node("MatMul", [mm, wd])
        return y, dict(gt=gt, up=up, sg=sg, act=act, mm=mm)

    def swiglu_bwd(self, dy, x, wg, wu, wd, S, f, G, p, prefix=""):
        """dx of swiglu; the weight gradients into G[p + prefix + w_*]."""
        g, m = self.g, self.m
        with g.scope("down_proj"), g.backward():
            G[p + prefix + "w_down"] = self.wgrad(S["mm"], dy, f, m.hidden)
            dmm = self.matmul_t(dy, wd)
        dgt, dup = self.gated_bwd(dmm, S)
        with g.scope("gate_proj"), g.backward():
            G[p + prefix + "w_gate"] = self.wgrad(x, dgt, m.hidden, f)
            dx_g = self.matmul_t(dgt, wg)
        with g.scope("up_proj"), g.backward():
            G[p + prefix + "w_up"] = self.wgrad(x, dup, m.hidden, f)
            dx_u = self.matmul_t(dup, wu)
        with g.backward():
            return g.node("Add", [dx_g, dx_u], "Add_input")

    def local_experts(self):
        n = self.m.experts // self.par.tp
        if self.par.bug == "local_expert_ids":
            return 0, n     # a bug: every rank reads the gates of experts 0..n-1
        return self.par.tp_rank * n, n

    def routed_experts(self, xf, gates, W, p, S):
        """The routed experts' output [T, hidden], every local expert on every token, weighted
        by its gate."""
        g, m = self.g, self.m
        e0, n = self.local_experts()
        with g.scope("experts"):
            xe = g.node("Unsqueeze", [xf, g.ints([0])])
            out, S["experts"] = self.swiglu(xe, W[p + "experts.w_gate"], W[p + "experts.w_up"],
                                            W[p + "experts.w_down"], m.moe_ffn)
            gl = g.node("Slice", [gates, g.ints([e0]), g.ints([e0 + n]), g.ints([1])],
                        "Slice_gates")
            gt = g.node("Transpose", [gl], perm=[1, 0])
            gu = g.node("Unsqueeze", [gt, g.ints([-1])])
            yr = g.node("ReduceSum", [g.node("Mul", [gu, out], "Mul_gates"), g.ints([0])],
                        keepdims=0)
        S.update(moe_xe=xe, moe_gu=gu, moe_out=out)
        return yr

    def moe(self, xn, W, p, S, i):
        g, m = self.g, self.m
        bm, sq = self.bm, self.sq
        T = bm * sq
        xg = self.tp_in(xn)
        xf = g.node("Reshape", [xg, g.ints([T, m.hidden])], "Reshape_tokens")
        gates = self.route(xf, W, p, S, T)
        S["routed"] = self.routed_counts(S, T)
        self.stats["load_layers.%d" % i] = g.node(
            "ReduceSum", [S["routed"], g.ints([0])], "ReduceSum_load", keepdims=0)
        if m.aux_alpha:
            self.aux.append(self.aux_loss(S, T, bm, sq))
        if self.par.ep > 1:
            yr = self.all_to_all()[0](xf, gates, W, p, S, T)
        else:
            yr = self.routed_experts(xf, gates, W, p, S)
        with g.scope("shared_experts"):
            ys, S["shared"] = self.swiglu(xf, W[p + "shared.w_gate"], W[p + "shared.w_up"],
                                          W[p + "shared.w_down"], m.moe_ffn * m.shared // self.par.tp)
        S["moe_x"] = xf
        if self.par.bug == "shared_expert_partial":
            # a bug: the shared expert's row-parallel output joins after the routed experts'
            # all-reduce, left partial
            y3 = g.node("Reshape", [yr, g.ints([bm, sq, m.hidden])], "Reshape_output")
            ys3 = g.node("Reshape", [ys, g.ints([bm, sq, m.hidden])], "Reshape_shared")
            return g.node("Add", [self.tp_out(y3), ys3], "Add_shared")
        y = g.node("Add", [yr, ys], "Add_shared")
        y3 = g.node("Reshape", [y, g.ints([bm, sq, m.hidden])], "Reshape_output")
        return self.tp_out(y3)

    def moe_bwd(self, dy, W, p, S, G, i):
        g, m = self.g, self.m
        bm, sq = self.bm, self.sq
        T, f = bm * sq, m.moe_ffn
        dd = self.tp_out_bwd(dy)
        dyf = g.node("Reshape", [dd, g.ints([T, m.hidden])], "Reshape_output_grad")
        with g.scope("shared_experts"):
            dxs = self.swiglu_bwd(dyf, S["moe_x"], W[p + "shared.w_gate"], W[p + "shared.w_up"],
                                  W[p + "shared.w_down"], S["shared"], f * m.shared // self.par.tp,
                                  G, p, "shared.")
        if self.par.ep > 1:
            dxe, dgates = self.all_to_all()[1](dyf, W, p, S, G)
        else:
            with g.scope("experts"):
                dxe, dgl = self.experts_bwd(dyf, W, p, S, G)
            dgates = self.gather_gate_grads(dgl)
        with g.backward():
            dx = g.node("Add", [dxs, dxe], "Add_experts")
            dx3 = g.node("Reshape", [dx, g.ints([bm, sq, m.hidden])], "Reshape_input_grad")
        if self.par.bug == "moe_bwd_no_reduce_scatter" and self.par.sp:
            # a bug: the backward of the tokens' all-gather keeps its own chunk, unreduced
            k, n = self.par.tp_rank, self.sa
            with g.backward():
                dx3 = g.node("Slice", [dx3, g.ints([k * n]), g.ints([(k + 1) * n]), g.ints([1])],
                             "Slice_own_chunk")
        else:
            dx3 = self.tp_in_bwd(dx3)
        dxr = self.route_bwd(dgates, W, p, S, G, T, bm, sq)
        with g.backward():
            dxr3 = g.node("Reshape", [dxr, g.ints([bm, sq, m.hidden])], "Reshape_router_grad")
            if self.par.tp > 1 and self.par.sp:   # the router ran on the whole sequence
                k, n = self.par.tp_rank, self.sa
                dxr3 = g.node("Slice", [dxr3, g.ints([k * n]), g.ints([(k + 1) * n]), g.ints([1])],
                              "Slice_own_sequence")
            return g.node("Add", [dx3, dxr3], "Add_router")

    def experts_bwd(self, dyf, W, p, S, G):
        """The local experts' weight gradients into G; returns d(tokens) [T, hidden] and
        d(local gates) [T, E / tp]."""
        g = self.g
        with g.backward():
            dout = g.node("Mul", [S["moe_gu"], dyf], "Mul_gates")
            prod = g.node("Mul", [S["moe_out"], dyf], "Mul_gates_grad")
            dgt = g.node("ReduceSum", [prod, g.ints([-1])], "ReduceSum_gates_grad", keepdims=0)
            dgl = g.node("Transpose", [dgt], "Transpose_gates_grad", perm=[1, 0])
        dx = self.expert_weights_bwd(dout, S["moe_xe"], W, p, S["experts"], G)
        with g.backward():
            dx = g.node("ReduceSum", [dx, g.ints([0])], "ReduceSum_experts", keepdims=0)
        return dx, dgl

    def expert_weights_bwd(self, dout, xin, W, p, Se, G):
        """The local experts' SwiGLU backward from d(out) [e, n, hidden] on their inputs xin
        [e|1, n, hidden]: weight gradients into G, d(xin) [e, n, hidden] returned."""
        g = self.g
        with g.scope("down_proj"), g.backward():
            G[p + "experts.w_down"] = self.batched_wgrad(Se["mm"], dout)
            dmm = self.batched_matmul_t(dout, W[p + "experts.w_down"])
        dg, du = self.gated_bwd(dmm, Se)
        parts = []
        for proj, w, d in (("gate_proj", "w_gate", dg), ("up_proj", "w_up", du)):
            with g.scope(proj), g.backward():
                G[p + "experts." + w] = self.batched_wgrad(xin, d)
                parts.append(self.batched_matmul_t(d, W[p + "experts." + w]))
        with g.backward():
            return g.node("Add", parts, "Add_input")

    def batched_wgrad(self, x, dy):
        """x [e|1, T, in], dy [e, T, out] -> [e, in, out]: each expert's x^T dy."""
        g = self.g
        xt = g.node("Transpose", [x], "Transpose_wgrad", perm=[0, 2, 1])
        return g.node("MatMul", [xt, dy], "MatMul_wgrad")

    def batched_matmul_t(self, dy, w):
        g = self.g
        wt = g.node("Transpose", [w], perm=[0, 2, 1])
        return g.node("MatMul", [dy, wt])

    def gather_gate_grads(self, dgl):
        """d(gates) [T, E] for the router: the columns of every rank's experts."""
        if self.par.tp == 1:
            return dgl
        g = self.g
        with g.scope("gate"), g.backward():
            if self.par.bug == "router_grad_partial":
                # zeros at the other ranks' experts: the router's gradient is left partial
                e0, n = self.local_experts()
                T = self.bm * self.sq
                parts = [g.filled([T, e0], 0.0)] if e0 else []
                parts.append(dgl)
                if self.m.experts - e0 - n:
                    parts.append(g.filled([T, self.m.experts - e0 - n], 0.0))
                return g.node("Concat", parts, "Concat_gates_grad", axis=1)
            return self._c().allgather(dgl, ["tp"], 1, "tp/AllGather_gates_grad")
