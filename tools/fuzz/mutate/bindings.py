"""Damaged bindings, wherever they are written: corrupt_binding spoils one binding (slices,
ranks, value and spec names, placements, ...) of plan.json (see plan_json) or of the
onnx_tv.bindings metadata of a model, which onnx_metadata also breaks as a whole (not JSON,
given twice, emptied, removed)."""
import copy
import json

from .cases import Skip
from .hostile import HUGE_INTS, dump_json, hostile_json
from .onnx_edit import load_model, onnx_mutation

PLACEMENTS = ["Shard(0)", "Shard(1)", "Shard(2)", "Shard(9)", "Shard(-1)", "Replicate()",
              "Partial()", "Partial(sum)", "Partial(max)", "Partial", "Shard()", "Shard(x)",
              "Bogus()", "", "shard(0)", "Shard(99999999999999999999)"]


def bad_region(rng, region):
    """A slice or local_slice spoiled: bounds swapped, past the end, negative, empty, of the
    wrong form, or of the wrong length."""
    region = list(region) if isinstance(region, list) else []
    how = rng.choice(["swap", "past_end", "negative", "empty", "form", "length", "huge"])
    ranges = [k for k, r in enumerate(region) if isinstance(r, list) and len(r) == 2]
    if how == "length":
        region = region + [None] if rng.random() < 0.5 or not region else region[:-1]
    elif how == "form":
        k = rng.randrange(len(region)) if region else 0
        bad = rng.choice([[1], [0, 1, 2], "0:2", 3, [None, 2], [0.5, 1], {}])
        region = region[:k] + [bad] + region[k + 1:]
    elif ranges:
        k = rng.choice(ranges)
        lo, hi = region[k]
        region[k] = {"swap": [hi, lo], "past_end": [lo, (hi if isinstance(hi, int) else 0) + 1],
                     "negative": [-1, hi], "empty": [lo, lo],
                     "huge": [lo, rng.choice(HUGE_INTS)]}[how]
    else:  # no bounds yet: a region that cannot fit any small tensor
        k = rng.randrange(len(region)) if region else 0
        region = region[:k] + [[0, rng.choice([1 << 31, 1 << 62, 100000])]] + region[k + 1:]
    return region, how


def corrupt_binding(rng, b, world, names):
    """One binding (a dict) damaged in place; returns what was done. `names` holds other spec
    and rank value names of the case, for plausible but wrong references."""
    how = rng.choice(["del_key", "slice", "slice", "rank", "ranks", "value", "spec", "partial",
                      "group", "range", "local_slice", "placements", "unknown_key", "hostile",
                      "retarget_rank", "swap_names"])
    if how == "del_key":
        if not b:
            raise Skip()
        k = rng.choice(sorted(b))
        del b[k]
        return "key %r deleted" % k
    if how in ("slice", "local_slice"):
        b[how], sub = bad_region(rng, b.get(how, []))
        return "%s %s -> %s" % (how, sub, json.dumps(b[how])[:80])
    if how == "rank":
        b["rank"] = rng.choice([world, world + 1, -1, 1 << 31, 1 << 62, "0", 1.5, None, [0]])
        return "rank -> %r" % b["rank"]
    if how == "retarget_rank":
        b["rank"] = rng.randrange(world)
        b.pop("ranks", None)
        return "rank -> %d (valid, another rank)" % b["rank"]
    if how == "ranks":
        b["ranks"] = rng.choice([{"zz": 0}, {"dp": 9}, {"pp": -1}, [0, 0], [], [world], {},
                                 {"tp": [0, 0]}, {"dp": "0"}, list(range(world))])
        return "ranks -> %r" % b["ranks"]
    if how == "value":
        b["value"] = rng.choice(["no_such_value", ""] + names)
        return "value -> %r" % b["value"]
    if how == "spec":
        b["spec"] = rng.choice(["no_such_spec", ""] + names)
        return "spec -> %r" % b["spec"]
    if how == "partial":
        b["partial"] = rng.choice(["max", "", "sum", 1, True, None, "Sum"])
        return "partial -> %r" % b["partial"]
    if how == "group":
        b["group"] = rng.choice([5, "", "g", None, ["g"]])
        return "group -> %r" % b["group"]
    if how == "range":
        b["range"] = rng.choice([[0, 0], [-5, 1 << 40], [5, 1], "x", [0], [0, 1 << 62],
                                 [-(1 << 62), 0], [0, 2]])
        return "range -> %r" % b["range"]
    if how == "placements":
        pl = b.get("placements")
        if not isinstance(pl, list) or not pl:
            pl = ["Shard(0)"]
        else:
            pl = list(pl)
            sub = rng.random()
            if sub < 0.6:
                pl[rng.randrange(len(pl))] = rng.choice(PLACEMENTS)
            elif sub < 0.8:
                pl.append(rng.choice(PLACEMENTS))
            else:
                pl.pop()
        b["placements"] = pl
        return "placements -> %r" % pl
    if how == "unknown_key":
        k = rng.choice(["slcie", "Rank", "partial_sum", "comment", ""])
        b[k] = 1
        return "unknown key %r added" % k
    if how == "swap_names":
        b["value"], b["spec"] = b.get("spec"), b.get("value")
        return "value and spec swapped"
    if not b:
        raise Skip()
    k = rng.choice(sorted(b))
    b[k] = hostile_json(rng)
    return "%r -> %s" % (k, str(b[k])[:40])


