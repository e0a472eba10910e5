"""DeepSeek's router (HF `MoEGate`), forward and hand-derived backward, and the sequence-wise
auxiliary loss.

scores = sigmoid(x Wr) (V3) or softmax(x Wr) (V2); the choice adds the load-balancing bias
(V3; selection only), keeps the best `topk_groups` of `groups` expert groups (a group scored by
the sum of its two best choices, V3, or its best, V2) and zeroes the others, as HF's
masked_fill(~mask, 0.0) does; TopK picks `topk` experts; their weights are the scores (without
the bias) at them, normalised to sum 1 (V3), times `route_scale`; gates[T, E] are the weights
scattered at their experts, as torch's zeros.scatter(1, idx, w).

Auxiliary loss per sequence b (DeepSeek-V3 eq. 17-20): f[b, e] = E / (K S) * tokens of b routed
to e, P[b, e] = mean over b's tokens of the scores normalised over the experts, loss =
alpha * mean_b sum_e f P. f is a count: no gradient flows through it.
"""


class Router:
    def route(self, xf, W, p, S, T):
        """gates [T, E] of the tokens xf [T, hidden]; S gets what the backward needs."""
        g, m = self.g, self.m
        E, K = m.experts, m.topk
        with g.scope("gate"):
            logits = g.node("MatMul", [xf, W[p + "router"]])
            if m.score == "sigmoid":
                scores = g.node("Sigmoid", [logits])
            else:
                scores = g.node("Softmax", [logits], axis=-1)
            choice = biased = scores
            if m.bias:
                choice = biased = g.node("Add", [scores, W[p + "expert_bias"]], "Add_bias")
            if m.groups > 1:
                choice = self.group_limit(choice, T)
            _, idx = g.node("TopK", [choice, g.ints([K])], outputs=2, axis=-1)
            # a bug: the combine weights read from the biased scores the selection used
            read = biased if self.par.bug == "combine_biased_scores" else scores
            w = g.node("GatherElements", [read, idx], axis=-1)
            den = None
            if m.score == "sigmoid":
                s = g.node("ReduceSum", [w, g.ints([-1])], "ReduceSum_norm", keepdims=1)
                den = g.node("Add", [s, g.const(1e-20)], "Add_eps")
                w = g.node("Div", [w, den], "Div_norm")
            wn = w
            w = g.node("Mul", [w, g.const(m.route_scale)], "Mul_route_scale")
            gates = g.node("ScatterElements", [g.filled([T, E], 0.0), idx, w], axis=-1)
        S.update(router_in=xf, scores=scores, idx=idx, den=den, wn=wn)
        return gates

    def group_limit(self, choice, T):
        g, m = self.g, self.m
        G, per = m.groups, m.experts // m.groups
        with g.scope("group_limit"):
            grouped = g.node("Reshape", [choice, g.ints([T, G, per])])
            if m.score == "sigmoid":
                top2, _ = g.node("TopK", [grouped, g.ints([2])], outputs=2, axis=-1)
                gscore = g.node("ReduceSum", [top2, g.ints([-1])], keepdims=0)
            else:
                gscore = g.node("ReduceMax", [grouped], axes=[-1], keepdims=0)
            _, gidx = g.node("TopK", [gscore, g.ints([m.topk_groups])], "TopK_groups", outputs=2,
                             axis=-1)
            gmask = g.node("ScatterElements", [g.filled([T, G], 0.0), gidx,
                                               g.filled([T, m.topk_groups], 1.0)], axis=-1)
            u = g.node("Unsqueeze", [gmask, g.ints([-1])])
            e = g.node("Expand", [u, g.ints([T, G, per])])
            emask = g.node("Reshape", [e, g.ints([T, m.experts])], "Reshape_mask")
            return g.node("Mul", [choice, emask], "Mul_mask")

    def routed_counts(self, S, T):
        """[T, E]: 1 where the token is routed to the expert."""
        g, m = self.g, self.m
        with g.scope("gate"):
            hot = g.node("OneHot", [S["idx"], g.ints([m.experts]), g.const([0.0, 1.0])], axis=-1)
            return g.node("ReduceSum", [hot, g.ints([1])], "ReduceSum_routed", keepdims=0)

    def aux_loss(self, S, T, bm, sq):
        """The sequence-wise auxiliary loss of this micro-batch, times its seed."""
        g, m = self.g, self.m
        E, K = m.experts, m.topk
        with g.scope("aux_loss"):
            sn = S["scores"]
            if m.score == "sigmoid":
                ssum = g.node("ReduceSum", [sn, g.ints([-1])], "ReduceSum_scores", keepdims=1)
                sn = g.node("Div", [sn, ssum], "Div_scores")
                S["aux_ssum"] = ssum
            S["aux_sn"] = sn
            sn3 = g.node("Reshape", [sn, g.ints([bm, sq, E])])
            P = g.node("ReduceMean", [sn3], "ReduceMean_P", axes=[1], keepdims=0)
            c3 = g.node("Reshape", [S["routed"], g.ints([bm, sq, E])], "Reshape_routed")
            cnt = g.node("ReduceSum", [c3, g.ints([1])], "ReduceSum_count", keepdims=0)
            f = g.node("Mul", [cnt, g.const(E / (K * sq))], "Mul_f")
            fp = g.node("Mul", [f, P], "Mul_fP")
            per_seq = g.node("ReduceSum", [fp, g.ints([-1])], "ReduceSum_experts", keepdims=0)
            mean = g.node("ReduceMean", [per_seq], axes=[0], keepdims=0)
            S["aux_f"] = f
            return g.node("Mul", [mean, g.const(m.aux_alpha * self.seed)], "Mul_alpha")

    def route_bwd(self, dgates, W, p, S, G, T, bm, sq):
        """From d(gates) [T, E]: the router's gradient into G, d(tokens) [T, hidden] returned.
        The auxiliary loss's gradient joins at the scores."""
        g, m = self.g, self.m
        E = m.experts
        with g.scope("gate"), g.backward():
            dw = g.node("GatherElements", [dgates, S["idx"]], axis=-1)
            dw = g.node("Mul", [dw, g.const(m.route_scale)], "Mul_route_scale")
            if S["den"] is not None:   # w / sum(w): (dw - sum(dw * wn)) / den
                t = g.node("Mul", [dw, S["wn"]], "Mul_norm")
                ts = g.node("ReduceSum", [t, g.ints([-1])], "ReduceSum_norm", keepdims=1)
                d = g.node("Sub", [dw, ts], "Sub_norm")
                dw = g.node("Div", [d, S["den"]], "Div_norm")
            ds = g.node("ScatterElements", [g.filled([T, E], 0.0), S["idx"], dw],
                        axis=-1, reduction="add")
            if self.par.bug == "routing_probs_no_grad":
                # a bug: the routing weights gathered as constants, only the auxiliary loss
                # reaches the router
                ds = g.node("Mul", [ds, g.const(0.0)], "Mul_detached")
            if m.aux_alpha and self.par.bug != "aux_grad_dropped":
                ds = g.node("Add", [ds, self.aux_bwd(S, bm, sq)], "Add_aux")
            s = S["scores"]
            if m.score == "sigmoid":
                om = g.node("Sub", [g.const(1.0), s], "Sub_sigmoid")
                sd = g.node("Mul", [s, om], "Mul_sigmoid")
                dl = g.node("Mul", [ds, sd], "Mul_dsigmoid")
            else:
                t = g.node("Mul", [ds, s], "Mul_softmax")
                ts = g.node("ReduceSum", [t, g.ints([-1])], "ReduceSum_softmax", keepdims=1)
                d = g.node("Sub", [ds, ts], "Sub_softmax")
                dl = g.node("Mul", [s, d], "Softmax")
            G[p + "router"] = self.wgrad(S["router_in"], dl, m.hidden, E)
            return self.matmul_t(dl, W[p + "router"])

    def aux_bwd(self, S, bm, sq):
        """d(aux loss)/d(scores) [T, E]: alpha seed / (bm sq) f[b, e] at every token of b,
        through the normalisation over the experts (V3)."""
        g, m = self.g, self.m
        with g.scope("aux_loss"):
            k = m.aux_alpha * self.seed / (bm * sq)
            if self.par.bug == "aux_grad_scaled_dp":
                k *= 2
            fk = g.node("Mul", [S["aux_f"], g.const(k)], "Mul_alpha")
            fu = g.node("Unsqueeze", [fk, g.ints([1])])
            fe = g.node("Expand", [fu, g.ints([bm, sq, m.experts])])
            dsn = g.node("Reshape", [fe, g.ints([bm * sq, m.experts])])
            if m.score != "sigmoid":
                return dsn
            t = g.node("Mul", [dsn, S["aux_sn"]], "Mul_norm")
            ts = g.node("ReduceSum", [t, g.ints([-1])], "ReduceSum_norm", keepdims=1)
            d = g.node("Sub", [dsn, ts], "Sub_norm")
            return g.node("Div", [d, S["aux_ssum"]], "Div_norm")
