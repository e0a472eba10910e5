"""Writes a `train` recipe (fam_train.py): the spec, one SPMD program per pipeline stage, plan.json."""
import json
import os
from fractions import Fraction as F

import numpy as np

from .onnxb import Builder, save, start_case

AXES = ("dp", "pp", "tp")
# scales are exact fractions, written as the float nearest to them: a product of rounded floats
# (0.1 / 5 is 0.020000000000000004) stands for another number under the contract's reading


def lam_of(rec):
    return F(str(rec["lam"]))


def sizes(rec):
    B = rec["dp"] * rec["mb"] * rec["bm"]
    return B, rec["tp"] * rec["hp"], B * rec["E"]  # rows, hidden, elements the loss averages


def matmul(g, a, b, gemm, trans_a=False, trans_b=False):
    if gemm:
        return g.node("Gemm", [a, b], transA=int(trans_a), transB=int(trans_b))
    if trans_a:
        a = g.node("Transpose", [a], perm=[1, 0])
    if trans_b:
        b = g.node("Transpose", [b], perm=[1, 0])
    return g.node("MatMul", [a, b])


def act(g, kind, a):
    if kind == "tanh":
        return g.node("Tanh", [a])
    if kind == "square":
        return g.node("Mul", [a, a])
    return g.node("Identity", [a])


def act_grad(g, kind, dh, a, h):
    if kind == "tanh":
        return g.node("Mul", [dh, g.node("Sub", [g.const(1.0), g.node("Mul", [h, h])])])
    if kind == "square":
        return g.node("Mul", [dh, g.node("Mul", [a, g.const(2.0)])])
    return dh


def spec(rec):
    g = Builder("spec")
    B, H, N = sizes(rec)
    D, E, lam = rec["D"], rec["E"], rec["lam"]
    x, w1, w2 = g.input("x", [B, D]), g.input("w1", [D, H]), g.input("w2", [H, E])
    a = g.node("MatMul", [x, w1])
    h = act(g, rec["act"], a)
    y = g.node("MatMul", [h, w2])
    if rec["bias"]:
        y = g.node("Add", [y, g.input("b", [1, E])])
    yy = g.node("Mul", [y, y])
    if rec["spec_loss"] == "mean":
        loss = g.node("ReduceMean", [yy], keepdims=0)
    else:
        loss = g.node("Mul", [g.node("ReduceSum", [yy], keepdims=0), g.const(1.0 / N)])
    dy = g.node("Mul", [y, g.const(2.0 / N)])
    dw2 = matmul(g, h, dy, False, trans_a=True)
    dh = matmul(g, dy, w2, False, trans_b=True)
    dw1 = matmul(g, x, act_grad(g, rec["act"], dh, a, h), False, trans_a=True)
    if lam:
        ss = g.node("ReduceSum", [g.node("Mul", [w2, w2])], keepdims=0)
        loss = g.node("Add", [loss, g.node("Mul", [ss, g.const(lam)])])
        dw2 = g.node("Add", [dw2, g.node("Mul", [w2, g.const(2 * lam)])])
    g.output(loss, [], "loss")
    g.output(dw1, [D, H], "dw1")
    g.output(dw2, [H, E], "dw2")
    if rec["bias"]:
        g.output(g.node("ReduceSum", [dy, g.ints([0])], keepdims=1), [1, E], "db")
    return g


