"""Numeric differential testing of a plan against its spec, in float64 with numpy.

An interpreter written independently of the generator: it reads only the ONNX files and the
plan (plan-format.md), draws random values for the spec's symbolic inputs, derives every rank's
inputs from the bindings, runs all ranks with their collectives simulated, and compares every
output binding with the spec region it claims. It shares no code with the graph builders, so it
cross-checks the generator, and, later, the prover.
"""
import itertools
import json
import math
import os
import time

import numpy as np
import onnx
from onnx import numpy_helper

from . import exact_const
from . import numeric_index
from .numeric_index import index_op, select_op
from .float_meaning import meaning_array

TOL = 1e-9
FLOAT_TYPES = {1, 10, 11, 16}


class InputError(Exception):
    pass


# ---- single-device ops ---------------------------------------------------------------------------
def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _axes(a, rank):
    return tuple(int(x) % rank for x in a)


def _reduce(fn, x, axes, keepdims):
    if axes is None or len(axes) == 0:
        axes = tuple(range(x.ndim))
    return fn(x, axis=_axes(axes, x.ndim), keepdims=bool(keepdims))


def _softmax(x, axis):
    mx = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - mx)
    return e / np.sum(e, axis=axis, keepdims=True)


def _logsoftmax(x, axis):
    mx = np.max(x, axis=axis, keepdims=True)
    return x - mx - np.log(np.sum(np.exp(x - mx), axis=axis, keepdims=True))


