"""Steps of gen.py's programs that move data by shape ops: Split, Concat, Slice, Reshape, Where and
Shape->Range chains, as exporters write RoPE, rolls, attention heads and masks.

  rope   y = x cos(p f) + rotate_half(x) sin(p f), p = Range(0, Shape(x)[0]) the row positions,
         rotate_half by Split and Concat along the columns
  roll   y = Concat(Slice(x, s:), Slice(x, :s)) along one dimension
  heads  Reshape(x, [rows, H, -1]) with H = n heads (a column shard holds one), Softmax within
         each head, Reshape back by Shape(x)
  where  Where(col <= row, x, x * 0.1), a causal mask from the Ranges of Shape(x)'s two sizes (a
         comparison of symbolic values is UNKNOWN today: the condition is made of positions)
Plans compute them locally where the layout allows it (a shard adds its offset to the
positions), so each is a step over layouts like the others.
"""
from . import recipe as R

SHAPE_BUGS = ["rope_offset", "rope_halves", "roll_off", "heads_interleaved", "mask_offset"]


class ShapeSteps:
    """Mixed into gen.Gen."""

    def not_spmd_shard(self, lay):
        return not (self.rec["spmd"] and lay == "S0")

    def rope(self, x):
        dx, lx, _ = self.vals[x]
        if R.size(self.rec, dx[1]) % 2 or dx[1] == "1":
            return None  # rotate-half needs two equal halves of the columns
        self.want(x, ["R"] + (["S0"] if not self.rec["spmd"] else []))
        lx = self.vals[x][1]
        st = dict(k="rope", ins=[x], out=self.name("rope"), freq=self.rng.choice([0.5, 0.01]),
                  pos_form=self.rng.choice(["shape", "literal"]))
        if lx == "S0":
            st["bug"] = self.maybe_bug("rope_offset", "rope_halves", "clamp_positions")
        else:
            st["bug"] = self.maybe_bug("rope_halves")
        return self.add(st, dx, lx)

    def roll(self, x):
        dx, lx, pos = self.vals[x]
        axes = [i for i in range(2) if R.size(self.rec, dx[i]) >= 2]
        if not axes:
            return None
        d = self.rng.choice(axes)
        other = "S%d" % (1 - d)
        self.want(x, ["R"] + ([other] if dx[1 - d] != "1" else []))
        st = dict(k="roll", ins=[x], out=self.name("roll"), axis=d, shift=1)
        st["bug"] = self.maybe_bug("roll_off")
        return self.add(st, dx, self.vals[x][1], pos)

    def heads(self, x):
        dx, lx, _ = self.vals[x]
        if dx[1] == "1":
            return None
        self.want(x, ["R", "S0", "S1"])
        st = dict(k="heads", ins=[x], out=self.name("heads"))
        st["bug"] = self.maybe_bug("heads_interleaved")
        return self.add(st, dx, self.vals[x][1], True)

    def where(self, x):
        dx, lx, pos = self.vals[x]
        self.want(x, ["R"] + ([] if self.rec["spmd"] else ["S0", "S1"]))
        # col < row + 1 mostly: LessOrEqual is UNKNOWN today (a gap kept in sight, not hammered)
        st = dict(k="where", ins=[x], out=self.name("where"),
                  cmp="LessOrEqual" if self.rng.random() < 0.1 else "Less")
        if self.vals[x][1] != "R":
            st["bug"] = self.maybe_bug("mask_offset")
        return self.add(st, dx, self.vals[x][1], pos)

    def shape_step(self, x):
        return self.rng.choice([self.rope, self.roll, self.heads, self.where])(x)
