"""The DeepSeek-V2/V3 style decoder, forward and hand-derived backward, as ONNX ops.

The Llama model (llama.py) with its attention replaced by MLA (mla.py) and, after the first
`dense_layers`, its MLP by a routed Mixture of Experts (moe_layer.py). Embedding, final norm, LM
head, cross-entropy and the tensor-parallel collectives are Llama's. `Par` says what the plan
changes, as for Llama; the single-device spec is the same code with every degree 1.
"""
from .llama import Llama
from .mla import MLA, mla_param_shapes, mla_tp_shard_dim
from .moe_layer import MoE, moe_param_shapes, moe_tp_shard_dim


def param_shapes(m):
    """Spec parameter name -> shape, in a fixed order (trainable parameters: each has a
    gradient output)."""
    h = m.hidden
    out = {}
    if m.tokens:
        out["embed"] = [m.vocab, h]
    for i in range(m.layers):
        p = "layers.%d." % i
        out[p + "attn_norm"] = [h]
        out.update(mla_param_shapes(m, p))
        out[p + "mlp_norm"] = [h]
        if i in m.moe_layers:
            out.update(moe_param_shapes(m, p))
        else:
            out.update({p + "w_gate": [h, m.ffn], p + "w_up": [h, m.ffn], p + "w_down": [m.ffn, h]})
    out["norm"] = [h]
    if not m.tied:
        out["lm_head"] = [h, m.vocab]
    return out


def buffer_shapes(m):
    """Inputs that are not trained (no gradient): V3's load-balancing bias of each MoE layer."""
    if not m.bias:
        return {}
    return {"layers.%d.expert_bias" % i: [m.experts] for i in m.moe_layers}


def stat_shapes(m):
    """Outputs that are sums over every token of the step: each MoE layer's tokens per expert
    (what the bias update reads)."""
    return {"load_layers.%d" % i: [m.experts] for i in m.moe_layers}


def tp_shard_dim(param):
    """The dimension a tensor-parallel plan splits: MLA's heads (mla_tp_shard_dim), the MoE
    layer's experts and shared expert (moe_tp_shard_dim), else Llama's rule."""
    for rule in (mla_tp_shard_dim, moe_tp_shard_dim):
        d = rule(param)
        if d != "other":
            return d
    leaf = param.split(".")[-1]
    if leaf in ("w_gate", "w_up", "lm_head"):
        return 1
    if leaf == "w_down":
        return 0
    return None


class DeepSeek(MLA, MoE, Llama):
    def __init__(self, g, m, par, bm):
        Llama.__init__(self, g, m, par, bm)
        self.rope_dim = m.qk_rope
        self.seed = 1.0      # d(objective)/d(this micro-batch's mean loss); Program sets it
        self.aux = []        # this micro-batch's auxiliary loss terms (already scaled by seed)
        self.stats = {}      # this micro-batch's statistic outputs (stat_shapes)

    def begin_micro_batch(self, seed):
        self.seed, self.aux, self.stats = seed, [], {}

    def dense_mlp(self, xn, W, p, S):
        g = self.g
        xg = self.tp_in(xn)
        y, S["mlp"] = self.swiglu(xg, W[p + "w_gate"], W[p + "w_up"], W[p + "w_down"], self.ffn)
        S["mlp_in"] = xg
        with g.scope("down_proj"):
            return self.tp_out(y)

    def dense_mlp_bwd(self, dy, W, p, S, G):
        g = self.g
        with g.scope("down_proj"):
            dd = self.tp_out_bwd(dy)
        dx = self.swiglu_bwd(dd, S["mlp_in"], W[p + "w_gate"], W[p + "w_up"], W[p + "w_down"],
                             S["mlp"], self.ffn, G, p)
        return self.tp_in_bwd(dx)

    def layer(self, x, W, i):
        g = self.g
        p = "layers.%d." % i
        S = {}
        with g.scope("layers.%d" % i):
            with g.scope("input_layernorm"):
                xn, S["n1"] = self.rmsnorm(x, W[p + "attn_norm"])
            with g.scope("self_attn"):
                a = self.mla(xn, W, p, S)
            h1 = g.node("Add", [x, a], "Add_residual")
            with g.scope("post_attention_layernorm"):
                xn2, S["n2"] = self.rmsnorm(h1, W[p + "mlp_norm"])
            with g.scope("mlp"):
                if i in self.m.moe_layers:
                    d = self.moe(xn2, W, p, S, i)
                else:
                    d = self.dense_mlp(xn2, W, p, S)
            h2 = g.node("Add", [h1, d], "Add_residual")
        return h2, S

    def layer_bwd(self, dh2, W, S, i):
        g = self.g
        p = "layers.%d." % i
        G = {}
        with g.scope("layers.%d" % i):
            with g.scope("mlp"):
                if i in self.m.moe_layers:
                    dxn2 = self.moe_bwd(dh2, W, p, S, G, i)
                else:
                    dxn2 = self.dense_mlp_bwd(dh2, W, p, S, G)
            with g.scope("post_attention_layernorm"):
                dh1n, G[p + "mlp_norm"] = self.rmsnorm_bwd(dxn2, W[p + "mlp_norm"], S["n2"])
            with g.backward():
                dh1 = g.node("Add", [dh2, dh1n], "Add_residual")
            with g.scope("self_attn"):
                dxn = self.mla_bwd(dh1, W, p, S, G)
            with g.scope("input_layernorm"):
                dxr, G[p + "attn_norm"] = self.rmsnorm_bwd(dxn, W[p + "attn_norm"], S["n1"])
            with g.backward():
                dx = g.node("Add", [dh1, dxr], "Add_residual")
        return dx, G
