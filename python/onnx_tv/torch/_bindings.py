"""How a rank's tensor relates to the full one, found from their values, in DTensor's words.

The exporter fills the full model's parameters and the full inputs with distinct random values
before the user's code cuts them into rank pieces, so a piece's first element occurs once in the
full tensor and gives the piece's offset; the piece is then compared element for element. This
only finds what the user's code did to build the rank's tensors: it is the plan's declaration,
which the proof then checks; a piece that is not a block of the full tensor, or that sits at two
places, is an error that asks for an explicit placement.
"""
import itertools

import torch


class BindingError(ValueError):
    pass


def block_of(full, piece):
    """[(start, end)] per dimension of the block of `full` that `piece` equals, or None."""
    if piece.dim() != full.dim() or any(p > f for p, f in zip(piece.shape, full.shape)):
        return None
    if piece.numel() == 0:
        return None
    first = piece.reshape(-1)[0]
    hits = (full == first).nonzero()
    found = []
    for hit in hits.tolist():
        region = [(s, s + n) for s, n in zip(hit, piece.shape)]
        if any(e > f for (_, e), f in zip(region, full.shape)):
            continue
        block = full[tuple(slice(s, e) for s, e in region)]
        if torch.equal(block, piece):
            found.append(region)
    if len(found) > 1:
        raise BindingError("found at %d places (its values repeat)" % len(found))
    return found[0] if found else None


def placements_for(region, full_shape, mesh, rank):
    """Every list of DTensor placements (one per mesh axis) that gives `region` on `rank`."""
    coords = mesh.coords(rank)
    choices = []  # per cut dimension: the runs of mesh axes that cut it into that many chunks
    for d, ((s, e), n) in enumerate(zip(region, full_shape)):
        if (s, e) == (0, n):
            continue
        chunks = n // (e - s) if (e - s) and n % (e - s) == 0 else 0
        runs = _axis_runs(mesh, chunks)
        if not runs:
            return []
        choices.append([(d, run) for run in runs])
    found = []
    for pick in itertools.product(*choices):
        out = ["Replicate()"] * len(mesh.axes)
        clash = False
        for d, run in pick:
            for a in run:
                clash |= out[a] != "Replicate()"
                out[a] = "Shard(%d)" % d
        if not clash and _gives(out, full_shape, mesh, coords, region):
            found.append(out)
    return found


def _axis_runs(mesh, chunks):
    """Runs of consecutive mesh axes, in order, whose sizes multiply to `chunks`."""
    runs = []
    for i in range(len(mesh.shape)):
        p = 1
        for j in range(i, len(mesh.shape)):
            p *= mesh.shape[j]
            if p == chunks:
                runs.append(list(range(i, j + 1)))
            if p >= chunks:
                break
    return runs


def _gives(placements, full_shape, mesh, coords, region):
    try:
        return region_of_placements(placements, full_shape, mesh, coords) == \
            [tuple(r) for r in region]
    except ValueError:  # a dim these placements cannot split evenly
        return False


def region_of_placements(placements, full_shape, mesh, coords):
    """[(start, end)] per dim that DTensor placements give the rank at mesh `coords` (several
    axes on one dim split it in mesh order)."""
    region = [(0, n) for n in full_shape]
    for a, pl in enumerate(placements):
        if pl.startswith("Shard("):
            d = int(pl[6:-1])
            s, e = region[d]
            if (e - s) % mesh.shape[a]:
                raise ValueError("dim %d of size %d does not split into %d over '%s'"
                                 % (d, e - s, mesh.shape[a], mesh.axes[a]))
            size = (e - s) // mesh.shape[a]
            region[d] = (s + coords[a] * size, s + (coords[a] + 1) * size)
    return region


def region_of_piece(kind, value, full, piece, rank):
    """The block of the full tensor that rank `rank`'s `value` holds, or a BindingError."""
    try:
        region = block_of(full, piece)
    except BindingError as e:
        raise BindingError("rank %d's %s '%s' %s in the full tensor: give its placement" %
                           (rank, kind, value, e)) from None
    if region is None:
        raise BindingError(
            "rank %d's %s '%s' (shape %s) is not a block of the full one (shape %s): give its "
            "placement" % (rank, kind, value, list(piece.shape), list(full.shape)))
    return [tuple(r) for r in region]


def bindings_for_value(value, spec, full_shape, regions, mesh):
    """Bindings of `value` on the ranks of `regions` (rank -> region): one set of placements
    for all of them where one exists, else each rank's own placements, else its slice."""
    per_rank = {r: placements_for(reg, full_shape, mesh, r) for r, reg in regions.items()}
    common = None
    for options in per_rank.values():
        keys = {tuple(o) for o in options}
        common = keys if common is None else common & keys
    if common:
        best = min(common, key=lambda pl: (sum(p != "Replicate()" for p in pl), pl))
        return [{"ranks": sorted(regions), "value": value, "spec": spec, "placements": list(best)}]
    out = []
    for r, reg in sorted(regions.items()):
        b = {"rank": r, "value": value, "spec": spec}
        if per_rank[r]:
            b["placements"] = per_rank[r][0]
        else:
            b["slice"] = [None if (s, e) == (0, n) else [s, e]
                          for (s, e), n in zip(reg, full_shape)]
        out.append(b)
    return out


def check_given(b, kind, full, piece, mesh, rank):
    """A placement or slice the user gave must say what the rank's tensor holds: the proof
    would otherwise be about another plan than the one that runs."""
    if any(str(p).startswith("Partial") for p in b.get("placements", [])) or "partial" in b:
        return  # addends: nothing to compare with
    if "placements" in b:
        region = region_of_placements(list(b["placements"]), list(full.shape), mesh, mesh.coords(rank))
    elif "slice" in b:
        region = [(0, n) if r is None else tuple(r) for r, n in zip(b["slice"], full.shape)]
    else:
        return  # a partial or other form: nothing to compare with
    block = full[tuple(slice(s, e) for s, e in region)]
    if block.shape != piece.shape or not torch.equal(block, piece):
        raise BindingError("rank %d's %s '%s' is not what its given placement says (%s): its "
                           "values differ from that block of the full tensor" %
                           (rank, kind, b["value"], b.get("placements", b.get("slice"))))
