"""Model and plan configurations: the small zoo and the real Llama-3 shapes."""
from dataclasses import dataclass, field, replace
from typing import Optional


@dataclass(frozen=True)
class ModelConfig:
    name: str
    layers: int = 1
    hidden: int = 8
    heads: int = 2
    kv_heads: int = 2
    head_dim: int = 4
    ffn: int = 16
    vocab: int = 8
    seq: int = 4
    batch: int = 1
    tokens: bool = False        # input one-hot tokens times an embedding (else hidden states x)
    tied: bool = False          # LM head is the transposed embedding
    rope: str = "table"         # "table": cos/sin constants; "range": Range/Cos/Sin in the graph
    weights: str = "inputs"     # "inputs": graph inputs; "initializers": bound initializers;
                                # "external": initializers whose data is ONNX external data that
                                # is not written (real sizes: graph only)
    eps: float = 1e-5
    theta: float = 10000.0
    seed: int = 0

    @property
    def mask(self):
        # constant -inf table with table RoPE, Trilu(ConstantOfShape(-inf)) with in-graph RoPE
        return "const" if self.rope == "table" else "trilu"


@dataclass(frozen=True)
class PlanConfig:
    name: str
    dp: int = 1
    pp: int = 1
    cp: int = 1
    tp: int = 1
    sp: bool = False
    mb: int = 1                 # micro-batches per data-parallel rank
    schedule: str = "gpipe"     # or "1f1b"
    zero: int = 0               # 0, 1 (all-reduce + own slice) or 2 (reduce-scatter)
    comm: str = "onnx_tv"       # or "ms": com.microsoft AllReduce/AllGather, whole world as group
    bindings: str = "json"      # "json", "meta" (no plan.json) or "mixed"
    placements: bool = False    # per-rank form writes replica bindings with placements
    bug: Optional[str] = None   # generator-level bug (mutants.py)
    ep: int = 1                 # expert parallel: tokens split like dp, experts split, AllToAll
    capacity: int = 0           # expert parallel: slots per expert and source rank (0: tokens
                                # per rank, which drops none)
    permute: str = "onehot"     # expert parallel: "onehot" dispatch mask and Einsum, or
                                # "argsort": tokens sorted by expert (moe_permute.py)

    @property
    def axes(self):
        return [(a, n) for a, n in (("dp", self.dp), ("ep", self.ep), ("pp", self.pp),
                                    ("cp", self.cp), ("tp", self.tp)) if n > 1]

    @property
    def world(self):
        return self.dp * self.ep * self.pp * self.cp * self.tp


SMALL = dict(hidden=8, heads=2, head_dim=4, ffn=16, vocab=8, seq=4)

# config name -> (model, [plans])
SMALL_ZOO = [
    (ModelConfig("l1_b4_gqa", layers=1, kv_heads=1, batch=4, **SMALL), [
        PlanConfig("dp2_mb2", dp=2, mb=2, bindings="mixed"),
        PlanConfig("dp2_mb2_ms", dp=2, mb=2, comm="ms"),
        PlanConfig("zero1_dp2_mb2_ms", dp=2, mb=2, zero=1, comm="ms"),
        PlanConfig("zero2_dp2_mb2", dp=2, mb=2, zero=2),
    ]),
    (ModelConfig("l1_b2_mha", layers=1, kv_heads=2, batch=2, **SMALL), [
        PlanConfig("tp2_mb2", tp=2, mb=2, bindings="meta"),
        PlanConfig("tp2_sp_mb2", tp=2, sp=True, mb=2),
    ]),
    (ModelConfig("l1_b1_range", layers=1, kv_heads=2, batch=1, rope="range", **SMALL), [
        PlanConfig("cp2", cp=2),
        PlanConfig("cp2_tp2", cp=2, tp=2, placements=True),
    ]),
    (ModelConfig("l2_b2_gqa", layers=2, kv_heads=1, batch=2, **SMALL), [
        PlanConfig("pp2_gpipe_mb2", pp=2, mb=2, bindings="mixed"),
        PlanConfig("pp2_1f1b_mb2", pp=2, mb=2, schedule="1f1b"),
    ]),
    (ModelConfig("l2_b4_mha", layers=2, kv_heads=2, batch=4, **SMALL), [
        PlanConfig("dp2_tp2_pp2_mb2", dp=2, tp=2, pp=2, mb=2, schedule="1f1b", placements=True),
    ]),
    (ModelConfig("l2_b4_tied_init", layers=2, kv_heads=1, batch=4, tokens=True, tied=True,
                 weights="initializers", **SMALL), [
        PlanConfig("dp2_pp2_zero2_mb2", dp=2, pp=2, mb=2, zero=2),
    ]),
]

