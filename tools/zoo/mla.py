"""DeepSeek's Multi-head Latent Attention, forward and hand-derived backward, as ONNX ops.

HF DeepseekV3Attention with rotate-half RoPE: q projected directly or through a normed low-rank
compression (q_lora); keys and values from a normed compression c_kv (kv_lora) expanded per
head, plus a decoupled RoPE key k_pe computed once and shared by every head. Each head's
query / key is [nope | rope] dims, its value vd dims.

Tensor parallelism as Megatron-Core does MLA: the per-head projections w_q, w_q_b and w_kv_b
are column-parallel, w_o row-parallel; the compressions (w_q_a, q_norm, w_kv_a, kv_norm) are
replicated and run on the residual stream's own tokens, and it is their small outputs (the
latents) that enter the column-parallel region. The latents' gradients, partial over the heads,
are summed there (tp_in_bwd) before the norms' backward, so the replicated parameters' gradients
are whole per token: complete without sequence parallelism, partial over the sequence shards
with it (summed as the norms' are, norm_grad_sync).
"""
import numpy as np


def mla_param_shapes(m, p):
    """Layer p's MLA parameter name -> shape, in a fixed order."""
    h, H = m.hidden, m.heads
    dq, dkv = m.qk_nope + m.qk_rope, m.qk_nope + m.v_head
    out = {}
    if m.q_lora > 0:
        out.update({p + "w_q_a": [h, m.q_lora], p + "q_norm": [m.q_lora],
                    p + "w_q_b": [m.q_lora, H * dq]})
    else:
        out[p + "w_q"] = [h, H * dq]
    out.update({p + "w_kv_a": [h, m.kv_lora + m.qk_rope], p + "kv_norm": [m.kv_lora],
                p + "w_kv_b": [m.kv_lora, H * dkv], p + "w_o": [H * m.v_head, h]})
    return out


def mla_tp_shard_dim(param):
    """Heads split: 1 for the per-head projections, 0 for o; None for the compressions and
    their norms; "other" where the parameter is not MLA's."""
    parts = param.split(".")
    if len(parts) >= 2 and parts[-2] in ("experts", "shared"):
        return "other"
    leaf = parts[-1]
    if leaf in ("w_q", "w_q_b", "w_kv_b"):
        return 1
    if leaf == "w_o":
        return 0
    if leaf in ("w_q_a", "q_norm", "w_kv_a", "kv_norm"):
        return None
    return "other"


