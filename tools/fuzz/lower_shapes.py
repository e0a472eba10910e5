"""Writes the shape-op steps of gen_shapes.py (mixed into lower.Side)."""
from . import recipe as R

INT_MAX = 2 ** 63 - 1  # torch exports open-ended slices with this end


class ShapeLowering:
    def dim_of(self, x, d):
        """Shape(x)[d] as a 1-element int64 tensor (the torch-style chain)."""
        g = self.g
        return g.node("Gather", [g.node("Shape", [x]), g.ints([d])], axis=0)

    def st_rope(self, st):
        (x,) = self.ins(st)
        g = self.g
        rows = R.size(self.rec, st["dims"][0])
        plan = self.rank is not None
        sharded = plan and self.lay[st["ins"][0]] == "S0"
        start = self.chunk_start(rows) if sharded and st.get("bug") != "rope_offset" else 0
        if st["pos_form"] == "shape" or not plan:
            n_rows = g.node("Squeeze", [self.dim_of(x, 0), g.ints([0])])
            limit = g.node("Add", [n_rows, g.ints(start)]) if start else n_rows
            pos = g.node("Range", [g.ints(start), limit, g.ints(1)])
        else:
            local = rows // self.n if sharded else rows
            pos = g.node("Range", [g.ints(start), g.ints(start + local), g.ints(1)])
        if st.get("bug") == "clamp_positions" and plan:
            lim = g.ints(rows - 2)
            pos = g.node("Where", [g.node("Less", [pos, lim]), pos, lim])
        ang = g.node("Unsqueeze", [g.node("Mul", [g.node("Cast", [pos], to=11), g.const(st["freq"])]),
                                   g.ints([1])])
        cols = R.size(self.rec, st["dims"][1])
        x1, x2 = g.node("Split", [x, g.ints([cols // 2, cols // 2])], n_out=2, axis=1)
        if plan and st.get("bug") == "rope_halves":
            rot = g.node("Concat", [x2, g.node("Neg", [x1])], axis=1)
        else:
            rot = g.node("Concat", [g.node("Neg", [x2]), x1], axis=1)
        y = g.node("Add", [g.node("Mul", [x, g.node("Cos", [ang])]),
                           g.node("Mul", [rot, g.node("Sin", [ang])])])
        self.set(st, y)

    def st_roll(self, st):
        (x,) = self.ins(st)
        g, d = self.g, st["axis"]
        size = R.size(self.rec, st["dims"][d])
        s = st["shift"]
        if self.rank is not None and st.get("bug") == "roll_off":
            s = (s + 1) % size
        if s == 0:
            self.set(st, g.node("Identity", [x]))
            return
        head = g.node("Slice", [x, g.ints([s]), g.ints([INT_MAX]), g.ints([d])])
        tail = g.node("Slice", [x, g.ints([0]), g.ints([s]), g.ints([d])])
        self.set(st, g.node("Concat", [head, tail], axis=d))

    def st_heads(self, st):
        (x,) = self.ins(st)
        g = self.g
        heads = self.n
        if self.rank is not None and self.lay[st["ins"][0]] == "S1":
            heads = 1  # a column shard holds one head
        grouped = [g.ints([heads]), g.ints([-1])]
        if self.rank is not None and st.get("bug") == "heads_interleaved":
            grouped.reverse()
        target = g.node("Concat", [self.dim_of(x, 0)] + grouped, axis=0)
        y = g.node("Softmax", [g.node("Reshape", [x, target])], axis=-1)
        self.set(st, g.node("Reshape", [y, g.node("Shape", [x])]))

    def st_where(self, st):
        (x,) = self.ins(st)
        g = self.g
        lay = self.lay[st["ins"][0]] if self.rank is not None else "R"
        pos = []
        for d in range(2):
            start = 0
            if lay == "S%d" % d and st.get("bug") != "mask_offset":
                start = self.chunk_start(R.size(self.rec, st["dims"][d]))
            n = g.node("Squeeze", [self.dim_of(x, d), g.ints([0])])
            pos.append(g.node("Range", [g.ints(start), g.node("Add", [n, g.ints(start)]), g.ints(1)]))
        rows = g.node("Unsqueeze", [pos[0], g.ints([1])])
        if st["cmp"] == "Less":
            rows = g.node("Add", [rows, g.ints(1)])
        cond = g.node(st["cmp"], [g.node("Unsqueeze", [pos[1], g.ints([0])]), rows])
        self.set(st, g.node("Where", [cond, x, g.node("Mul", [x, g.const(0.1)])]))
