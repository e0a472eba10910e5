"""Writes a recipe as ONNX: the spec, and each rank's program with its bindings."""
import numpy as np

from . import recipe as R
from .lower_shapes import ShapeLowering
from .onnxb import Builder

# a*ln(2) - b*ln(3): +1.012e-11 and -9.572e-11 (convergents of log2(3)); long double gets neither
# sign right. K scales them to about +-1, so the difference is plain in a float64 run.
NEAR_ZERO = {True: (10439860591, 6586818670, 1e11), False: (9809721694, 6189245291, 1e10)}


def table_values(rec, st):
    shp = R.shape(rec, st["dims"])
    rng = np.random.RandomState(sum(map(ord, st["out"])) + rec["seed"])
    if st["fill"] == "ones":
        return np.ones(shp)
    if st["fill"] == "rand":
        return rng.uniform(0.5, 1.5, shp)
    # periodic along every dimension with the period of one rank's chunk: all shards are equal
    per = [max(s // rec["n"], 1) if d != "1" else 1 for s, d in zip(shp, st["dims"])]
    base = rng.uniform(0.5, 1.5, per)
    return np.tile(base, [s // p for s, p in zip(shp, per)])


class Side(ShapeLowering):
    """One program: the spec (rank None) or the program of rank r."""

    def __init__(self, rec, rank):
        self.rec, self.rank, self.n = rec, rank, rec["n"]
        self.g = Builder("spec" if rank is None else "rank")
        self.cur, self.lay = {}, {}
        self.bindings = []

    @property
    def spmd(self):
        return self.rec["spmd"]

    def group(self, reverse=False):
        if self.spmd:
            return dict(group_axes=["tp"])
        grp = list(range(self.n))
        return dict(group=grp[::-1] if reverse else grp)

    def comm(self, op, x, **attrs):
        attrs.update(self.group(attrs.pop("reverse", False)))
        return self.g.node(op, [x], domain="onnx_tv", **attrs)

    def bind(self, value, spec, lay, dims):
        b = dict(value=value, spec=spec)
        if self.spmd:
            b["ranks"] = {}
            b["placements"] = [{"R": "Replicate()", "P": "Partial()"}.get(lay, "Shard(%s)" % lay[1:])]
        else:
            b["rank"] = self.rank
            if lay == "P":
                b["partial"] = "sum"
            elif lay in ("S0", "S1"):
                d = int(lay[1])
                c = R.size(self.rec, dims[d]) // self.n
                b["slice"] = [None] * len(dims)
                b["slice"][d] = [self.rank * c, (self.rank + 1) * c]
        self.bindings.append(b)

    def local(self, dims, lay):
        return R.local_shape(self.rec, dims, lay) if self.rank is not None else R.shape(self.rec, dims)

    def chunk_start(self, d_size, bug=False):
        r = (self.rank + 1) % self.n if bug else self.rank
        return r * (d_size // self.n)

    # ---- steps ---------------------------------------------------------------------------------
    def run(self, st):
        getattr(self, "st_" + st["k"])(st)

    def set(self, st, name):
        self.cur[st["out"]] = name
        self.lay[st["out"]] = st["lay"] if self.rank is not None else "R"

    def ins(self, st):
        return [self.cur[v] for v in st["ins"]]

    def st_input(self, st):
        v = st["out"]
        lay = st["lay"] if self.rank is not None else "R"
        self.g.input(v, self.local(st["dims"], lay))
        if self.rank is not None:
            self.bind(v, v, lay, st["dims"])
        self.cur[v], self.lay[v] = v, lay

    def st_table(self, st):
        vals = table_values(self.rec, st)
        if self.rank is not None and st["lay"] in ("S0", "S1"):
            d = int(st["lay"][1])
            c = vals.shape[d] // self.n
            vals = np.take(vals, range(self.rank * c, (self.rank + 1) * c), axis=d)
        self.set(st, self.g.const(vals, st["dtype"]))

    def st_unary(self, st):
        (x,) = self.ins(st)
        if st.get("form") == "trans_max":
            a, b, k = NEAR_ZERO[st.get("bug") == "trans_max"]
            g = self.g
            e = g.node("Sub", [g.node("Mul", [g.const(a), g.node("Log", [g.const(2.0)])]),
                               g.node("Mul", [g.const(b), g.node("Log", [g.const(3.0)])])])
            if st.get("tvar") == "abs":  # spec relu(x) * K*(-E), plan relu(x) * K*|E|
                ke = g.node("Mul", [g.const(k), e if self.rank is not None else g.node("Neg", [e])])
                if self.rank is not None:
                    ke = g.node("Abs", [ke])
                self.set(st, g.node("Mul", [g.node("Relu", [x]), ke]))
                return
            if self.rank is not None:  # plan max(x, K*E, 0) for the spec's relu(x)
                self.set(st, g.node("Max", [x, g.node("Mul", [g.const(k), e]), g.const(0.0)]))
                return
        self.set(st, self.g.node(st["op"], [x]))

    def st_binary(self, st):
        x, y = self.ins(st)
        if st["op"] == "Div":  # a divisor kept away from zero: y*y + 1
            y = self.g.node("Add", [self.g.node("Mul", [y, y]), self.g.const(1.0)])
        if st.get("form") == "scaled_replica" and self.rank is not None:
            c = 1.0 / self.n
            if st.get("bug") == "bias_per_rank":
                c = 1.0 if self.n == 2 else 0.5
            y = self.g.node("Mul", [y, self.g.const(c, st["dtype"])])
        self.set(st, self.g.node(st["op"], [x, y]))

    def st_matmul(self, st):
        x, w = self.ins(st)
        self.set(st, self.g.node("Gemm" if st["gemm"] else "MatMul", [x, w]))

    def mean_of(self, x, axis, form, dtype, count, mask_src):
        g = self.g
        axes = g.ints([axis])
        if form == "op":
            return g.node("ReduceMean", [x], axes=[axis], keepdims=1)
        if form == "lit":
            return g.node("Mul", [g.node("ReduceSum", [x, axes], keepdims=1), g.const(1.0 / count, dtype)])
        ones = g.node("ConstantOfShape", [g.node("Shape", [x])],
                      value=_double_one()) if mask_src == "shape" else None
        if ones is None:
            ones = g.const(np.ones(self.shape_of(x)), dtype)
        num = g.node("ReduceSum", [g.node("Mul", [x, ones]), axes], keepdims=1)
        return g.node("Div", [num, g.node("ReduceSum", [ones, axes], keepdims=1)])

    def shape_of(self, name):
        return self.shapes[name]

    def st_reduce(self, st):
        (x,) = self.ins(st)
        g, axis = self.g, st["axis"]
        full = R.shape(self.rec, self.src_dims(st))[axis]
        if self.rank is None:
            form, dtype, lay = st["spec_form"], st["spec_dtype"], "R"
        else:
            form, dtype, lay = st["plan_form"], st["dtype"], self.lay[st["ins"][0]]
        sharded = lay == "S%d" % axis
        count = full // self.n if sharded else full
        bug = st.get("bug") if self.rank is not None else None
        if st["scale"] == "mean" or bug == "mask_for_half":
            if bug == "wrong_scale":  # one element off (never a count of 0: 1/0 is no scale)
                form, count = "lit", count - 1 if count > 1 else count + 1
            if bug == "mask_for_half":
                form = "mask"
            y = self.mean_of(x, axis, form, dtype, count, st.get("mask_src", "shape"))
            if sharded:
                y = g.node("Mul", [y, g.const(1.0 / self.n, dtype)])
        else:
            y = g.node("ReduceSum", [x, g.ints([axis])], keepdims=1)
            if st["scale"] == "half":
                y = g.node("Mul", [y, g.const(0.5, dtype)])
        self.set(st, y)

    def src_dims(self, st):
        return self.dims[st["ins"][0]]

    def st_norm(self, st):
        ins = self.ins(st)
        if st["op"] == "Softmax":
            self.set(st, self.g.node("Softmax", ins[:1], axis=1))
        else:
            self.set(st, self.g.node("LayerNormalization", ins, axis=-1, epsilon=1e-5))

    def st_transpose(self, st):
        self.set(st, self.g.node("Transpose", self.ins(st), perm=[1, 0]))

    def st_positions(self, st):
        (x,) = self.ins(st)
        g = self.g
        rows = R.size(self.rec, st["dims"][0])
        lo, hi = 0, rows
        if self.rank is not None and self.lay[st["ins"][0]] == "S0":
            lo, hi = self.chunk_start(rows), self.chunk_start(rows) + rows // self.n
        pos = g.node("Range", [g.ints(lo), g.ints(hi), g.ints(1)])
        if st.get("bug") == "clamp_positions" and self.rank is not None:
            lim = g.ints(rows - 2)
            pos = g.node("Where", [g.node("Less", [pos, lim]), pos, lim])
        ang = g.node("Mul", [g.node("Cast", [pos], to=11), g.const(st["freq"])])
        col = g.node("Unsqueeze", [g.node("Cos", [ang]), g.ints([1])])
        self.set(st, g.node("Mul", [x, col]))

    def st_redist(self, st):
        v, how, bug, g = st["v"], st["how"], st.get("bug"), self.g
        if self.rank is None:
            return
        x, dims = self.cur[v], self.dims[v]
        if how == "AllReduce":
            y = x if bug == "missing_collective" else self.comm(
                "AllReduce", x, reduce="max" if bug == "wrong_collective" else "sum")
            if "then_broadcast" in st:
                y = self.comm("Broadcast", y, root=st["then_broadcast"])
        elif how == "gather_sum":
            y = x if bug == "missing_collective" else self.gather_sum(x, dims)
            if bug == "count_poly":  # + y*(n-2)*(n-3): zero at 2 and 3 ranks only
                cnt = self.gather_sum(g.const(np.ones((1, 1))), ("1", "1"))
                p = g.node("Mul", [g.node("Sub", [cnt, g.const(2.0)]), g.node("Sub", [cnt, g.const(3.0)])])
                y = g.node("Add", [y, g.node("Mul", [y, p])])
        elif how == "ReduceScatter":
            y = self.comm("ReduceScatter", x, axis=int(st["to"][1]), reduce="sum")
        elif how == "AllGather":
            y = self.comm("AllGather", x, axis=int(st["frm"][1]), reverse=bug == "swapped_pieces")
        elif how == "AllToAll":
            y = self.comm("AllToAll", x, split_axis=int(st["to"][1]), concat_axis=int(st["frm"][1]))
        elif how == "slice":
            d = int(st["to"][1])
            full = R.size(self.rec, dims[d])
            s = self.chunk_start(full, bug == "wrong_offset")
            y = g.node("Slice", [x, g.ints([s]), g.ints([s + full // self.n]), g.ints([d])])
        self.cur[v], self.lay[v] = y, st["to"]

    def gather_sum(self, x, dims):
        """A sum over ranks written as AllGather then ReduceSum (as a global mean over gathered
        partial sums is written)."""
        g = self.g
        shp = R.shape(self.rec, dims)
        flat = g.node("Reshape", [x, g.ints([1, int(np.prod(shp))])])
        gat = self.comm("AllGather", flat, axis=0)
        tot = g.node("ReduceSum", [gat, g.ints([0])], keepdims=1)
        return g.node("Reshape", [tot, g.ints(shp)])


def _double_one():
    from onnx import helper, TensorProto
    return helper.make_tensor("one", TensorProto.DOUBLE, [1], [1.0])


def lower_side(rec, rank):
    s = Side(rec, rank)
    s.dims = {}
    for st in rec["steps"]:
        if st["k"] != "redist":
            s.dims[st["out"]] = tuple(st["dims"])
    s.shapes = _Shapes(s)
    for st in rec["steps"]:
        s.run(st)
    for v in rec["outputs"]:
        dims = s.dims[v]
        if rank is None:
            s.g.output(s.cur[v], R.shape(rec, dims), as_name=v)
        else:
            name = "out_" + v
            s.g.output(s.cur[v], R.local_shape(rec, dims, s.lay[v]), as_name=name)
            s.bind(name, v, s.lay[v], dims)
    return s


class _Shapes:
    """Local shapes of plan values (the mask's all-ones initializer needs them)."""

    def __init__(self, side):
        self.side = side

    def __getitem__(self, name):
        s = self.side
        for v, cur in s.cur.items():
            if cur == name:
                return R.local_shape(s.rec, s.dims[v], s.lay[v]) if s.rank is not None \
                    else R.shape(s.rec, s.dims[v])
        raise KeyError(name)