LLAMA3 = {
    "8b": dict(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336),
    "70b": dict(layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128, ffn=28672),
    "405b": dict(layers=126, hidden=16384, heads=128, kv_heads=8, head_dim=128, ffn=53248),
    # DeepSeek-V3's shape (61 layers, hidden 7168, 128 heads, its dense FFN), with every layer
    # dense: its experts need ops outside what onnx-tv decides. A memory and scale test.
    "dsv3": dict(layers=61, hidden=7168, heads=128, kv_heads=128, head_dim=128, ffn=18432),
}
REAL_PLANS = {
    "8b": PlanConfig("dp512", dp=512, mb=1),
    "70b": PlanConfig("dp16_tp8_pp4_mb32", dp=16, tp=8, pp=4, mb=32, schedule="1f1b"),
    "405b": PlanConfig("dp64_tp8_pp16_mb16", dp=64, tp=8, pp=16, mb=16, schedule="1f1b"),
    "dsv3": PlanConfig("dp32_tp8_pp8_mb16", dp=32, tp=8, pp=8, mb=16, schedule="1f1b"),
}


def real_config(size, layers=None):
    plan = REAL_PLANS[size]
    dims = dict(LLAMA3[size], **({"layers": layers} if layers else {}))
    model = ModelConfig("llama3_" + size, vocab=128256, seq=8192, batch=plan.dp * plan.mb,
                        rope="range", theta=500000.0, **dims)
    return model, plan


# Real dimensions for the zoo's configurations and plans (graph only).
REAL_DIMS = {
    size: dict({k: v for k, v in dims.items() if k != "layers"}, vocab=128256, seq=8192,
               theta=500000.0)
    for size, dims in LLAMA3.items()
}


def real_zoo_model(m, dims, layers=None, external=True):
    """A small zoo model at real dimensions: multi-head stays multi-head (kv-heads = heads),
    grouped-query gets the real kv-heads; layers, batch, tokens, tied and weights kept (bound
    initializers become external data, unless `external` is False); RoPE and mask in the graph
    (a constant [seq, seq] mask would not fit)."""
    kw = dict(dims)
    if m.kv_heads == m.heads:
        kw["kv_heads"] = kw["heads"]
    weights = "external" if external and m.weights == "initializers" else m.weights
    return replace(m, layers=layers or m.layers, rope="range", weights=weights, **kw)


def real_zoo(size, layers=None, dims=None, external=True):
    dims = dims or REAL_DIMS[size]
    return [(real_zoo_model(m, dims, layers, external), plans) for m, plans in SMALL_ZOO]


# Named real plans: (size, plan); the model has batch = dp * mb.
NAMED_REAL_PLANS = {
    "8b_dp2_tp2_pp2_mb2": ("8b", PlanConfig("dp2_tp2_pp2_mb2", dp=2, tp=2, pp=2, mb=2,
                                            schedule="1f1b", placements=True)),
    "8b_cp2_dp2_tp2_pp2_mb2": ("8b", PlanConfig("cp2_dp2_tp2_pp2_mb2", dp=2, cp=2, tp=2, pp=2,
                                                mb=2, schedule="1f1b", placements=True)),
}


# Named small plans with more than two ranks along a mesh axis, for checks with fewer ranks:
# (model, plan). Generator-level edits (PlanConfig.bug) apply to them: "dp_average_half" on
# every rank, "dp_average_half_last_rank" on the last data-parallel rank only;
# "tp_residual_folded" adds residual / tp to each rank's o_proj output before the all-reduce
# (correct), "tp_residual_folded_half" residual / 2 (right only on two TP ranks);
# "microbatch_scale_all" scales every micro-batch's loss and gradients by 2/mb instead of 1/mb,
# "microbatch_scale_last" only the last micro-batch's.
NAMED_SMALL_PLANS = {
    "dp4_mb2": (ModelConfig("l1_b8_gqa", layers=1, kv_heads=1, batch=8, **SMALL),
                PlanConfig("dp4_mb2", dp=4, mb=2)),
    "tp4_mb2": (ModelConfig("l1_b2_mha4", layers=1, hidden=8, heads=4, kv_heads=4, head_dim=2,
                            ffn=16, vocab=8, seq=4, batch=2),
                PlanConfig("tp4_mb2", tp=4, mb=2)),
    "dp4_tp2_pp2_mb2": (ModelConfig("l2_b8_mha", layers=2, kv_heads=2, batch=8, **SMALL),
                        PlanConfig("dp4_tp2_pp2_mb2", dp=4, tp=2, pp=2, mb=2, schedule="1f1b")),
    # four micro-batches per stage program, for checks with fewer micro-batches
    "dp2_tp2_pp2_mb4": (ModelConfig("l2_b8_mha", layers=2, kv_heads=2, batch=8, **SMALL),
                        PlanConfig("dp2_tp2_pp2_mb4", dp=2, tp=2, pp=2, mb=4, schedule="1f1b")),
    # four data-parallel ranks and four micro-batches: a grid of four instances (2 and 3 ranks
    # times 2 and 3 micro-batches), the processes of tests/e2e/distributed_test.cpp share
    "dp4_pp2_mb4": (ModelConfig("l2_b16_mha", layers=2, kv_heads=2, batch=16, **SMALL),
                    PlanConfig("dp4_pp2_mb4", dp=4, pp=2, mb=4, schedule="1f1b")),
    # sequence parallel: all-gathers and reduce-scatters of the sequence over four TP ranks
    "tp4_sp_mb2": (ModelConfig("l1_b2_mha4_s8", layers=1, hidden=8, heads=4, kv_heads=4,
                               head_dim=2, ffn=16, vocab=8, seq=8, batch=2),
                   PlanConfig("tp4_sp_mb2", tp=4, sp=True, mb=2)),
    # ZeRO-2: gradients reduce-scattered over four data-parallel ranks
    "dp4_zero2_mb2": (ModelConfig("l1_b8_gqa", layers=1, kv_heads=1, batch=8, **SMALL),
                      PlanConfig("dp4_zero2_mb2", dp=4, mb=2, zero=2)),
}


