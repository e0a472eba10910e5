"""The Llama-3 style decoder, forward and hand-derived backward, as ONNX ops.

One micro-batch of one pipeline stage. `Par` says what the parallel plan changes: local head /
FFN / vocabulary counts under tensor parallelism (Megatron column- and row-parallel layers,
vocabulary-parallel cross-entropy), sequence-parallel all-gather / reduce-scatter around the
tensor-parallel regions, context-parallel key/value all-gathers with per-rank mask and RoPE
offsets. The single-device spec is the same code with every degree 1 and no collectives.
"""
import numpy as np
from onnx import numpy_helper


class Par:
    def __init__(self, comm=None, tp=1, sp=False, cp=1, cp_rank=0, tp_rank=0, bug=None, ep=1,
                 ep_rank=0, capacity=0, permute="onehot"):
        self.comm, self.tp, self.sp, self.cp = comm, tp, sp, cp
        self.cp_rank, self.tp_rank, self.bug = cp_rank, tp_rank, bug
        self.ep, self.ep_rank, self.capacity = ep, ep_rank, capacity
        self.permute = permute


def param_shapes(m):
    """Spec parameter name -> shape, in a fixed order."""
    h, q, kv = m.hidden, m.heads * m.head_dim, m.kv_heads * m.head_dim
    out = {}
    if m.tokens:
        out["embed"] = [m.vocab, h]
    for i in range(m.layers):
        p = "layers.%d." % i
        out.update({p + "attn_norm": [h], p + "w_q": [h, q], p + "w_k": [h, kv], p + "w_v": [h, kv],
                    p + "w_o": [q, h], p + "mlp_norm": [h], p + "w_gate": [h, m.ffn],
                    p + "w_up": [h, m.ffn], p + "w_down": [m.ffn, h]})
    out["norm"] = [h]
    if not m.tied:
        out["lm_head"] = [h, m.vocab]
    return out


def tp_shard_dim(param):
    """Megatron: column-parallel q/k/v, gate/up and the vocabulary-parallel LM head split their
    output dimension; row-parallel o and down split their input dimension; norms replicate."""
    leaf = param.split(".")[-1]
    if leaf in ("w_q", "w_k", "w_v", "w_gate", "w_up", "lm_head"):
        return 1
    if leaf in ("w_o", "w_down"):
        return 0
    return None


def rope_inv_freq(m, dim=None):
    dim = dim or m.head_dim
    return (1.0 / (m.theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim))).astype(np.float32)