class Stage:
    """The program of one pipeline stage (both halves of the model when pp == 1)."""

    def __init__(self, rec, stage):
        self.rec, self.stage = rec, stage
        self.g = Builder("stage%d" % stage)
        self.first = stage == 0
        self.last = stage == rec["pp"] - 1
        self.axes = [a for a in AXES if rec[a] > 1]
        self.bindings = []

    # ---- plan helpers --------------------------------------------------------------------------
    def bind(self, value, spec, local_slice=None, **placements):
        b = dict(value=value, spec=spec)
        if self.axes:
            b["ranks"] = {"pp": self.stage} if self.rec["pp"] > 1 else {}
            b["placements"] = [placements.get(a, "Replicate()") for a in self.axes]
        else:
            b["ranks"] = [0]
        if local_slice:
            b["local_slice"] = local_slice
        self.bindings.append(b)

    def comm(self, op, x, axis, **attrs):
        if self.rec[axis] == 1:
            return x
        return self.g.node(op, [x], domain="onnx_tv", group_axes=[axis], **attrs)

    def share(self, right, wrong):
        return wrong if self.rec["bug"] == "wd_count" else right

    # ---- the bodies ----------------------------------------------------------------------------
    def inputs(self):
        rec, g = self.rec, self.g
        self.w1 = self.w2 = self.b = None
        if self.first:
            self.w1 = g.input("w1", [rec["D"], rec["hp"]])
            self.bind("w1", "w1", tp="Shard(1)")
        if self.last:
            self.w2 = g.input("w2", [rec["hp"], rec["E"]])
            self.bind("w2", "w2", tp="Shard(0)")
            if rec["bias"]:
                self.b = g.input("b", [1, rec["E"]])
                self.bind("b", "b")

    def x_piece(self, k):
        rec, bm = self.rec, self.rec["bm"]
        name = "x" if rec["mb"] == 1 else "x_mb%d" % k
        self.g.input(name, [bm, rec["D"]])
        self.bind(name, "x", None if rec["mb"] == 1 else [[k * bm, (k + 1) * bm], None], dp="Shard(0)")
        return name

    def forward_a(self, k):
        g, rec = self.g, self.rec
        x = self.x_piece(k)
        a = matmul(g, x, self.w1, rec["gemm"])
        h = act(g, rec["act"], a)
        return dict(x=x, a=a, h=h)

    def scale(self, k):
        rec = self.rec
        _, _, N = sizes(rec)
        c = F(1, N)
        if rec["bug"] == "mb_wrong_count":
            c *= rec["mb"]  # each micro-batch averaged over its own rows
        if rec["bug"] == "dp_local_mean":
            c *= rec["dp"]
        if rec["bug"] == "mb_one_scaled" and k == rec["bad_mb"]:
            c *= 2
        return c

    def loss_b(self, k, h):
        """y, loss, dw2, db and dh of one body, from its activation h."""
        g, rec, dt = self.g, self.rec, self.rec["dtype"]
        y = matmul(g, h, self.w2, rec["gemm"])
        if rec["bias"]:
            share = 1.0 / rec["tp"]
            if rec["bug"] == "bias_count":
                share = 0.5 if rec["tp"] == 4 else 0.25
            b = self.b if rec["tp"] == 1 else g.node("Mul", [self.b, g.const(share, dt)])
            y = g.node("Add", [y, b])
        y = self.comm("AllReduce", y, "tp")
        c = self.scale(k)
        out = dict(loss=g.node("Mul", [g.node("ReduceSum", [g.node("Mul", [y, y])], keepdims=0),
                                       g.const(float(c), dt)]))
        dy = g.node("Mul", [y, g.const(float(2 * c), dt)])
        out["dw2"] = matmul(g, h, dy, rec["gemm"], trans_a=True)
        if rec["bias"]:
            out["db"] = g.node("ReduceSum", [dy, g.ints([0])], keepdims=1)
        if rec["lam"] and rec["wd"] == "per_mb":  # weight decay: every body of every dp rank adds
            self.weight_decay(out, self.share(F(1, rec["mb"] * rec["dp"]), F(1, 2)))  # a share
        return out, matmul(g, dy, self.w2, rec["gemm"], trans_b=True)

    def weight_decay(self, out, share):
        g, lam = self.g, lam_of(self.rec)
        ss = g.node("ReduceSum", [g.node("Mul", [self.w2, self.w2])], keepdims=0)
        ss = self.comm("AllReduce", ss, "tp")
        out["loss"] = g.node("Add", [out["loss"], g.node("Mul", [ss, g.const(float(lam * share))])])
        out["dw2"] = g.node("Add", [out["dw2"], g.node("Mul", [self.w2, g.const(float(2 * lam * share))])])

    def backward_c(self, fa, dh):
        g, rec = self.g, self.rec
        da = act_grad(g, rec["act"], dh, fa["a"], fa["h"])
        return dict(dw1=matmul(g, fa["x"], da, rec["gemm"], trans_a=True))

    def p2p(self, op, x, offset, tag, shape):
        if op == "Send":
            return self.g.node("Send", [x], domain="onnx_tv", peer_axis="pp", peer_offset=offset, tag=tag)
        y = self.g.node("Recv", [], domain="onnx_tv", peer_axis="pp", peer_offset=offset, tag=tag)
        self.g.annotate(y, shape)
        return y

    def bodies(self):
        """Per-body results {output: [one value per body]}."""
        rec, mb = self.rec, self.rec["mb"]
        hshape = [rec["bm"], rec["hp"]]
        res = {}

        def keep(d):
            for key, v in d.items():
                res.setdefault(key, []).append(v)
        if rec["pp"] == 1:
            for k in range(mb):
                fa = self.forward_a(k)
                out, dh = self.loss_b(k, fa["h"])
                keep(out)
                keep(self.backward_c(fa, dh))
            return res
        if self.first:
            fas = []
            for k in range(mb):
                fas.append(self.forward_a(k))
                sent = fas[-1]["a" if rec["bug"] == "pp_send_preact" else "h"]
                self.p2p("Send", sent, 1, k, None)
            for k in range(mb):
                dh = self.p2p("Recv", None, 1, 100 + k, hshape)
                keep(self.backward_c(fas[k], dh))
            return res
        for k in range(mb):
            tag = (k + 1) % mb if rec["bug"] == "pp_tag_swap" else k
            out, dh = self.loss_b(k, self.p2p("Recv", None, -1, tag, hshape))
            keep(out)
            self.p2p("Send", dh, -1, 100 + k, None)
        return res

    def accumulate(self, vals, shape):
        g, how = self.g, self.rec["acc"]
        if len(vals) == 1:
            return vals[0]
        if how == "sum":
            return g.node("Sum", vals)
        acc = g.const(np.zeros(shape)) if how == "zeros" else vals[0]
        for v in (vals if how == "zeros" else vals[1:]):
            acc = g.node("Add", [acc, v])
        return acc

    def build(self):
        rec, g = self.rec, self.g
        self.inputs()
        res = self.bodies()
        shapes = dict(loss=[], dw1=[rec["D"], rec["hp"]], dw2=[rec["hp"], rec["E"]], db=[1, rec["E"]])
        tot = {k: self.accumulate(v, shapes[k]) for k, v in res.items()}
        if self.last and rec["lam"] and rec["wd"] in ("per_dp", "once"):
            if rec["wd"] == "per_dp":  # before the sum over dp ranks
                self.weight_decay(tot, self.share(F(1, rec["dp"]), F(1, 2)))
        partial = rec["dp_out"] == "partial"
        for key in sorted(tot):
            v = tot[key]
            if not partial:
                if key == "dw1" and rec["bug"] == "wrong_axis":
                    v = self.comm("AllReduce", v, "tp")
                elif not (key == "dw1" and rec["bug"] == "missing_dp_reduce"):
                    v = self.comm("AllReduce", v, "dp")
            tot[key] = v
        if self.last and rec["lam"] and rec["wd"] == "once":
            self.weight_decay(tot, F(1))
        place = dict(dw1="Shard(1)", dw2="Shard(0)")
        for key in sorted(tot):
            name = "out_" + key
            g.output(tot[key], shapes[key], name)
            pl = dict(tp=place.get(key, "Replicate()"))
            if partial:
                pl["dp"] = "Partial()"
            self.bind(name, key, **pl)
        return self


def write(rec, folder):
    shards = start_case(folder, spec(rec).model())
    axes = [a for a in AXES if rec[a] > 1]
    world = rec["dp"] * rec["pp"] * rec["tp"]
    plan = {"format": "onnx-tv.plan/1", "world_size": world, "programs": [], "bindings": []}
    if axes:
        plan["mesh"] = {"axes": axes, "shape": [rec[a] for a in axes]}
    for s in range(rec["pp"]):
        st = Stage(rec, s).build()
        f = "stage%d.onnx" % s
        save(st.g.model(), os.path.join(shards, f))
        plan["programs"].append({"file": f, "ranks": {"pp": s} if rec["pp"] > 1 else
                                 ({} if axes else [0])})
        plan["bindings"] += st.bindings
    with open(os.path.join(shards, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1, sort_keys=True)
    return folder