def case_names(case):
    """Names of graph inputs and outputs of the spec and one program, for bindings that name a
    real value of the wrong kind or size."""
    names = []
    for path in [case.spec] + case.programs()[:1]:
        try:
            g = load_model(path).graph
            names += [v.name for v in g.input] + [v.name for v in g.output]
        except Skip:  # damaged by an earlier mutation
            pass
    return names[:200]


@onnx_mutation
def onnx_metadata(rng, m, case):
    props = [p for p in m.metadata_props if p.key == "onnx_tv.bindings"]
    how = rng.choice(["binding", "binding", "binding", "not_json", "object", "empty",
                      "remove", "twice", "drop_one", "dup_one", "add"])
    if how == "add" or not props:
        p = m.metadata_props.add()
        p.key = "onnx_tv.bindings"
        p.value = rng.choice(["[]", "[{}]", '[{"value": "x", "spec": "x"}]', "null", "{"])
        return "metadata bindings added: %s" % p.value
    p = rng.choice(props)
    if how == "remove":
        m.metadata_props.remove(p)
        return "metadata bindings removed"
    if how == "twice":
        q = m.metadata_props.add()
        q.CopyFrom(p)
        return "metadata bindings key given twice"
    if how == "not_json":
        p.value = rng.choice([p.value[:len(p.value) // 2], "not json", "", "\xff", "[" * 100000])
        return "metadata bindings not JSON (%d chars)" % len(p.value)
    if how == "object":
        p.value = rng.choice(['{"value": "x"}', "1", '"x"', "null", "[1, 2]", "[[]]"])
        return "metadata bindings -> %s" % p.value
    if how == "empty":
        p.value = "[]"
        return "metadata bindings emptied"
    try:
        bs = json.loads(p.value)
    except Exception:
        raise Skip()
    if not isinstance(bs, list) or not bs or not all(isinstance(b, dict) for b in bs):
        raise Skip()
    k = rng.randrange(len(bs))
    if how == "drop_one":
        what = "binding of %r dropped" % bs.pop(k).get("value")
    elif how == "dup_one":
        bs.append(copy.deepcopy(bs[k]))
        what = "binding of %r duplicated" % bs[k].get("value")
    else:
        names = [v.name for v in m.graph.input] + [v.name for v in m.graph.output]
        what = "binding %d (%r): %s" % (k, bs[k].get("value"),
                                       corrupt_binding(rng, bs[k], case.world(), names))
    p.value = dump_json(bs)
    return "metadata " + what