class Llama:
    def __init__(self, g, m, par, bm):
        self.g, self.m, self.par, self.bm = g, m, par, bm
        self.nh = m.heads // par.tp
        self.nkv = m.kv_heads // par.tp
        self.ffn = m.ffn // par.tp
        self.vocab = m.vocab // par.tp
        self.sq = m.seq // par.cp                          # sequence inside attention / MLP
        self.sa = self.sq // (par.tp if par.sp else 1)     # sequence of the residual stream
        self.rope_dim = m.head_dim                         # the dimensions RoPE rotates
        self._rope = None

    # ---- collectives around the tensor-parallel regions ------------------------------------
    def _c(self):
        return self.par.comm

    def tp_in(self, x):
        """Entering a column-parallel region: identity, or all-gather of the sequence (SP)."""
        if self.par.tp > 1 and self.par.sp:
            return self._c().allgather(x, ["tp"], 1, "sp/AllGather")
        return x

    def tp_in_bwd(self, dx):
        if self.par.tp == 1:
            return dx
        if self.par.sp:
            return self._c().reducescatter(dx, ["tp"], 1, self.sq, "sp/ReduceScatter")
        return self._c().allreduce(dx, ["tp"], "sum", "tp/AllReduce")

    def tp_out(self, x):
        """Leaving a row-parallel region: all-reduce, or reduce-scatter of the sequence (SP)."""
        if self.par.tp == 1:
            return x
        if self.par.sp:
            return self._c().reducescatter(x, ["tp"], 1, self.sq, "sp/ReduceScatter")
        return self._c().allreduce(x, ["tp"], "sum", "tp/AllReduce")

    def tp_out_bwd(self, dy):
        if self.par.tp > 1 and self.par.sp:
            return self._c().allgather(dy, ["tp"], 1, "sp/AllGather")
        return dy

    def norm_grad_sync(self, dg):
        """Under SP each rank holds the norm weight gradient of its sequence shard: a partial sum."""
        if self.par.tp > 1 and self.par.sp:
            return self._c().allreduce(dg, ["tp"], "sum", "sp/AllReduce")
        return dg

    # ---- building blocks ---------------------------------------------------------------------
    def wgrad(self, x, dy, n_in, n_out, name="Gemm_wgrad"):
        """sum over batch and sequence of x^T dy: [in, out]."""
        g = self.g
        x2 = g.node("Reshape", [x, g.ints([-1, n_in])], "Reshape_wgrad_in")
        d2 = g.node("Reshape", [dy, g.ints([-1, n_out])], "Reshape_wgrad_out")
        return g.node("Gemm", [x2, d2], name, transA=1)

    def matmul_t(self, dy, w):
        g = self.g
        wt = g.node("Transpose", [w], perm=[1, 0])
        return g.node("MatMul", [dy, wt])

    def rmsnorm(self, x, w):
        g = self.g
        x2 = g.node("Mul", [x, x], "Pow")
        ms = g.node("ReduceMean", [x2], axes=[-1], keepdims=1)
        ve = g.node("Add", [ms, g.const(self.m.eps)])
        rs = g.node("Sqrt", [ve])
        inv = g.node("Reciprocal", [rs])
        xh = g.node("Mul", [x, inv])
        y = g.node("Mul", [xh, w], "Mul_weight")
        return y, (inv, xh)

    def rmsnorm_bwd(self, dy, w, saved):
        g = self.g
        inv, xh = saved
        with g.backward():
            dxh = g.node("Mul", [dy, w], "Mul_weight")
            dwf = g.node("Mul", [dy, xh])
            dw = g.node("ReduceSum", [dwf, g.ints([0, 1])], keepdims=0)
            t = g.node("Mul", [dxh, xh], "Mul_dot")
            mt = g.node("ReduceMean", [t], axes=[-1], keepdims=1)
            u = g.node("Mul", [xh, mt], "Mul_proj")
            w2 = g.node("Sub", [dxh, u])
            dx = g.node("Mul", [w2, inv], "Mul_inv")
        return dx, self.norm_grad_sync(dw)

    def rope_tables(self):
        """cos, sin of shape [sq, head_dim] for this rank's positions (offset by CP rank)."""
        if self._rope:
            return self._rope
        g, m = self.g, self.m
        off = self.par.cp_rank * self.sq
        with g.scope("rotary_emb"):
            if m.rope == "table":
                inv = rope_inv_freq(m, self.rope_dim).astype(np.float64)
                pos = np.arange(off, off + self.sq, dtype=np.float64)
                emb = np.concatenate([np.outer(pos, inv)] * 2, axis=1)
                cos, sin = g.const(np.cos(emb)), g.const(np.sin(emb))
            else:
                pos = g.node("Range", [g.const(float(off)), g.const(float(off + self.sq)), g.const(1.0)])
                pos2 = g.node("Unsqueeze", [pos, g.ints([1])])
                fr = g.node("Mul", [pos2, g.const(rope_inv_freq(m, self.rope_dim)[None, :])])
                emb = g.node("Concat", [fr, fr], axis=-1)
                cos, sin = g.node("Cos", [emb]), g.node("Sin", [emb])
        self._rope = (cos, sin)
        return self._rope

    def rope(self, x, cos, sin):
        g, half = self.g, self.rope_dim // 2
        x1 = g.node("Slice", [x, g.ints([0]), g.ints([half]), g.ints([3])])
        x2 = g.node("Slice", [x, g.ints([half]), g.ints([2 * half]), g.ints([3])])
        n2 = g.node("Neg", [x2])
        rh = g.node("Concat", [n2, x1], "Concat_rotate_half", axis=-1)
        a = g.node("Mul", [x, cos], "Mul_cos")
        b = g.node("Mul", [rh, sin], "Mul_sin")
        return g.node("Add", [a, b])

    def rope_bwd(self, dy, cos, sin):
        g, half = self.g, self.rope_dim // 2
        with g.backward():
            a = g.node("Mul", [dy, cos], "Mul_cos")
            b = g.node("Mul", [dy, sin], "Mul_sin")
            b1 = g.node("Slice", [b, g.ints([0]), g.ints([half]), g.ints([3])])
            b2 = g.node("Slice", [b, g.ints([half]), g.ints([2 * half]), g.ints([3])])
            n1 = g.node("Neg", [b1])
            rt = g.node("Concat", [b2, n1], "Concat_rotate_half", axis=-1)
            return g.node("Add", [a, rt])

    def mask(self):
        g, s, sq = self.g, self.m.seq, self.sq
        off = self.par.cp_rank * sq
        if self.m.mask == "const":
            full = np.triu(np.full((s, s), -np.inf), k=1)
            return g.const(full[off:off + sq])
        ninf = g.node("ConstantOfShape", [g.ints([sq, s])],
                      value=numpy_helper.from_array(np.array([-np.inf], np.float32)))
        return g.node("Trilu", [ninf, g.ints(1 + off)], "Trilu_causal_mask", upper=1)

    def heads(self, x, n, dim=None):
        g = self.g
        r = g.node("Reshape", [x, g.ints([self.bm, self.sq, n, dim or self.m.head_dim])])
        return g.node("Transpose", [r], perm=[0, 2, 1, 3])

    def heads_bwd(self, d, n, dim=None):
        g = self.g
        with g.backward():
            t = g.node("Transpose", [d], perm=[0, 2, 1, 3])
            return g.node("Reshape", [t, g.ints([self.bm, self.sq, n * (dim or self.m.head_dim)])])

    def repeat_kv(self, x):
        g, rep = self.g, self.nh // self.nkv
        if rep == 1:
            return x
        s = self.m.seq
        u = g.node("Unsqueeze", [x, g.ints([2])])
        e = g.node("Expand", [u, g.ints([self.bm, self.nkv, rep, s, self.m.head_dim])])
        return g.node("Reshape", [e, g.ints([self.bm, self.nh, s, self.m.head_dim])])

    def repeat_kv_bwd(self, d):
        g, rep = self.g, self.nh // self.nkv
        if rep == 1:
            return d
        with g.backward():
            r = g.node("Reshape", [d, g.ints([self.bm, self.nkv, rep, self.m.seq, self.m.head_dim])])
            return g.node("ReduceSum", [r, g.ints([2])], keepdims=0)

    def gated_bwd(self, dmm, S):
        """d(gate projection), d(up projection) of SiLU(gate) * up, from d(product); S holds
        the forward's gt, up, sg (sigmoid of gt) and act (SiLU of gt)."""
        g = self.g
        with g.backward():
            dact = g.node("Mul", [dmm, S["up"]], "Mul_gated_up")
            dup = g.node("Mul", [dmm, S["act"]], "Mul_gated_act")
        with g.scope("act_fn"), g.backward():
            one = g.const(1.0)
            om = g.node("Sub", [one, S["sg"]])
            t = g.node("Mul", [S["gt"], om])
            t1 = g.node("Add", [t, one])
            ds = g.node("Mul", [S["sg"], t1], "Mul_dsilu")
            dgt = g.node("Mul", [dact, ds])
        return dgt, dup

    def attention_bwd(self, do, pr, v, q, k, scale):
        """The backward of softmax(q k^T * scale + mask) v from d(output): d(q), d(k), d(v)."""
        g = self.g
        with g.backward():
            vt = g.node("Transpose", [v], "Transpose_v", perm=[0, 1, 3, 2])
            dpr = g.node("MatMul", [do, vt], "MatMul_context")
            prt = g.node("Transpose", [pr], "Transpose_probs", perm=[0, 1, 3, 2])
            dv = g.node("MatMul", [prt, do], "MatMul_context_v")
            pd = g.node("Mul", [pr, dpr], "Mul_softmax")
            sd = g.node("ReduceSum", [pd, g.ints([-1])], "ReduceSum_softmax", keepdims=1)
            df = g.node("Sub", [dpr, sd], "Sub_softmax")
            dsm = g.node("Mul", [pr, df], "Softmax")
            dss = g.node("Mul", [dsm, scale], "Mul_scale")
            dq = g.node("MatMul", [dss, k], "MatMul_scores_q")
            dst = g.node("Transpose", [dss], "Transpose_scores", perm=[0, 1, 3, 2])
            dk = g.node("MatMul", [dst, q], "MatMul_scores_k")
        return dq, dk, dv

    # ---- one decoder layer -------------------------------------------------------------------
    def layer(self, x, W, i):
        g, m, hd = self.g, self.m, self.m.head_dim
        p = "layers.%d." % i
        S = {}
        with g.scope("layers.%d" % i):
            with g.scope("input_layernorm"):
                xn, S["n1"] = self.rmsnorm(x, W[p + "attn_norm"])
            with g.scope("attn"):
                xg = self.tp_in(xn)
                with g.scope("q_proj"):
                    q = g.node("MatMul", [xg, W[p + "w_q"]])
                with g.scope("k_proj"):
                    k = g.node("MatMul", [xg, W[p + "w_k"]])
                with g.scope("v_proj"):
                    v = g.node("MatMul", [xg, W[p + "w_v"]])
                q4, k4, v4 = self.heads(q, self.nh), self.heads(k, self.nkv), self.heads(v, self.nkv)
                cos, sin = self.rope_tables()
                with g.scope("rope_q"):
                    qr = self.rope(q4, cos, sin)
                with g.scope("rope_k"):
                    kr = self.rope(k4, cos, sin)
                if self.par.cp > 1:
                    with g.scope("cp"):
                        kf = self._c().allgather(kr, ["cp"], 2, "AllGather_k")
                        vf = self._c().allgather(v4, ["cp"], 2, "AllGather_v")
                else:
                    kf, vf = kr, v4
                ke, ve = self.repeat_kv(kf), self.repeat_kv(vf)
                kt = g.node("Transpose", [ke], perm=[0, 1, 3, 2])
                sc = g.node("MatMul", [qr, kt], "MatMul_scores")
                scale = g.const(1.0 / np.sqrt(hd))
                ss = g.node("Mul", [sc, scale], "Mul_scale")
                sm = g.node("Add", [ss, self.mask()], "Add_mask")
                pr = g.node("Softmax", [sm], axis=-1)
                o = g.node("MatMul", [pr, ve], "MatMul_context")
                ot = g.node("Transpose", [o], perm=[0, 2, 1, 3])
                o2 = g.node("Reshape", [ot, g.ints([self.bm, self.sq, self.nh * hd])])
                with g.scope("o_proj"):
                    a = g.node("MatMul", [o2, W[p + "w_o"]])
                    folded = self.par.tp > 1 and self.par.bug in ("tp_residual_folded",
                                                              "tp_residual_folded_half")
                    if folded:
                        # the residual added inside the all-reduce, scaled by 1/tp on each rank
                        # (or by a constant made for TP2)
                        k = 0.5 if self.par.bug == "tp_residual_folded_half" else 1.0 / self.par.tp
                        xs = g.node("Mul", [x, g.const(k)], "Mul_residual_share")
                        a = g.node("Add", [a, xs], "Add_residual_share")
                    a = self.tp_out(a)
                h1 = g.node("Identity", [a], "Add_residual") if folded else \
                    g.node("Add", [x, a], "Add_residual")
            with g.scope("post_attention_layernorm"):
                xn2, S["n2"] = self.rmsnorm(h1, W[p + "mlp_norm"])
            with g.scope("mlp"):
                xg2 = self.tp_in(xn2)
                with g.scope("gate_proj"):
                    gt = g.node("MatMul", [xg2, W[p + "w_gate"]])
                with g.scope("up_proj"):
                    up = g.node("MatMul", [xg2, W[p + "w_up"]])
                with g.scope("act_fn"):
                    sg = g.node("Sigmoid", [gt])
                    act = g.node("Mul", [gt, sg])
                mm = g.node("Mul", [act, up], "Mul_gated")
                with g.scope("down_proj"):
                    d = g.node("MatMul", [mm, W[p + "w_down"]])
                    d = self.tp_out(d)
                h2 = g.node("Add", [h1, d], "Add_residual")
        S.update(x=x, xg=xg, q=q, qr=qr, ke=ke, ve=ve, pr=pr, o2=o2, scale=scale, cos=cos, sin=sin,
                 xg2=xg2, gt=gt, up=up, sg=sg, act=act, mm=mm)
        return h2, S

    def layer_bwd(self, dh2, W, S, i):
        """Returns d(input) and {param: grad} of this micro-batch."""
        g, m, hd = self.g, self.m, self.m.head_dim
        p = "layers.%d." % i
        G = {}
        with g.scope("layers.%d" % i):
            with g.scope("mlp"):
                with g.scope("down_proj"):
                    dd = self.tp_out_bwd(dh2)
                    with g.backward():
                        G[p + "w_down"] = self.wgrad(S["mm"], dd, self.ffn, m.hidden)
                        dmm = self.matmul_t(dd, W[p + "w_down"])
                dgt, dup = self.gated_bwd(dmm, S)
                with g.scope("gate_proj"), g.backward():
                    G[p + "w_gate"] = self.wgrad(S["xg2"], dgt, m.hidden, self.ffn)
                    dx_g = self.matmul_t(dgt, W[p + "w_gate"])
                with g.scope("up_proj"), g.backward():
                    G[p + "w_up"] = self.wgrad(S["xg2"], dup, m.hidden, self.ffn)
                    dx_u = self.matmul_t(dup, W[p + "w_up"])
                with g.backward():
                    dxg2 = g.node("Add", [dx_g, dx_u], "Add_input")
                dxn2 = self.tp_in_bwd(dxg2)
            with g.scope("post_attention_layernorm"):
                dh1n, G[p + "mlp_norm"] = self.rmsnorm_bwd(dxn2, W[p + "mlp_norm"], S["n2"])
            with g.backward():
                dh1 = g.node("Add", [dh2, dh1n], "Add_residual")
            with g.scope("attn"):
                with g.scope("o_proj"):
                    da = self.tp_out_bwd(dh1)
                    with g.backward():
                        G[p + "w_o"] = self.wgrad(S["o2"], da, self.nh * hd, m.hidden)
                        do2 = self.matmul_t(da, W[p + "w_o"])
                with g.backward():
                    do = self.heads(do2, self.nh)
                dqr, dke, dve = self.attention_bwd(do, S["pr"], S["ve"], S["qr"], S["ke"],
                                                   S["scale"])
                dkf, dvf = self.repeat_kv_bwd(dke), self.repeat_kv_bwd(dve)
                if self.par.cp > 1:
                    with g.scope("cp"), g.backward():
                        dkr = self._c().reducescatter(dkf, ["cp"], 2, m.seq, "ReduceScatter_k")
                        dv4 = self._c().reducescatter(dvf, ["cp"], 2, m.seq, "ReduceScatter_v")
                else:
                    dkr, dv4 = dkf, dvf
                with g.scope("rope_q"):
                    dq4 = self.rope_bwd(dqr, S["cos"], S["sin"])
                with g.scope("rope_k"):
                    dk4 = self.rope_bwd(dkr, S["cos"], S["sin"])
                dq, dk, dv = self.heads_bwd(dq4, self.nh), self.heads_bwd(dk4, self.nkv), self.heads_bwd(dv4, self.nkv)
                parts = []
                for proj, w, d, n in (("q_proj", "w_q", dq, self.nh), ("k_proj", "w_k", dk, self.nkv),
                                      ("v_proj", "w_v", dv, self.nkv)):
                    with g.scope(proj), g.backward():
                        G[p + w] = self.wgrad(S["xg"], d, m.hidden, n * hd)
                        parts.append(self.matmul_t(d, W[p + w]))
                with g.backward():
                    dxg = g.node("Add", parts[:2], "Add_input")
                    dxg = g.node("Add", [dxg, parts[2]], "Add_input")
                dxn = self.tp_in_bwd(dxg)
            with g.scope("input_layernorm"):
                dxr, G[p + "attn_norm"] = self.rmsnorm_bwd(dxn, W[p + "attn_norm"], S["n1"])
            with g.backward():
                dx = g.node("Add", [dh1, dxr], "Add_residual")
        return dx, G

    # ---- embedding, head and loss ------------------------------------------------------------
    def embed(self, tokens, W):
        with self.g.scope("embed_tokens"):
            return self.g.node("MatMul", [tokens, W["embed"]])

    def embed_bwd(self, tokens, dx):
        with self.g.scope("embed_tokens"), self.g.backward():
            return self.wgrad(tokens, dx, self.m.vocab, self.m.hidden)

    def head(self, x, W, labels):
        """Final norm, LM head, cross-entropy: returns this micro-batch's mean loss over its
        tokens and what the backward needs."""
        g, m = self.g, self.m
        S = {}
        with g.scope("norm"):
            xf, S["n"] = self.rmsnorm(x, W["norm"])
        with g.scope("lm_head"):
            xg = self.tp_in(xf)
            if m.tied:
                wt = g.node("Transpose", [W["embed"]], perm=[1, 0])
                logits = g.node("MatMul", [xg, wt])
            else:
                logits = g.node("MatMul", [xg, W["lm_head"]])
        S.update(xg=xg, labels=labels)
        with g.scope("loss"):
            if self.par.tp == 1:
                ls = g.node("LogSoftmax", [logits], axis=-1)
                t = g.node("Mul", [labels, ls])
                ts = g.node("ReduceSum", [t, g.ints([-1])], keepdims=0)
                mean = g.node("ReduceMean", [ts], axes=[0, 1], keepdims=0)
                loss = g.node("Neg", [mean])
                S["probs_of"] = logits
            else:
                loss = self.vocab_parallel_ce(logits, labels, S)
        return loss, S

    def vocab_parallel_ce(self, logits, labels, S):
        """Megatron's vocabulary-parallel cross-entropy: max and sums all-reduced over TP. The
        loss is written as lse * sum(labels) - sum(labels * logits), equal to the spec's
        -sum(labels * log_softmax) for any label values."""
        g, c = self.g, self._c()
        if self.par.bug == "vocab_ce_gathered":
            # Megatron-LM #7452: the logits were already gathered over TP
            logits = c.allgather(logits, ["tp"], 2, "AllGather_logits")
        mx = g.node("ReduceMax", [logits], axes=[-1], keepdims=1)
        gmx = c.allreduce(mx, ["tp"], "max", "AllReduce_max")
        sh = g.node("Sub", [logits, gmx])
        e = g.node("Exp", [sh])
        se = g.node("ReduceSum", [e, g.ints([-1])], "ReduceSum_exp", keepdims=1)
        gse = c.allreduce(se, ["tp"], "sum", "AllReduce_sum_exp")
        lg = g.node("Log", [gse])
        lse = g.node("Add", [lg, gmx], "Add_lse")
        tl = g.node("Mul", [labels, logits], "Mul_target")
        tls = g.node("ReduceSum", [tl, g.ints([-1])], "ReduceSum_target", keepdims=1)
        gtl = c.allreduce(tls, ["tp"], "sum", "AllReduce_target")
        lsum = g.node("ReduceSum", [labels, g.ints([-1])], "ReduceSum_labels", keepdims=1)
        glsum = c.allreduce(lsum, ["tp"], "sum", "AllReduce_labels")
        a = g.node("Mul", [lse, glsum], "Mul_lse")
        nll = g.node("Sub", [a, gtl], "Sub_nll")
        S["e"], S["gse"] = e, gse
        return g.node("ReduceMean", [nll], axes=[0, 1, 2], keepdims=0)

    def head_bwd(self, W, S, seed):
        """seed: d(objective)/d(this micro-batch's mean loss). Returns dx and {param: grad}."""
        g, m = self.g, self.m
        G = {}
        n_tok = self.bm * self.sq
        with g.scope("loss"), g.backward():
            if self.par.tp == 1:
                probs = g.node("Softmax", [S["probs_of"]], axis=-1)
            else:
                probs = g.node("Div", [S["e"], S["gse"]], "Div_softmax")
            diff = g.node("Sub", [probs, S["labels"]])
            dlogits = g.node("Mul", [diff, g.const(seed / n_tok)], "Mul_dlogits")
            if self.par.bug == "vocab_ce_gathered":
                v, i = self.vocab, self.par.tp_rank
                dlogits = g.node("Slice", [dlogits, g.ints([i * v]), g.ints([(i + 1) * v]), g.ints([2])])
        with g.scope("lm_head"):
            with g.backward():
                if m.tied:
                    G["embed"] = self.wgrad(dlogits, S["xg"], self.vocab, m.hidden)
                    dxg = g.node("MatMul", [dlogits, W["embed"]])
                else:
                    G["lm_head"] = self.wgrad(S["xg"], dlogits, m.hidden, self.vocab)
                    dxg = self.matmul_t(dlogits, W["lm_head"])
            dxf = self.tp_in_bwd(dxg)
        with g.scope("norm"):
            dx, G["norm"] = self.rmsnorm_bwd(dxf, W["norm"], S["n"])
        return dx, G
