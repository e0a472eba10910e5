"""Random recipes (recipe.py): a small spec program and a plan for it, with at most one bug.

Every step is drawn with the plan's layout rules in mind, so the plan is right unless a step
carries a bug. The draws lean towards the shapes that the prover's shortcuts act on: dimensions
cut into 2 to 4 pieces, 4 ranks in SPMD programs (fewer ranks), large reduced dimensions with
low-precision constants, counts computed from constants, periodic tables, position clamps,
transcendental constants that nearly cancel.
"""
import random
from fractions import Fraction

from onnx import numpy_helper

from zoo.float_meaning import meaning

from . import families
from . import recipe as R
from .gen_shapes import SHAPE_BUGS, ShapeSteps
from .onnxb import CONST_TYPES, tensor

UNARY = ["Exp", "Tanh", "Sigmoid", "Relu", "Neg", "Abs"]
BINARY = ["Add", "Sub", "Mul", "Div"]
DTYPES = ["float16", "bfloat16", "float32", "float64"]
# bugs a step may carry; lower.py says what each does
BUGS = ["missing_collective", "wrong_scale", "wrong_offset", "swapped_pieces", "bias_per_rank",
        "count_poly", "mask_for_half", "clamp_positions", "trans_max", "wrong_collective"] + SHAPE_BUGS


def denoting_type(dtype, count):
    """`dtype`, or float32 where a constant 1/count written in `dtype` does not stand for 1/count
    (plan-format section 1: bfloat16(1/1536) is its binary value 171/262144, so a mean written
    with it is a different plan, off by 0.2%, which the float64 run can miss)."""
    written = float(numpy_helper.to_array(tensor("c", 1.0 / count, dtype)))
    if meaning(written, CONST_TYPES[dtype]) == Fraction(1, count):
        return dtype
    return "float32"