def _slice(x, starts, ends, axes=None, steps=None):
    axes = list(range(len(starts))) if axes is None else [int(a) % x.ndim for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    idx = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        idx[a] = slice(int(s), int(e) if abs(int(e)) < 2 ** 62 else None, int(st))
    return x[tuple(idx)]


def _cast(x, to):
    if to in FLOAT_TYPES:
        return np.asarray(x, np.float64)
    if to == 9:
        return np.asarray(x, bool)
    return np.asarray(x, np.int64)


def _reshape(x, shape):
    shape = [int(s) for s in shape]
    shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


_erf = np.vectorize(math.erf)


def run_op(node, ins):
    op, a = node.op_type, _attrs(node)
    x = ins[0] if ins else None
    if op in ("Add", "Sub", "Mul", "Div", "Pow"):
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
             "Pow": np.power}[op]
        with np.errstate(invalid="raise"):
            return [f(ins[0], ins[1])]
    unary = {"Neg": np.negative, "Sqrt": np.sqrt, "Reciprocal": lambda v: 1.0 / v, "Exp": np.exp,
             "Log": np.log, "Tanh": np.tanh, "Erf": _erf, "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
             "Relu": lambda v: np.maximum(v, 0), "Cos": np.cos, "Sin": np.sin,
             "Identity": lambda v: v}
    if op in unary:
        return [np.asarray(unary[op](x))]
    if op == "Abs":
        return [np.abs(x)]
    if op in ("Max", "Min", "Sum", "Mean"):
        f = {"Max": np.maximum, "Min": np.minimum, "Sum": np.add, "Mean": np.add}[op]
        y = ins[0]
        for v in ins[1:]:
            y = f(y, v)
        return [y / len(ins) if op == "Mean" else y]
    if op == "LayerNormalization":
        ax = a.get("axis", -1) % x.ndim
        axes = tuple(range(ax, x.ndim))
        mu = np.mean(x, axis=axes, keepdims=True)
        var = np.mean((x - mu) ** 2, axis=axes, keepdims=True)
        y = (x - mu) / np.sqrt(var + a.get("epsilon", 1e-5)) * ins[1]
        return [y + ins[2] if len(ins) > 2 and ins[2] is not None else y]
    if op == "Size":
        return [np.array(np.size(x), np.int64)]
    if op == "Softmax":
        return [_softmax(x, a.get("axis", -1))]
    if op == "LogSoftmax":
        return [_logsoftmax(x, a.get("axis", -1))]
    if op == "MatMul":
        return [np.matmul(ins[0], ins[1])]
    if op == "Gemm":
        A = ins[0].T if a.get("transA", 0) else ins[0]
        B = ins[1].T if a.get("transB", 0) else ins[1]
        y = a.get("alpha", 1.0) * (A @ B)
        if len(ins) > 2 and ins[2] is not None:
            y = y + a.get("beta", 1.0) * ins[2]
        return [y]
    if op == "Einsum":
        return [np.einsum(a["equation"].decode() if isinstance(a["equation"], bytes) else a["equation"], *ins)]
    if op == "Transpose":
        return [np.transpose(x, a.get("perm"))]
    if op == "Reshape":
        return [_reshape(x, ins[1])]
    if op == "Flatten":
        ax = a.get("axis", 1) % max(x.ndim, 1)
        return [x.reshape(int(np.prod(x.shape[:ax])), -1)]
    if op == "Squeeze":
        return [np.squeeze(x, axis=_axes(ins[1], x.ndim)) if len(ins) > 1 else np.squeeze(x)]
    if op == "Unsqueeze":
        y = x
        for ax in sorted(int(v) % (x.ndim + len(ins[1])) for v in ins[1]):
            y = np.expand_dims(y, ax)
        return [y]
    if op == "Concat":
        return [np.concatenate(ins, axis=a["axis"])]
    if op == "Split":
        ax = a.get("axis", 0) % x.ndim
        if len(ins) > 1 and ins[1] is not None:
            cuts = np.cumsum(ins[1])[:-1]
        else:
            cuts = [x.shape[ax] // len(node.output) * i for i in range(1, len(node.output))]
        return np.split(x, cuts, axis=ax)
    if op == "Slice":
        return [_slice(x, *[v for v in ins[1:]])]
    if op == "Gather":
        return [np.take(x, ins[1].astype(np.int64), axis=a.get("axis", 0))]
    if op == "Expand":
        return [x * np.ones([int(s) for s in ins[1]])]
    if op == "Tile":
        return [np.tile(x, [int(s) for s in ins[1]])]
    if op == "Where":
        return [np.where(ins[0], ins[1], ins[2])]
    if op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"):
        return [{"Equal": np.equal, "Less": np.less, "Greater": np.greater,
                 "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal}[op](ins[0], ins[1])]
    if op == "Not":
        return [np.logical_not(x)]
    if op in ("And", "Or", "Xor"):
        return [{"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}[op](
            ins[0].astype(bool), ins[1].astype(bool))]
    if op == "Cast":
        return [_cast(x, a["to"])]
    if op == "Constant":
        if "value_float" in a or "value_floats" in a:
            v = a.get("value_float", a.get("value_floats"))
            return [meaning_array(np.asarray(v, np.float32), 1)]
        if "value_int" in a or "value_ints" in a:
            return [np.asarray(a.get("value_int", a.get("value_ints")), np.int64)]
        return [_tensor(a["value"])]
    if op == "ConstantOfShape":
        v = _tensor(a["value"]) if "value" in a else np.zeros(1)
        return [np.full([int(s) for s in x], v.reshape(-1)[0], dtype=v.dtype)]
    if op == "Shape":  # start and end (opset 15) clamp like a slice of the dims
        return [np.array(x.shape[slice(a.get("start", 0), a.get("end"))], np.int64)]
    if op == "Range":
        return [np.arange(ins[0], ins[1], ins[2]).astype(ins[0].dtype)]
    if op == "Trilu":
        k = int(ins[1]) if len(ins) > 1 else 0
        f = np.triu if a.get("upper", 1) else np.tril
        return [f(x, k)]
    if op == "ReduceSum":
        axes = ins[1] if len(ins) > 1 else None
        if (axes is None or len(axes) == 0) and a.get("noop_with_empty_axes", 0):
            return [x]
        return [_reduce(np.sum, x, axes, a.get("keepdims", 1))]
    if op == "ReduceMean":
        axes = ins[1] if len(ins) > 1 else a.get("axes")
        return [_reduce(np.mean, x, axes, a.get("keepdims", 1))]
    if op == "ReduceMax":
        return [_reduce(np.max, x, a.get("axes"), a.get("keepdims", 1))]
    if op == "ReduceSumSquare":
        return [_reduce(np.sum, x * x, a.get("axes"), a.get("keepdims", 1))]
    if op == "CumSum":
        ax = int(np.asarray(ins[1]).reshape(-1)[0]) % x.ndim
        y = np.flip(x, ax) if a.get("reverse", 0) else x
        y = np.cumsum(y, axis=ax)
        if a.get("exclusive", 0):
            y = np.concatenate([np.zeros_like(np.take(y, [0], axis=ax)),
                                np.take(y, np.arange(y.shape[ax] - 1), axis=ax)], axis=ax)
        return [np.flip(y, ax) if a.get("reverse", 0) else y]
    if op in ("GatherElements", "ScatterElements", "Scatter", "ScatterND", "GatherND", "OneHot"):
        return [index_op(op, a, ins)]
    if op in ("TopK", "ArgMax", "ArgMin"):
        return select_op(op, a, ins)
    raise InputError("node %s: unsupported op %s" % (node.name, op))


def _tensor(t):
    arr = numpy_helper.to_array(t)
    if arr.dtype.kind == "f":
        return meaning_array(arr, t.data_type)  # the contract's value, not the binary one
    if arr.dtype.kind == "b":
        return arr
    return arr.astype(np.int64)


# ---- one graph ------------------------------------------------------------------------------------
def eval_node(node, ins, exact):
    """run_op, with values that depend on constants only also carried exactly (exact_const)."""
    outs = run_op(node, ins)
    if exact is None or len(node.output) != 1:
        return outs
    y = None
    if node.op_type == "Constant" and "value" in _attrs(node):
        t = _attrs(node)["value"]
        y = exact_const.from_tensor(numpy_helper.to_array(t), t.data_type)
    elif node.op_type == "Constant" and "value_float" in _attrs(node):
        y = exact_const.from_tensor(np.float32(_attrs(node)["value_float"]), 1)
    elif node.input and all(i in exact for i in node.input if i):
        y = exact_const.fold(node.op_type, [exact[i] for i in node.input if i], _attrs(node))
    if y is not None and np.shape(y) == np.shape(outs[0]):
        exact[node.output[0]] = y
        return [exact_const.to_float(y)]
    return outs


def exact_initializers(model, symbolic=()):
    """Exact values of the small float initializers that are constants (not bound)."""
    out = {}
    for t in model.graph.initializer:
        if t.name not in symbolic:
            y = exact_const.from_tensor(numpy_helper.to_array(t), t.data_type)
            if y is not None:
                out[t.name] = y
    return out


def run_graph(model, feeds, exact=None):
    """Single-device evaluation (no communication ops)."""
    env = dict(feeds)
    exact = dict(exact) if exact is not None else None
    for node in model.graph.node:
        try:
            outs = eval_node(node, [env[i] if i else None for i in node.input], exact)
        except (ValueError, IndexError, FloatingPointError) as e:
            raise InputError("node %s: %s" % (node.name, e))
        for n, v in zip(node.output, outs):
            env[n] = v
    return {o.name: env[o.name] for o in model.graph.output}


def initializers(model):
    return {t.name: _tensor(t) for t in model.graph.initializer}


# ---- the plan -------------------------------------------------------------------------------------
class Plan:
    def __init__(self, shards_dir):
        self.dir = shards_dir
        path = os.path.join(shards_dir, "plan.json")
        self.json = None
        if os.path.exists(path):
            with open(path) as f:
                self.json = json.load(f)
        j = self.json or {}
        known = {"format", "world_size", "mesh", "ranks", "programs", "bindings"}
        if set(j) - known:
            raise InputError("plan.json: unknown keys %s" % sorted(set(j) - known))
        mesh = j.get("mesh")
        self.axes = mesh["axes"] if mesh else []
        self.shape = mesh["shape"] if mesh else []
        files = {}
        if "programs" in j:
            self.world = j["world_size"]
            for prog in j["programs"]:
                for r in self.select(prog["ranks"]):
                    if r in files:
                        raise InputError("rank %d runs two programs" % r)
                    files[r] = prog["file"]
        elif "ranks" in j:
            self.world = j["world_size"]
            files = {int(k): v for k, v in j["ranks"].items()}
        else:
            n = 0
            while os.path.exists(os.path.join(shards_dir, "rank%d.onnx" % n)):
                n += 1
            self.world = j.get("world_size", n)
            files = {r: "rank%d.onnx" % r for r in range(self.world)}
        if sorted(files) != list(range(self.world)):
            raise InputError("ranks %s do not cover world size %d" % (sorted(files), self.world))
        cache = {}
        self.models = {}
        for r, f in files.items():
            if f not in cache:
                cache[f] = onnx.load(os.path.join(shards_dir, f))
            self.models[r] = cache[f]
        self.bindings = []  # (rank, binding dict)
        for b in j.get("bindings", []):
            for r in self.binding_ranks(b):
                self.bindings.append((r, b))
        seen_meta = set()
        for r in range(self.world):
            f = files[r]
            for p in self.models[r].metadata_props:
                if p.key == "onnx_tv.bindings":
                    if "programs" in j and f in seen_meta:
                        pass
                    for b in json.loads(p.value):
                        self.bindings.append((r, b))
            seen_meta.add(f)

    # mesh helpers
    def coords(self, rank):
        out, r = {}, rank
        for a, n in reversed(list(zip(self.axes, self.shape))):
            out[a] = r % n
            r //= n
        return out

    def rank_of(self, c):
        r = 0
        for a, n in zip(self.axes, self.shape):
            r = r * n + c[a]
        return r

    def select(self, sel):
        if isinstance(sel, list):
            return [int(x) for x in sel]
        return [r for r in range(self.world) if all(self.coords(r)[a] == v for a, v in sel.items())]

    def binding_ranks(self, b):
        if "rank" in b:
            return [b["rank"]]
        return self.select(b["ranks"])

    def group(self, rank, node, a):
        if node.domain == "com.microsoft":
            return list(range(self.world))
        if "group" in a:
            return [int(x) for x in a["group"]]
        axes = [s.decode() if isinstance(s, bytes) else s for s in a["group_axes"]]
        me = self.coords(rank)
        members = [r for r in range(self.world)
                   if all(self.coords(r)[x] == me[x] for x in self.axes if x not in axes)]
        return sorted(members, key=lambda r: tuple(self.coords(r)[x] for x in axes))

    def peer(self, rank, a):
        if "peer" in a:
            return int(a["peer"])
        c = self.coords(rank)
        ax = a["peer_axis"].decode() if isinstance(a["peer_axis"], bytes) else a["peer_axis"]
        c[ax] += int(a["peer_offset"])
        if not 0 <= c[ax] < self.shape[self.axes.index(ax)]:
            raise InputError("rank %d: peer leaves the mesh" % rank)
        return self.rank_of(c)

    def region(self, rank, b, spec_shape):
        """[(start, end)] per spec dim, and the partial-set key (None for a replica)."""
        sl = [[0, n] for n in spec_shape]
        partial = None
        if "placements" in b:
            c = self.coords(rank)
            paxes = []
            for ax, n, p in zip(self.axes, self.shape, b["placements"]):
                if p.startswith("Shard("):
                    d = int(p[6:-1]) % len(spec_shape)
                    size = (sl[d][1] - sl[d][0]) // n
                    sl[d] = [sl[d][0] + c[ax] * size, sl[d][0] + (c[ax] + 1) * size]
                elif p.startswith("Partial"):
                    paxes.append(ax)
                elif p != "Replicate()":
                    raise InputError("bad placement %s" % p)
            if paxes:
                key = json.dumps({k: v for k, v in b.items() if k not in ("rank",)}, sort_keys=True)
                partial = ("placements", key, tuple(c[x] for x in self.axes if x not in paxes))
        elif "slice" in b:
            for d, s in enumerate(b["slice"]):
                if s is not None:
                    sl[d] = [s[0], s[1]]
        if "local_slice" in b:
            for d, s in enumerate(b["local_slice"]):
                if s is not None:
                    sl[d] = [sl[d][0] + s[0], sl[d][0] + s[1]]
        if b.get("partial"):
            partial = ("explicit", b["spec"], json.dumps(sl), b.get("group", ""))
        return sl, partial


# ---- random spec inputs ---------------------------------------------------------------------------
def _is_onehot(name):
    n = name.lower()
    return "label" in n or "token" in n


MOVERS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Cast"}
INT_TYPES = {onnx.TensorProto.INT64, onnx.TensorProto.INT32}


def integer_input_ranges(spec):
    """The range of each integer and bool graph input (plan-format section 1): bool {0, 1}; an
    integer input that indexes a Gather, GatherElements, ScatterElements or ScatterND (the rows
    of its data) or a OneHot (its depth), directly or through ops that only move it, [0, n)."""
    kinds = {i.name: i.type.tensor_type.elem_type for i in spec.graph.input}
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in spec.graph.input}
    for t in spec.graph.initializer:
        shapes[t.name] = list(t.dims)
    out = {n: (0, 2) for n, k in kinds.items() if k == onnx.TensorProto.BOOL}
    origin = {n: n for n, k in kinds.items() if k in INT_TYPES}
    consts, shape_of = {}, {}  # one-element constants; Shape outputs of static shapes
    for t in spec.graph.initializer:
        if int(np.prod(t.dims or [1])) == 1:
            consts[t.name] = float(numpy_helper.to_array(t).reshape(-1)[0])
    for n in spec.graph.node:
        if n.op_type in MOVERS and n.input and n.input[0] in origin:
            origin[n.output[0]] = origin[n.input[0]]
        elif n.op_type in ("Gather", "GatherElements", "ScatterElements") and len(n.input) > 1 \
                and n.input[1] in origin:
            axis = next((a.i for a in n.attribute if a.name == "axis"), 0)
            data = shapes.get(n.input[0])
            if data:
                size = data[axis]
                name = origin[n.input[1]]
                out[name] = (0, min(size, out.get(name, (0, size))[1]))
        elif n.op_type == "OneHot" and n.input and n.input[0] in origin and n.input[1] in consts:
            size = int(consts[n.input[1]])
            name = origin[n.input[0]]
            out[name] = (0, min(size, out.get(name, (0, size))[1]))
        if n.op_type == "Constant":
            v = next((a.t for a in n.attribute if a.name == "value"), None)
            if v is not None and np.prod(v.dims or [1]) == 1:
                consts[n.output[0]] = float(numpy_helper.to_array(v).reshape(-1)[0])
        if n.op_type == "ConstantOfShape" and n.input and n.input[0] in shape_of:
            shapes[n.output[0]] = shape_of[n.input[0]]
        if n.op_type == "Shape" and n.input and n.input[0] in shapes:
            shape_of[n.output[0]] = shapes[n.input[0]]
        if n.op_type == "ScatterND" and len(n.input) > 1 and n.input[1] in origin:
            data = shapes.get(n.input[0])
            if data:
                name = origin[n.input[1]]
                out[name] = (0, min(data[0], out.get(name, (0, data[0]))[1]))
    return out


def random_spec_inputs(spec, bound_inits, rng):
    """Symbolic spec values: graph inputs and bound initializers. Labels and tokens are one-hot
    (the cross-entropy closed forms assume rows that sum to one); integer inputs with a range
    are uniform in it; the rest is normal(0, 1)."""
    out = {}
    ranges = integer_input_ranges(spec)
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in spec.graph.input}
    for t in spec.graph.initializer:
        if t.name in bound_inits:
            shapes[t.name] = list(t.dims)
    for name, shape in shapes.items():
        if name in ranges and name not in bound_inits:
            lo, hi = ranges[name]
            out[name] = rng.randint(lo, hi, size=shape).astype(np.int64)
            continue
        if _is_onehot(name):
            v = np.zeros(shape)
            idx = rng.randint(0, shape[-1], size=shape[:-1])
            np.put_along_axis(v, idx[..., None], 1.0, axis=-1)
        elif name in bound_inits:
            t = next(t for t in spec.graph.initializer if t.name == name)
            v = _tensor(t) + 0.1 * rng.standard_normal(shape)
        else:
            v = rng.standard_normal(shape) * (1.0 / math.sqrt(shape[0]) if len(shape) == 2 else 1.0)
            if len(shape) == 1:
                v = 1.0 + 0.2 * v
        out[name] = v
    return out


# ---- running all ranks ----------------------------------------------------------------------------
COLLECTIVES = {"AllReduce", "AllGather", "ReduceScatter", "AllToAll", "Broadcast"}


def _collective(op, a, xs, n):
    """Outputs of one collective instance for the members in group order."""
    red = a.get("reduce", b"sum")
    red = red.decode() if isinstance(red, bytes) else red
    if op == "AllReduce" or op == "ReduceScatter":
        f = {"sum": np.sum, "max": np.max, "min": np.min}[red]
        y = f(np.stack(xs), axis=0)
        if op == "AllReduce":
            return [y.copy() for _ in xs]
        return np.split(y, n, axis=a["axis"] % y.ndim)
    if op == "AllGather":
        y = np.concatenate(xs, axis=a["axis"] % xs[0].ndim)
        return [y.copy() for _ in xs]
    if op == "Broadcast":
        return [xs[a["root"]].copy() for _ in xs]
    if op == "AllToAll":
        if "split_axis" not in a:
            flat = [np.split(x.reshape(-1), n) for x in xs]
            return [np.concatenate([flat[i][j] for i in range(n)]).reshape(xs[j].shape) for j in range(n)]
        parts = [np.split(x, n, axis=a["split_axis"]) for x in xs]
        return [np.concatenate([parts[i][j] for i in range(n)], axis=a["concat_axis"]) for j in range(n)]
    raise InputError(op)


def run_ranks(plan, rank_feeds, exacts=None):
    """Dataflow execution of every rank; collectives fire when all members are ready, a Recv when
    its Send has run. Returns {rank: {value: array}}."""
    W = plan.world
    envs = {r: dict(rank_feeds[r]) for r in range(W)}
    exacts = exacts or {r: None for r in range(W)}
    pending = {r: list(plan.models[r].graph.node) for r in range(W)}
    inst_of, members = {}, {}
    for r in range(W):
        count = {}
        sends = {}
        for node in plan.models[r].graph.node:
            if node.domain in ("onnx_tv", "com.microsoft") and node.op_type in COLLECTIVES:
                a = _attrs(node)
                grp = plan.group(r, node, a)
                if r not in grp:
                    raise InputError("rank %d: %s not in its group %s" % (r, node.name, grp))
                if "key" in a:
                    iid = ("key", a["key"])
                else:
                    k = (node.op_type, tuple(grp))
                    count[k] = count.get(k, 0) + 1
                    iid = k + (count[k],)
                inst_of[(r, node.name)] = iid
                members.setdefault(iid, {})[r] = (node, grp)
            elif node.op_type in ("Send", "Recv") and node.domain == "onnx_tv":
                a = _attrs(node)
                peer = plan.peer(r, a)
                src, dst = (r, peer) if node.op_type == "Send" else (peer, r)
                k = (node.op_type, src, dst, a.get("tag", 0))
                sends[k] = sends.get(k, 0) + 1
                inst_of[(r, node.name)] = ("p2p", src, dst, a.get("tag", 0), sends[k])
    for iid, mem in members.items():
        grp = next(iter(mem.values()))[1]
        if sorted(mem) != sorted(grp):
            raise InputError("collective %s has no partner on ranks %s" %
                             (next(iter(mem.values()))[0].name, sorted(set(grp) - set(mem))))
    ready, mailbox = {}, {}
    while any(pending.values()):
        progress = False
        for r in range(W):
            rest = []
            for node in pending[r]:
                env = envs[r]
                if not all((not i) or i in env for i in node.input):
                    rest.append(node)
                    continue
                ins = [env[i] if i else None for i in node.input]
                iid = inst_of.get((r, node.name))
                if node.op_type == "Send" and iid:
                    mailbox[iid] = ins[0]
                    if node.output and node.output[0]:
                        env[node.output[0]] = np.zeros(0)
                elif node.op_type == "Recv" and iid:
                    if iid not in mailbox:
                        rest.append(node)
                        continue
                    env[node.output[0]] = mailbox.pop(iid)
                elif iid:
                    ready.setdefault(iid, {})[r] = ins[0]
                    rest.append(node)
                    continue
                else:
                    try:
                        outs = eval_node(node, ins, exacts[r])
                    except (ValueError, IndexError, FloatingPointError) as e:
                        raise InputError("rank %d node %s: %s" % (r, node.name, e))
                    for n, v in zip(node.output, outs):
                        env[n] = v
                progress = True
            pending[r] = rest
        for iid, got in list(ready.items()):
            mem = members[iid]
            if len(got) == len(mem) and got is not None:
                node0, grp = next(iter(mem.values()))
                xs = [got[m] for m in grp]
                outs = _collective(node0.op_type, _attrs(node0), xs, len(grp))
                for m, y in zip(grp, outs):
                    node = mem[m][0]
                    envs[m][node.output[0]] = y
                    pending[m] = [n for n in pending[m] if n.name != node.name]
                del ready[iid]
                members[iid] = {}
                progress = True
        if not progress:
            stuck = {r: pending[r][0].name for r in range(W) if pending[r]}
            raise InputError("the ranks cannot progress (deadlock or missing Send): %s" % stuck)
    return envs


def _check_declared(model, values, where):
    """Declared static output shapes must be the computed ones."""
    for o in model.graph.output:
        dims = o.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            want = tuple(d.dim_value for d in dims)
            if tuple(np.shape(values[o.name])) != want:
                raise InputError("%s output %s: declared %s, computed %s" % (
                    where, o.name, want, np.shape(values[o.name])))


# ---- the check ------------------------------------------------------------------------------------
def _worse(a, b):
    """max that keeps a NaN (Python's max(0.0, nan) is 0.0: it hid NaN errors)."""
    return float("nan") if math.isnan(a) or math.isnan(b) else max(a, b)


def check(spec_path, shards_dir, seed=0, abs_floor=0.0, fixed=None, unsorted_order="sorted"):
    """abs_floor: the smallest scale differences are measured against. An output that is 0 over
    the reals (x - mean(x), summed) comes out as rounding noise near 1e-17, and relative to its
    own largest entry that noise is an error of 1; with inputs of size 1, a floor of 1e-6 reads
    it as agreement and still sees any real difference above 1e-11. fixed: spec inputs set to
    one value everywhere instead of random ones ({"Wr": 0.0}: every score tied). unsorted_order:
    the order TopK with sorted=0 gives ("sorted" or "reversed"; ONNX leaves it to the runtime)."""
    numeric_index.UNSORTED_ORDER = unsorted_order
    try:
        return _check(spec_path, shards_dir, seed, abs_floor, fixed)
    finally:
        numeric_index.UNSORTED_ORDER = "sorted"


def _check(spec_path, shards_dir, seed, abs_floor, fixed):
    t0 = time.time()
    spec = onnx.load(spec_path)
    plan = Plan(shards_dir)
    spec_inits = initializers(spec)
    out_shapes = {}
    bound_inits = {b["spec"] for _, b in plan.bindings if b["spec"] in spec_inits}
    rng = np.random.RandomState(seed)
    sym = random_spec_inputs(spec, bound_inits, rng)
    for name, value in (fixed or {}).items():
        sym[name] = np.full_like(sym[name], value)
    t1 = time.time()
    spec_env = dict(spec_inits)
    spec_env.update(sym)
    spec_out = run_graph(spec, spec_env, exact_initializers(spec, bound_inits))
    t_spec = time.time() - t1
    spec_vals = dict(spec_env)
    spec_vals.update(spec_out)

    # rank inputs from bindings
    feeds = {r: initializers(plan.models[r]) for r in range(plan.world)}
    in_names = {r: {i.name for i in plan.models[r].graph.input} | set(feeds[r]) for r in range(plan.world)}
    out_names = {r: {o.name for o in plan.models[r].graph.output} for r in range(plan.world)}
    in_partials, checks = {}, []
    for r, b in plan.bindings:
        name, sname = b["value"], b["spec"]
        if sname not in spec_vals:
            raise InputError("binding of rank %d value %s: no spec value %s" % (r, name, sname))
        sv = spec_vals[sname]
        sl, partial = plan.region(r, b, list(np.shape(sv)))
        region = sv[tuple(slice(a, e) for a, e in sl)]
        if name in in_names[r] and name not in out_names[r]:
            if sname in spec_out:
                raise InputError("rank %d input %s bound to spec output %s" % (r, name, sname))
            if partial:
                in_partials.setdefault(partial, []).append((r, name, region))
            else:
                feeds[r][name] = region
        elif name in out_names[r]:
            checks.append((r, name, sname, sl, partial))
        else:
            raise InputError("rank %d has no value %s" % (r, name))
    for key, items in sorted(in_partials.items(), key=lambda kv: str(kv[0])):
        total = items[0][2]
        acc = np.zeros_like(total)
        for r, name, _ in items[:-1]:
            v = rng.standard_normal(total.shape)
            feeds[r][name] = v
            acc = acc + v
        feeds[items[-1][0]][items[-1][1]] = total - acc
    for r in range(plan.world):
        for i in plan.models[r].graph.input:
            if i.name not in feeds[r]:
                raise InputError("rank %d input %s is not bound" % (r, i.name))
    t2 = time.time()
    bound_rank = {(r, b["value"]) for r, b in plan.bindings}
    exacts = {r: exact_initializers(plan.models[r], {v for q, v in bound_rank if q == r})
              for r in range(plan.world)}
    envs = run_ranks(plan, feeds, exacts)
    t_plan = time.time() - t2

    _check_declared(spec, spec_out, "spec")
    for r in range(plan.world):
        _check_declared(plan.models[r], envs[r], "rank %d" % r)

    # compare
    errs, covered, partial_sets = {}, {}, {}
    for o in spec.graph.output:
        covered[o.name] = np.zeros(np.shape(spec_out[o.name]), bool)
        errs[o.name] = 0.0

    def rel(v, ref):
        """Largest difference relative to the largest finite reference value. Equal entries
        (infinities of one sign included) differ by 0; a NaN on either side, or an infinity
        against anything else, is an infinite error (a NaN must never compare as agreement)."""
        if v.shape != ref.shape:
            return float("inf")
        if not ref.size:
            return 0.0
        fin = np.isfinite(ref)
        scale = max(float(np.max(np.abs(ref[fin]))) if fin.any() else 0.0, abs_floor, 1e-300)
        same = v == ref
        if np.any(~same & ~(np.isfinite(v) & fin)):
            return float("inf")
        d = np.where(same, 0.0, np.abs(np.where(same, 0.0, v) - np.where(same, 0.0, ref)))
        return float(np.max(d)) / scale

    for r, name, sname, sl, partial in checks:
        if sname not in spec_out:
            raise InputError("rank %d output %s bound to %s, not a spec output" % (r, name, sname))
        idx = tuple(slice(a, e) for a, e in sl)
        ref = spec_out[sname][idx]
        v = envs[r][name]
        if partial:
            partial_sets.setdefault(partial, (sname, idx, ref, []))[3].append(v)
        else:
            errs[sname] = _worse(errs[sname], rel(np.asarray(v, np.float64), ref))
            covered[sname][idx] = True
    for key, (sname, idx, ref, vs) in partial_sets.items():
        total = np.sum(np.stack([np.asarray(v, np.float64) for v in vs]), axis=0) if \
            all(np.shape(v) == ref.shape for v in vs) else None
        errs[sname] = _worse(errs[sname], float("inf") if total is None else rel(total, ref))
        covered[sname][idx] = True
    missing = [n for n, c in covered.items() if not c.all()]
    if missing:
        raise InputError("spec outputs not fully covered by bindings: %s" % missing)
    return dict(errors=errs, agree=all(e <= TOL for e in errs.values()), t_spec=t_spec,
                t_plan=t_plan, t_total=time.time() - t0, world=plan.world)


def finite_difference_check(spec_path, seed=0, h=1e-5, directions=2):
    """d loss along random directions vs <grad_p, direction>, for every gradient output."""
    spec = onnx.load(spec_path)
    rng = np.random.RandomState(seed)
    inits = initializers(spec)
    names = [o.name[5:] for o in spec.graph.output if o.name.startswith("grad_")]
    sym = random_spec_inputs(spec, set(names) & set(inits), rng)
    base = dict(inits)
    base.update(sym)
    out = run_graph(spec, base)
    worst = {}
    for p in names:
        for _ in range(directions):
            d = rng.standard_normal(np.shape(base[p]))
            plus, minus = dict(base), dict(base)
            plus[p] = base[p] + h * d
            minus[p] = base[p] - h * d
            fd = (run_graph(spec, plus)["loss"] - run_graph(spec, minus)["loss"]) / (2 * h)
            an = float(np.sum(out["grad_" + p] * d))
            err = abs(fd - an) / max(abs(an), abs(fd), 1e-12)
            worst[p] = max(worst.get(p, 0.0), err)
    return worst