class MLA:
    def _split(self, x, axis, *sizes):
        """Consecutive slices of `sizes` along `axis`."""
        g, out, a = self.g, [], 0
        for n in sizes:
            out.append(g.node("Slice", [x, g.ints([a]), g.ints([a + n]), g.ints([axis])]))
            a += n
        return out

    def mla(self, xn, W, p, S):
        """xn: the normed residual stream [bm, sa, hidden]. Returns the output after o_proj and
        its tensor-parallel sum; what the backward needs goes into S (keys mla_*)."""
        g, m = self.g, self.m
        assert self.par.cp == 1, "MLA is generated without context parallelism"
        assert m.heads % self.par.tp == 0
        nope, rope, vd, nh = m.qk_nope, m.qk_rope, m.v_head, self.nh
        dq = nope + rope
        if m.q_lora > 0:
            with g.scope("q_a_proj"):
                cq = g.node("MatMul", [xn, W[p + "w_q_a"]])
            with g.scope("q_a_layernorm"):
                cqn, S["mla_qn"] = self.rmsnorm(cq, W[p + "q_norm"])
            with g.scope("q_b_proj"):
                qin = self.tp_in(cqn)
                q = g.node("MatMul", [qin, W[p + "w_q_b"]])
        else:
            with g.scope("q_proj"):
                qin = self.tp_in(xn)
                q = g.node("MatMul", [qin, W[p + "w_q"]])
        q_nope, q_pe = self._split(self.heads(q, nh, dq), 3, nope, rope)
        with g.scope("kv_a_proj_with_mqa"):
            ckv = g.node("MatMul", [xn, W[p + "w_kv_a"]])
        c_kv, k_pe = self._split(ckv, 2, m.kv_lora, rope)
        with g.scope("kv_a_layernorm"):
            ckvn, S["mla_kvn"] = self.rmsnorm(c_kv, W[p + "kv_norm"])
        with g.scope("kv_b_proj"):
            kvin = self.tp_in(ckvn)
            kv = g.node("MatMul", [kvin, W[p + "w_kv_b"]])
        k_nope, v = self._split(self.heads(kv, nh, nope + vd), 3, nope, vd)
        cos, sin = self.rope_tables()
        with g.scope("rope_q"):
            qr = self.rope(q_pe, cos, sin)
        with g.scope("rope_k"):
            k_pe = self.tp_in(k_pe)
            k_pe = g.node("Reshape", [k_pe, g.ints([self.bm, 1, self.sq, rope])])
            kr = self.rope(k_pe, cos, sin)
        qf = g.node("Concat", [q_nope, qr], "Concat_q", axis=-1)
        # the one RoPE key serves every head
        ke = g.node("Expand", [kr, g.ints([self.bm, nh, self.sq, rope])], "Expand_k_pe")
        kf = g.node("Concat", [k_nope, ke], "Concat_k", axis=-1)
        kt = g.node("Transpose", [kf], perm=[0, 1, 3, 2])
        sc = g.node("MatMul", [qf, kt], "MatMul_scores")
        scale = g.const(1.0 / np.sqrt(dq))
        ss = g.node("Mul", [sc, scale], "Mul_scale")
        sm = g.node("Add", [ss, self.mask()], "Add_mask")
        pr = g.node("Softmax", [sm], axis=-1)
        o = g.node("MatMul", [pr, v], "MatMul_context")
        ot = g.node("Transpose", [o], perm=[0, 2, 1, 3])
        o2 = g.node("Reshape", [ot, g.ints([self.bm, self.sq, nh * vd])])
        with g.scope("o_proj"):
            a = g.node("MatMul", [o2, W[p + "w_o"]])
            a = self.tp_out(a)
        S.update(mla_x=xn, mla_qin=qin, mla_kvin=kvin, mla_qf=qf, mla_kf=kf, mla_v=v, mla_pr=pr,
                 mla_o2=o2, mla_scale=scale, mla_cos=cos, mla_sin=sin)
        return a

    def mla_bwd(self, dh1, W, p, S, G):
        """d(xn) from the output's gradient dh1; the parameters' gradients into G[p + name]."""
        g, m = self.g, self.m
        nope, rope, vd, nh = m.qk_nope, m.qk_rope, m.v_head, self.nh
        dq = nope + rope
        with g.scope("o_proj"):
            da = self.tp_out_bwd(dh1)
            with g.backward():
                G[p + "w_o"] = self.wgrad(S["mla_o2"], da, nh * vd, m.hidden)
                do2 = self.matmul_t(da, W[p + "w_o"])
        with g.backward():
            do = self.heads(do2, nh, vd)
        dqf, dkf, dv = self.attention_bwd(do, S["mla_pr"], S["mla_v"], S["mla_qf"], S["mla_kf"],
                                          S["mla_scale"])
        with g.backward():
            dq_nope, dqr = self._split(dqf, 3, nope, rope)
            dk_nope, dke = self._split(dkf, 3, nope, rope)
        with g.scope("rope_q"):
            dq_pe = self.rope_bwd(dqr, S["mla_cos"], S["mla_sin"])
        with g.backward():
            dq4 = g.node("Concat", [dq_nope, dq_pe], "Concat_q", axis=-1)
            dkv4 = g.node("Concat", [dk_nope, dv], "Concat_kv", axis=-1)
        dqh, dkv = self.heads_bwd(dq4, nh, dq), self.heads_bwd(dkv4, nh, nope + vd)
        with g.scope("rope_k"):
            # RoPE's backward per head, then the heads summed (the Expand's backward): each
            # rank's share is a sum of per-head values, as the single device's sum is
            dkh = self.rope_bwd(dke, S["mla_cos"], S["mla_sin"])
            with g.backward():
                dkr = g.node("ReduceSum", [dkh, g.ints([1])], "ReduceSum_k_pe", keepdims=0)
            dk_pe = self.tp_in_bwd(dkr)
        with g.scope("kv_b_proj"):
            with g.backward():
                G[p + "w_kv_b"] = self.wgrad(S["mla_kvin"], dkv, m.kv_lora, nh * (nope + vd))
                dkvin = self.matmul_t(dkv, W[p + "w_kv_b"])
            dckvn = self.tp_in_bwd(dkvin)
        with g.scope("kv_a_layernorm"):
            dc_kv, G[p + "kv_norm"] = self.rmsnorm_bwd(dckvn, W[p + "kv_norm"], S["mla_kvn"])
        with g.backward():
            dckv = g.node("Concat", [dc_kv, dk_pe], "Concat_kv_a", axis=-1)
        with g.scope("kv_a_proj_with_mqa"):
            with g.backward():
                dw = self.wgrad(S["mla_x"], dckv, m.hidden, m.kv_lora + rope)
                dx_kv = self.matmul_t(dckv, W[p + "w_kv_a"])
            # replicated, applied to this rank's tokens: as a norm weight's gradient
            G[p + "w_kv_a"] = self.norm_grad_sync(dw)
        if m.q_lora > 0:
            with g.scope("q_b_proj"):
                with g.backward():
                    G[p + "w_q_b"] = self.wgrad(S["mla_qin"], dqh, m.q_lora, nh * dq)
                    dqin = self.matmul_t(dqh, W[p + "w_q_b"])
                dcqn = self.tp_in_bwd(dqin)
            with g.scope("q_a_layernorm"):
                dcq, G[p + "q_norm"] = self.rmsnorm_bwd(dcqn, W[p + "q_norm"], S["mla_qn"])
            with g.scope("q_a_proj"):
                with g.backward():
                    dw = self.wgrad(S["mla_x"], dcq, m.hidden, m.q_lora)
                    dx_q = self.matmul_t(dcq, W[p + "w_q_a"])
                G[p + "w_q_a"] = self.norm_grad_sync(dw)
        else:
            with g.scope("q_proj"):
                with g.backward():
                    G[p + "w_q"] = self.wgrad(S["mla_qin"], dqh, m.hidden, nh * dq)
                    dqin = self.matmul_t(dqh, W[p + "w_q"])
                dx_q = self.tp_in_bwd(dqin)
        with g.backward():
            return g.node("Add", [dx_q, dx_kv], "Add_input")