class Gen(ShapeSteps):
    def __init__(self, seed):
        self.rng = random.Random(seed)
        r = self.rng
        n = r.choice([2, 3, 4, 4])
        spmd = r.random() < 0.5
        dims = {d: r.choice([1, 2, 2, 4]) for d in "abc"}
        if r.random() < 0.25:  # a long dimension: low-precision means over it, position clamps
            dims["a"] = r.choice([4096, 8192, 512]) // n if n != 3 else 1536 // 3
        self.rec = dict(n=n, spmd=spmd, dims=dims, steps=[], outputs=[], bug=None, seed=seed)
        self.vals = {}  # name -> [dims, layout, positive]
        self.bug_rate = 0.5 if r.random() < 0.6 else 0.0
        self.count = 0

    # ---- helpers -------------------------------------------------------------------------------
    def name(self, base):
        self.count += 1
        return "%s%d" % (base, self.count)

    def maybe_bug(self, *choices):
        """At most one bug per recipe; each opportunity takes one with probability bug_rate/3."""
        if self.rec["bug"] or self.rng.random() > self.bug_rate / 3:
            return None
        b = self.rng.choice(choices)
        self.rec["bug"] = b
        return b

    def add(self, st, dims, lay, pos=False):
        st.update(dims=list(dims), lay=lay)
        self.rec["steps"].append(st)
        self.vals[st["out"]] = [tuple(dims), lay, pos]
        return st["out"]

    def lay_options(self, dims):
        opts = ["R"]
        opts += ["S%d" % i for i, d in enumerate(dims) if d != "1"]
        return opts

    def redist(self, v, to, how=None):
        """Plan-only: bring v to layout `to` with a collective or a local slice."""
        dims, lay, pos = self.vals[v]
        if lay == to:
            return
        n, r = self.rec["n"], self.rng
        st = dict(k="redist", v=v, to=to, frm=lay)
        if lay == "P" and to == "R":
            st["how"] = how or r.choice(["AllReduce", "AllReduce", "gather_sum"])
            st["bug"] = self.maybe_bug("missing_collective", "count_poly") if st["how"] == "gather_sum" \
                else self.maybe_bug("missing_collective", "wrong_collective")
        elif lay == "P":
            st["how"] = "ReduceScatter"
        elif to == "R":
            st["how"] = "AllGather"
            st["bug"] = self.maybe_bug("swapped_pieces") if not self.rec["spmd"] else None
        elif to == "P":
            raise ValueError("no layout goes to P by a redistribution")
        elif lay == "R":
            if self.rec["spmd"]:  # a rank-dependent slice is not one program: gather instead
                raise ValueError("R to S needs per-rank programs")
            st["how"] = "slice"
            st["bug"] = self.maybe_bug("wrong_offset")
        else:
            st["how"] = "AllToAll"
        if st["how"] == "AllReduce" and r.random() < 0.15:
            st["then_broadcast"] = r.randrange(n)  # a Broadcast of a replicated value: identity
        self.rec["steps"].append(st)
        self.vals[v][1] = to

    def want(self, v, allowed):
        """Redistributes v to one of the allowed layouts (a random one reachable)."""
        dims, lay, _ = self.vals[v]
        allowed = [a for a in allowed if a in ("R", "P") or dims[int(a[1])] != "1"]
        if lay in allowed:
            return
        opts = [a for a in allowed if a != "P" and not (lay == "R" and self.rec["spmd"])]
        if lay == "R" and not self.rec["spmd"]:
            opts = [a for a in allowed if a != "P"]
        if not opts:
            raise ValueError("unreachable layout")
        self.redist(v, self.rng.choice(opts))

    def pick(self, pred=lambda v: True):
        c = [v for v, (d, l, p) in self.vals.items() if len(d) == 2 and pred(v)]
        return self.rng.choice(c) if c else None

    # ---- steps ---------------------------------------------------------------------------------
    def input(self, dims, lay=None, pos=False):
        r = self.rng
        lay = lay or r.choice(self.lay_options(dims) + (["P"] if r.random() < 0.2 else []))
        return self.add(dict(k="input", out=self.name("x"), pos=pos), dims, lay, pos)

    def table(self, dims):
        r = self.rng
        fill = r.choice(["rand", "ones", "periodic", "periodic"])
        lay = r.choice(self.lay_options(dims))
        if self.rec["spmd"] and lay != "R" and fill == "rand":
            fill = "periodic"  # one program holds one table: its shards must be equal
        st = dict(k="table", out=self.name("t"), fill=fill, dtype=r.choice(DTYPES), pos=fill != "rand")
        return self.add(st, dims, lay, fill != "rand")

    def unary(self, x):
        op = self.rng.choice(UNARY)
        if op != "Neg":
            self.want(x, ["R", "S0", "S1"])
        _, lay, pos = self.vals[x]
        st = dict(k="unary", op=op, ins=[x], out=self.name("u"))
        if op == "Relu" and self.rng.random() < 0.5:
            st["form"] = "trans_max"  # plan: Max(x, K*E, 0) with E a nearly cancelling constant
            st["tvar"] = self.rng.choice(["max", "abs"])
            st["bug"] = self.maybe_bug("trans_max") or self.maybe_bug("trans_max")
        return self.add(st, self.vals[x][0], self.vals[x][1], op in ("Exp", "Sigmoid", "Abs", "Relu"))

    def binary(self, x):
        r = self.rng
        dx, lx, _ = self.vals[x]
        op = r.choice(BINARY)
        bdims = r.choice([dx, ("1", dx[1]), (dx[0], "1")])
        y = self.pick(lambda v: self.vals[v][0] == bdims and v != x and (op != "Div" or self.vals[v][2]))
        if y is None:
            y = self.table(bdims) if r.random() < 0.4 else self.input(bdims, pos=op == "Div")
        ly = self.vals[y][1]
        st = dict(k="binary", op=op, ins=[x, y], out=self.name("b"))
        lx = self.vals[x][1]
        if op in ("Add", "Sub") and lx == "P" and ly == "R" and r.random() < 0.6:
            st["form"] = "scaled_replica"  # y/n added on every rank before the sum over ranks
            st["dtype"] = r.choice(DTYPES)
            st["bug"] = self.maybe_bug("bias_per_rank")
            return self.add(st, dx, "P")
        if op in ("Mul", "Div") and lx == "P" and ly == "R" and bdims != dx:
            return self.add(st, dx, "P")
        if lx == "P":
            self.want(x, ["R"] + ["S%d" % i for i in range(2) if dx[i] != "1"])
            lx = self.vals[x][1]
        # y broadcasts along size-1 dims: its layout must match x's on its real dims
        need = [lx] if lx == "R" or bdims[R.shard_dim(lx)] != "1" else ["R"]
        if ly not in need:
            self.want(y, need)
        if self.vals[y][1] not in need:
            self.want(x, ["R"])
            self.want(y, ["R"])
            lx = "R"
        return self.add(st, dx, lx)

    def matmul(self, x):
        r = self.rng
        dx, lx, _ = self.vals[x]
        if dx[1] == "1":
            return None
        k = r.choice([d for d in "abc"])
        w = self.pick(lambda v: self.vals[v][0] == (dx[1], k)) or self.input((dx[1], k))
        if lx == "P":
            self.want(x, ["R", "S0"])
        lx, lw = self.vals[x][1], self.vals[w][1]
        if lw == "P":
            self.want(w, ["R", "S0", "S1"])
            lw = self.vals[w][1]
        combos = {("S1", "S0"): "P", ("S0", "R"): "S0", ("R", "S1"): "S1", ("R", "R"): "R"}
        if (lx, lw) not in combos:
            choice = r.choice(list(combos))
            self.want(x, [choice[0]])
            self.want(w, [choice[1]])
            lx, lw = self.vals[x][1], self.vals[w][1]
            if (lx, lw) not in combos:
                self.want(x, ["R"])
                self.want(w, ["R"])
                lx, lw = "R", "R"
        st = dict(k="matmul", ins=[x, w], out=self.name("m"), gemm=r.random() < 0.3)
        return self.add(st, (dx[0], k), combos[(lx, lw)])

    def reduce(self, x):
        r = self.rng
        dx, lx, pos = self.vals[x]
        axis = r.choice([i for i in range(2) if dx[i] != "1"] or [None])
        if axis is None:
            return None
        if self.rec["dims"]["a"] * self.rec["n"] >= 512 and "a" in dx:
            axis = dx.index("a")  # a long dimension: a mean over it in a low-precision constant
        scale = r.choice(["mean", "mean", "mean", "half", "one"])
        st = dict(k="reduce", ins=[x], out=self.name("r"), axis=axis, scale=scale,
                  spec_form=r.choice(["op", "lit"]), plan_form=r.choice(["op", "lit", "mask"]),
                  dtype=r.choice(DTYPES), spec_dtype=r.choice(DTYPES),
                  mask_src=r.choice(["shape", "init"]))
        if dx[axis] == "a" and self.rec["dims"]["a"] * self.rec["n"] >= 512:
            scale, st["scale"] = "mean", "mean"
            st["spec_form"] = "lit"
            st["spec_dtype"] = r.choice(["float16", "bfloat16"])
        full = R.size(self.rec, dx[axis])
        plan_count = full // self.rec["n"] if lx != "P" and R.shard_dim(lx) == axis else full
        st["spec_dtype"] = denoting_type(st["spec_dtype"], full)
        st["dtype"] = denoting_type(st["dtype"], plan_count)
        if scale == "mean":
            st["bug"] = self.maybe_bug("wrong_scale")
        elif scale == "half":
            st["bug"] = self.maybe_bug("mask_for_half")
        dims = tuple("1" if i == axis else d for i, d in enumerate(dx))
        if lx == "P":
            return self.add(st, dims, "P")
        return self.add(st, dims, "P" if R.shard_dim(lx) == axis else lx, pos)

    def normalise(self, x):
        dx, lx, _ = self.vals[x]
        if dx[1] == "1":
            return None
        self.want(x, ["R", "S0"])
        op = self.rng.choice(["Softmax", "LayerNormalization"])
        st = dict(k="norm", op=op, ins=[x], out=self.name("n"))
        if op == "LayerNormalization":
            st["ins"] += [self.input((dx[1],), "R"), self.input((dx[1],), "R")]
        return self.add(st, dx, self.vals[x][1], op == "Softmax")

    def transpose(self, x):
        dx, lx, pos = self.vals[x]
        lay = {"S0": "S1", "S1": "S0"}.get(lx, lx)
        return self.add(dict(k="transpose", ins=[x], out=self.name("tr")), dx[::-1], lay, pos)

    def positions(self, x):
        """x * cos(pos * f) along rows: a RoPE-like table computed from Range."""
        dx, lx, _ = self.vals[x]
        if self.rec["spmd"] and lx == "S0":
            self.want(x, ["R"])
        if lx == "P":
            self.want(x, ["R"] + (["S0"] if not self.rec["spmd"] else []))
        st = dict(k="positions", ins=[x], out=self.name("p"), freq=self.rng.choice([0.5, 0.01, 1e-3]))
        st["bug"] = self.maybe_bug("clamp_positions")
        return self.add(st, dx, self.vals[x][1])

    def step(self):
        r = self.rng
        x = self.pick()
        kinds = [self.unary, self.binary, self.binary, self.matmul, self.reduce, self.normalise,
                 self.transpose, self.positions, self.shape_step, self.shape_step]
        return r.choice(kinds)(x)

    def finish(self):
        r = self.rng
        computed = {st["out"] for st in self.rec["steps"] if st["k"] not in ("redist", "input", "table")}
        last = self.rec["steps"][-1]
        last = last["v"] if last["k"] == "redist" else last["out"]
        if last not in computed:  # a spec output is computed, never an input or a constant
            st = dict(k="unary", op="Neg", ins=[last], out=self.name("u"))
            last = self.add(st, self.vals[last][0], self.vals[last][1])
            computed.add(last)
        outs = [last]
        other = self.pick(lambda v: v not in outs and v in computed)
        if other and r.random() < 0.4:
            outs.append(other)
        for v in outs:
            dims, lay, _ = self.vals[v]
            if r.random() < 0.4:
                opts = ["R"] + ["S%d" % i for i in range(2) if dims[i] != "1"]
                if not (lay == "R" and self.rec["spmd"]):
                    self.want(v, [r.choice(opts)])
        self.rec["outputs"] = outs


def generate(seed, steps=None):
    fam = families.pick(seed)
    if fam and steps is None:
        return families.FAMILIES[fam].generate(seed)
    g = Gen(seed)
    r = g.rng
    x = g.input(("a", "b"))
    if g.rec["dims"]["a"] * g.rec["n"] >= 512 and r.random() < 0.5:
        g.reduce(x)  # the long dimension is there for a mean over it
    for _ in range(steps or r.randint(1, 5)):
        for _attempt in range(5):
            try:
                if g.step() is not None:
                    break
            except ValueError:
                continue
    g.finish()
    return R.prune(g.rec)
