"""One rank's training step: micro-batches in pipeline order, forward and backward, gradient
accumulation, pipeline Send/Recv, tied-embedding and data-parallel gradient synchronisation
(all-reduce with averaging, or ZeRO reduce-scatter with parameter all-gather), and the bindings
of every rank input and output to the spec. The spec is the same step on one device."""
import numpy as np

from .comm import Comm, Mesh
from .config import PlanConfig, stage_layers
from .graph import Graph
from . import llama
from .config import DeepSeekConfig
from .llama import Par

SPEC_PLAN = PlanConfig("spec")


def model_module(m):
    """The module that builds model `m` (Llama or DeepSeek): its class, parameter shapes and
    tensor-parallel split rule."""
    if isinstance(m, DeepSeekConfig):
        from . import deepseek
        return deepseek
    return llama


def param_shapes(m):
    return model_module(m).param_shapes(m)


def buffer_shapes(m):
    return getattr(model_module(m), "buffer_shapes", lambda _: {})(m)


def stat_shapes(m):
    return getattr(model_module(m), "stat_shapes", lambda _: {})(m)


def param_values(m):
    """Deterministic float32 weights for configs that bake them in as initializers."""
    rng = np.random.RandomState(1000 + m.seed)
    out = {}
    for p, shape in param_shapes(m).items():
        if len(shape) == 1:
            out[p] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            out[p] = (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    return out


def region(place, coords, sizes, shape, local=None):
    """[start, end) per spec dimension of a binding on the rank at `coords`."""
    sl = [[0, n] for n in shape]
    for axis in sizes:
        d = place.get(axis)
        if d is None or d == "P":
            continue
        n = (sl[d][1] - sl[d][0]) // sizes[axis]
        start = sl[d][0] + coords[axis] * n
        sl[d] = [start, start + n]
    for d, ls in enumerate(local or []):
        if ls is not None:
            sl[d] = [sl[d][0] + ls[0], sl[d][0] + ls[1]]
    return sl


def schedule(plan, stage):
    """("F"|"B", micro-batch) in this stage's order: GPipe (all forwards, then all backwards) or
    1F1B (pp - stage - 1 warm-up forwards, then one forward one backward, then cool-down)."""
    M = plan.mb
    if plan.schedule == "gpipe" and plan.pp > 1:
        return [("F", i) for i in range(M)] + [("B", i) for i in range(M)]
    warm = min(plan.pp - stage - 1, M)
    out = [("F", i) for i in range(warm)]
    for i in range(M - warm):
        out += [("F", warm + i), ("B", i)]
    return out + [("B", i) for i in range(M - warm, M)]


class Program:
    """Builds the ONNX program of one rank (or, with plan=None, the spec)."""

    def __init__(self, m, plan=None, rank=0, generic=False):
        self.spec = plan is None
        self.m, self.plan = m, plan or SPEC_PLAN
        self.mesh = Mesh(self.plan.axes)
        self.rank = rank
        self.coords = self.mesh.coords(rank)
        self.sizes = dict(self.plan.axes)
        self.g = Graph("spec" if self.spec else "rank%d" % rank)
        self.comm = Comm(self.g, self.mesh, rank, generic, ms=self.plan.comm == "ms")
        p = self.plan
        self.par = Par(self.comm, tp=p.tp, sp=p.sp, cp=p.cp, cp_rank=self.coords.get("cp", 0),
                       tp_rank=self.coords.get("tp", 0), bug=p.bug, ep=p.ep,
                       ep_rank=self.coords.get("ep", 0), capacity=p.capacity,
                       permute=p.permute)
        self.bm = m.batch // (p.dp * p.ep * p.mb)
        self.mod = model_module(m)
        self.L = (self.mod.DeepSeek if self.mod is not llama else llama.Llama)(
            self.g, m, self.par, self.bm)
        self.stage = self.coords.get("pp", 0)
        self.first, self.last = self.stage == 0, self.stage == p.pp - 1
        self.layers = stage_layers(m.layers, p.pp, self.stage)
        self.bindings = []      # dicts: value, spec, place {axis: dim | "P"}, local
        self.n_init = 0

    # ---- helpers -------------------------------------------------------------------------------
    def bind(self, value, spec, place, local=None):
        self.bindings.append(dict(value=value, spec=spec, place=place, local=local))

    def local_shape(self, shape, place, local=None):
        sl = region(place, {a: 0 for a in self.sizes}, self.sizes, shape, local)
        return [b - a for a, b in sl]

    def data_place(self, kind):
        """Placement of a micro-batch tensor [batch, seq, ...]."""
        place = {}
        if self.plan.dp > 1:
            place["dp"] = 0
        if self.plan.ep > 1:
            place["ep"] = 0
        if self.plan.cp > 1:
            place["cp"] = 1
        if self.plan.tp > 1:
            if kind in ("x", "grad_x") and self.plan.sp:
                place["tp"] = 1
            if kind == "labels" and self.plan.bug != "vocab_ce_gathered":
                place["tp"] = 2
        return place

    def data_input(self, kind, i):
        m = self.m
        shape = {"x": [m.batch, m.seq, m.hidden], "labels": [m.batch, m.seq, m.vocab],
                 "tokens": [m.batch, m.seq, m.vocab]}[kind]
        if self.spec:
            return self.g.input(kind, shape)
        place = self.data_place(kind)
        local = [[i * self.bm, (i + 1) * self.bm]] + [None] * (len(shape) - 1)
        name = "%s_mb%d" % (kind, i)
        self.g.input(name, self.local_shape(shape, place, local))
        self.bind(name, kind, place, local)
        return name

    def params(self):
        shapes = param_shapes(self.m)
        out = []
        for p in shapes:
            if p.startswith("layers."):
                keep = int(p.split(".")[1]) in self.layers
            elif p == "embed":
                keep = self.first or (self.last and self.m.tied)
            else:
                keep = self.last
            if keep:
                out.append(p)
        return out

    def param_place(self, p):
        if self.plan.ep > 1 and ".experts." in p:
            assert self.plan.tp == 1, "expert parallelism is generated without TP"
            return {"ep": 0}
        place = {}
        d = self.mod.tp_shard_dim(p)
        if self.plan.tp > 1 and d is not None:
            place["tp"] = d
        if self.plan.zero:
            assert self.plan.tp == 1 and self.plan.cp == 1, "ZeRO is generated with DP (and PP) only"
            place["dp"] = 0
        return place

    def param_inputs(self):
        g, m = self.g, self.m
        shapes, W = param_shapes(m), {}
        values = param_values(m) if m.weights == "initializers" else None
        external = m.weights == "external"
        for p in self.params():
            place = self.param_place(p)
            if self.spec:
                if external:
                    W[p] = g.external_initializer(p, shapes[p])
                else:
                    W[p] = g.initializer(p, values[p]) if values else g.input(p, shapes[p])
                continue
            if values or external:
                self.n_init += 1
                op = "Mul" if len(shapes[p]) == 1 else "MatMul"
                name = "onnx::%s_%d" % (op, self.n_init)
                sl = region(place, self.coords, self.sizes, shapes[p])
                if external:
                    g.external_initializer(name, [b - a for a, b in sl])
                else:
                    g.initializer(name, values[p][tuple(slice(a, b) for a, b in sl)])
            else:
                name = p + (".shard" if self.plan.zero else "")
                g.input(name, self.local_shape(shapes[p], place))
            self.bind(name, p, place)
            W[p] = name
            if self.plan.zero:
                with g.scope("zero", p):
                    W[p] = self.comm.allgather(name, ["dp"], 0, "AllGather_param")
        for b, shape in buffer_shapes(m).items():
            if int(b.split(".")[1]) in self.layers:
                W[b] = g.input(b, shape)
                if not self.spec:
                    self.bind(b, b, {})
        return W

    # ---- the step ------------------------------------------------------------------------------
    def build(self):
        g, m, plan, L, comm = self.g, self.m, self.plan, self.L, self.comm
        W = self.param_inputs()
        avg = 1.0 / (plan.dp * plan.ep * plan.cp)
        if plan.bug == "dp_average_half" or (plan.bug == "dp_average_half_last_rank" and
                                             self.coords.get("dp", 0) == plan.dp - 1):
            avg *= 2
        act_shape = [self.bm, L.sa, m.hidden]

        def mb_scale(i):  # each micro-batch's share of the loss
            wrong = plan.bug == "microbatch_scale_all" or (
                plan.bug == "microbatch_scale_last" and i == plan.mb - 1)
            return (2.0 if wrong else 1.0) / plan.mb
        saved, acc, loss, stats = {}, {}, None, {}
        moe = hasattr(L, "begin_micro_batch")
        for kind, i in schedule(plan, self.stage):
            with g.scope(*([] if self.spec else ["mb%d" % i])):
                if moe:
                    L.begin_micro_batch(mb_scale(i))
                if kind == "F":
                    if not self.first:
                        x = comm.recv("pp", -1, i, act_shape, "pp/Recv_activation")
                    elif m.tokens:
                        tok = self.data_input("tokens", i)
                        x = L.embed(tok, W)
                    else:
                        x = self.data_input("x", i)
                    layer_saves = []
                    for li in self.layers:
                        x, S = L.layer(x, W, li)
                        layer_saves.append(S)
                    if moe:
                        loss, stats = self.add_moe_terms(loss, stats, i)
                    head = None
                    if self.last:
                        labels = self.data_input("labels", i)
                        lm, head = L.head(x, W, labels)
                        with g.scope("loss"):
                            if plan.mb > 1:
                                lm = g.node("Mul", [lm, g.const(mb_scale(i))], "Mul_microbatches")
                            loss = lm if loss is None else g.node("Add", [loss, lm], "Add_accumulate")
                    else:
                        comm.send(x, "pp", 1, i, "pp/Send_activation")
                    saved[i] = (layer_saves, head, x if not self.first else None,
                                tok if self.first and m.tokens else None)
                    continue
                layer_saves, head, _, tok = saved.pop(i)
                G = {}
                if self.last:
                    dx, G = L.head_bwd(W, head, mb_scale(i))
                else:
                    dx = comm.recv("pp", 1, 100 + i, act_shape, "pp/Recv_grad")
                for li, S in reversed(list(zip(self.layers, layer_saves))):
                    dx, Gl = L.layer_bwd(dx, W, S, li)
                    G.update(Gl)
                if self.first:
                    if m.tokens:
                        de = L.embed_bwd(tok, dx)
                        if "embed" in G:
                            with g.scope("embed_tokens"), g.backward():
                                de = g.node("Add", [G["embed"], de], "Add_tied")
                        G["embed"] = de
                    else:
                        self.grad_x(dx, i, avg)
                else:
                    comm.send(dx, "pp", -1, 100 + i, "pp/Send_grad")
            for p in self.params():
                if p in G:
                    with g.scope("grad_accum", p):
                        acc[p] = G[p] if p not in acc else g.node("Add", [acc[p], G[p]], "Add_mb%d" % i)
        self.sync_and_output(acc, avg)
        self.stats_output(stats)
        if loss is not None:
            self.loss_output(loss, avg)
        return self

    def add_moe_terms(self, loss, stats, i):
        """The MoE layers' auxiliary losses join the loss; their statistics are summed over
        the micro-batches."""
        g, L = self.g, self.L
        for a in L.aux:
            with g.scope("loss"):
                loss = a if loss is None else g.node("Add", [loss, a], "Add_aux")
        for k, v in L.stats.items():
            with g.scope("stats", k):
                stats[k] = v if k not in stats else g.node("Add", [stats[k], v], "Add_mb%d" % i)
        return loss, stats

    def stats_output(self, stats):
        """Sums over every token of the step: all-reduced over the data-parallel ranks."""
        g = self.g
        for k, v in stats.items():
            shape = stat_shapes(self.m)[k]
            if not self.spec:
                with g.scope("stats_sync", k):
                    if self.plan.bug != "load_local_counts":
                        v = self.comm.allreduce(v, ["dp", "ep"], "sum", "AllReduce")
            g.output(k, v, shape)
            if not self.spec:
                self.bind(k, k, {})

    def grad_x(self, dx, i, avg):
        g, m = self.g, self.m
        if self.spec:
            g.output("grad_x", dx, [m.batch, m.seq, m.hidden])
            return
        if avg != 1.0:
            with g.scope("grad_x"):
                dx = g.node("Mul", [dx, g.const(avg)], "Mul_average")
        shape = [m.batch, m.seq, m.hidden]
        place = self.data_place("grad_x")
        local = [[i * self.bm, (i + 1) * self.bm], None, None]
        name = "grad_x_mb%d" % i
        g.output(name, dx, self.local_shape(shape, place, local))
        self.bind(name, "grad_x", place, local)

    def sync_and_output(self, acc, avg):
        g, plan, comm = self.g, self.plan, self.comm
        shapes = param_shapes(self.m)
        if self.m.tied and plan.pp > 1 and "embed" in acc:
            # the embedding's gradient is summed between the first and the last stage
            assert plan.pp == 2
            with g.scope("grad_sync", "embed"):
                acc["embed"] = comm.allreduce(acc["embed"], ["pp"], "sum", "AllReduce_tied")
        for p in self.params():
            v = acc[p]
            if self.spec:
                g.output("grad_" + p, v, shapes[p])
                continue
            place = self.param_place(p)
            full = self.local_shape(shapes[p], {a: d for a, d in place.items() if a != "dp"})
            with g.scope("grad_sync", p):
                if plan.zero == 2:
                    v = comm.reducescatter(v, ["dp"], 0, full[0], "ReduceScatter")
                elif plan.zero == 1:
                    v = comm.allreduce(v, ["dp"], "sum", "AllReduce")
                    c, k = full[0] // plan.dp, self.coords["dp"]
                    v = g.node("Slice", [v, g.ints([k * c]), g.ints([(k + 1) * c]), g.ints([0])],
                               "Slice_own_shard")
                else:
                    v = comm.allreduce(v, self.grad_group(p), "sum", "AllReduce")
                k = avg
                if plan.bug == "expert_grad_unscaled_ep" and ".experts." in p:
                    k *= plan.ep     # averaged over the expert-data-parallel group only
                if k != 1.0:
                    v = g.node("Mul", [v, g.const(k)], "Mul_average")
            name = "grad_" + p + (".shard" if plan.zero else "")
            g.output(name, v, self.local_shape(shapes[p], place))
            self.bind(name, "grad_" + p, place)

    def grad_group(self, p):
        """The ranks whose gradients of `p` are summed: those holding the same parameter shard
        (an expert's gradient already holds every token its expert-parallel group routed to it:
        the expert-data-parallel group)."""
        if ".experts." in p and self.plan.ep > 1:
            return ["dp", "ep"] if self.plan.bug == "expert_grad_ep_group" else ["dp"]
        return ["dp", "ep", "cp"]

    def loss_output(self, loss, avg):
        g = self.g
        if self.spec:
            g.output("loss", loss, [])
            return
        if avg != 1.0:
            with g.scope("loss"):
                loss = g.node("Mul", [loss, g.const(avg)], "Mul_average")
        g.output("loss_part", loss, [])
        # with auxiliary losses every pipeline stage holds a part of the loss
        summed = ("dp", "ep", "cp", "pp") if stat_shapes(self.m) else ("dp", "cp")
        self.bind("loss_part", "loss", {a: "P" for a in summed if a in self.sizes})


def build_spec(m):
    return Program(m).build().g.model()