def named_real_config(name, layers=None, dims=None):
    size, plan = NAMED_REAL_PLANS[name]
    dims = dict(dims or REAL_DIMS[size])
    dims.setdefault("layers", LLAMA3[size]["layers"])
    if layers:
        dims["layers"] = layers
    model = ModelConfig("llama3_" + size, batch=plan.dp * plan.mb, rope="range", **dims)
    return model, plan


def stage_layers(layers, pp, stage):
    """Layers of a pipeline stage: equal split, or, when uneven, the first and last stages (which
    also hold the embedding and the LM head) take one layer fewer (126 layers on 16 stages:
    7, 8 x 14, 7)."""
    if layers % pp == 0:
        n = layers // pp
        return list(range(stage * n, (stage + 1) * n))
    big = -(-layers // pp)
    sizes = [big] * pp
    extra = big * pp - layers
    order = [0, pp - 1] + list(range(1, pp - 1))
    for i in range(extra):
        sizes[order[i % pp]] -= 1
    start = sum(sizes[:stage])
    return list(range(start, start + sizes[stage]))


@dataclass(frozen=True)
class DeepSeekConfig(ModelConfig):
    """A DeepSeek-V2/V3 style decoder: MLA attention (low-rank q and kv compression, a decoupled
    RoPE key shared by the heads, kv norm), `dense_layers` dense first layers, then MoE layers
    (scores by `score` over `experts` routed experts, selection on the scores plus a
    load-balancing bias when `bias`, group-limited top-k: `groups` groups of which the best
    `topk_groups` are kept, top `topk` experts, the selected scores normalised times
    `route_scale`, `shared` shared experts, the sequence-wise auxiliary loss times
    `aux_alpha`). `head_dim` is qk_nope + qk_rope (the softmax scale)."""
    q_lora: int = 0             # 0: q projected directly (V2-Lite), else its compression rank
    kv_lora: int = 4
    qk_nope: int = 2
    qk_rope: int = 2
    v_head: int = 2
    dense_layers: int = 1
    experts: int = 4
    shared: int = 1
    topk: int = 2
    groups: int = 2
    topk_groups: int = 1
    moe_ffn: int = 4
    route_scale: float = 2.5
    score: str = "sigmoid"      # "sigmoid" (V3) or "softmax" (V2)
    bias: bool = True           # V3's selection-only load-balancing bias
    aux_alpha: float = 0.0625   # a power of two: the prover reads float32 constants exactly

    @property
    def moe_layers(self):
        return list(range(self.dense_layers, self.layers))


# The DeepSeek small zoo (models/deepseek): a dense first layer and an MoE layer, at sizes where
# every plan proves in about a second. V3's router (sigmoid scores, the selection bias, groups
# scored by their two best, the weights normalised, a route scale) and V2's (softmax scores,
# groups scored by their best, no bias, no normalisation).
DS_SMALL = dict(layers=2, dense_layers=1, hidden=4, heads=2, kv_heads=2, head_dim=4, ffn=4,
                vocab=4, seq=2, kv_lora=2, qk_nope=2, qk_rope=2, v_head=2, experts=4, groups=2,
                topk_groups=1, topk=2, moe_ffn=2)
DEEPSEEK_ZOO = [
    (DeepSeekConfig("ds3_b4", batch=4, q_lora=2, **DS_SMALL), [
        PlanConfig("tp2_mb2", tp=2, mb=2),
        PlanConfig("tp2_sp_mb2", tp=2, sp=True, mb=2),
        PlanConfig("dp2_mb2", dp=2, mb=2),
        PlanConfig("dp2_tp2_mb2", dp=2, tp=2, mb=2),
        PlanConfig("pp2_1f1b_mb2", pp=2, mb=2, schedule="1f1b"),
        PlanConfig("dp2_tp2_pp2_mb2", dp=2, tp=2, pp=2, mb=2, schedule="1f1b"),
        # expert parallelism by AllToAll (padded dispatch) on the MoE layer
        PlanConfig("ep2", ep=2),
        PlanConfig("ep2_mb2", ep=2, mb=2),
        PlanConfig("dp2_ep2", dp=2, ep=2),
    ]),
    (DeepSeekConfig("ds2_b2", batch=2, q_lora=0, score="softmax", bias=False, route_scale=1.0,
                    **DS_SMALL), [
        PlanConfig("tp2", tp=2),
        PlanConfig("dp2", dp=2),
    ]),
]

# Expert parallelism by AllToAll on one MoE layer (two batch rows per rank): the padded one-hot
# dispatch, over 2 and 4 ranks and with DP and expert-data-parallel gradient groups. The
# catalogue's expert-parallel bugs are built on these plans too.
DS_EP = dict(DS_SMALL, layers=1, dense_layers=0)
DEEPSEEK_ZOO.append(
    (DeepSeekConfig("ds3_ep", batch=4, q_lora=2, **DS_EP), [
        PlanConfig("ep2", ep=2),
        PlanConfig("ep4", ep=4),
        PlanConfig("dp2_ep2", dp=2, ep=2),
    ]))
# Configurations written only as bases of catalogue bugs: GShard's dispatch at a capacity (one
# batch row, two tokens, per rank; with two rows its CumSum places grow past 6 GB before the
# prover refutes its bug). The correct capacity plan is not yet proven (docs/zoo.md), so it is
# not written as a case.
DEEPSEEK_EP_BASES = [
    (DeepSeekConfig("ds3_ep_b2", batch=2, q_lora=2, **DS_EP), [
        PlanConfig("ep2_capacity2", ep=2, capacity=2),
    ]),
]

# The real DeepSeek configurations (graph only, weights as inputs): HF config.json of each.
DEEPSEEK_REAL = {
    "v2-lite": dict(layers=27, dense_layers=1, hidden=2048, heads=16, q_lora=0, kv_lora=512,
                    qk_nope=128, qk_rope=64, v_head=128, ffn=10944, moe_ffn=1408, experts=64,
                    shared=2, topk=6, groups=1, topk_groups=1, vocab=102400, score="softmax",
                    bias=False, route_scale=1.0),
    "v2": dict(layers=60, dense_layers=1, hidden=5120, heads=128, q_lora=1536, kv_lora=512,
               qk_nope=128, qk_rope=64, v_head=128, ffn=12288, moe_ffn=1536, experts=160,
               shared=2, topk=6, groups=8, topk_groups=3, vocab=102400, score="softmax",
               bias=False, route_scale=16.0),
    "v3": dict(layers=61, dense_layers=3, hidden=7168, heads=128, q_lora=1536, kv_lora=512,
               qk_nope=128, qk_rope=64, v_head=128, ffn=18432, moe_ffn=2048, experts=256,
               shared=1, topk=8, groups=8, topk_groups=4, vocab=129280, score="sigmoid",
               bias=True, route_scale=2.5),
}
# TrainVerify's DeepSeek-V3 plan: DP32 x TP8 x PP8 with 16 micro-batches, its experts split
# inside the TP group (EP8) with the tokens replicated.
DEEPSEEK_REAL_PLAN = PlanConfig("dp32_tp8_pp8_mb16", dp=32, tp=8, pp=8, mb=16, schedule="1f1b")


def deepseek_real_config(name, layers=None, trainverify_size=False):
    """A real DeepSeek configuration with batch = dp * mb; `trainverify_size`: TrainVerify's
    hidden 512 and sequence 128 (every other dimension real), else the model's hidden size and
    a 4096 sequence."""
    dims = dict(DEEPSEEK_REAL[name])
    if layers:
        dims["layers"] = layers
        dims["dense_layers"] = min(dims["dense_layers"], layers - 1)
    seq = 4096
    if trainverify_size:
        dims["hidden"], seq = 512, 128
    p = DEEPSEEK_REAL_PLAN
    model = DeepSeekConfig("deepseek_" + name.replace("-", "_"), seq=seq, batch=p.dp * p.mb,
                           rope="range", theta=10000.0, kv_heads=dims["heads"],
                           head_dim=dims["qk_nope"] + dims["qk_rope"], **dims)
    return model, p
