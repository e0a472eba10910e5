"""Writing plans in the plan format: one file per rank, or one program per group of identical
ranks (plan-format section 4), with bindings in plan.json, in model metadata, or both."""
import json
import os

from .comm import Mesh
from .graph import save
from .plan import Program, region

FORMAT = "onnx-tv.plan/1"


def dump_json(obj, path):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


def placements(place, axes):
    out = []
    for a in axes:
        d = place.get(a)
        out.append("Replicate()" if d is None else "Partial()" if d == "P" else "Shard(%d)" % d)
    return out


def spec_shapes(spec_model):
    from onnx import numpy_helper  # noqa: F401  (shapes only)
    out = {}
    for v in list(spec_model.graph.input) + list(spec_model.graph.output):
        out[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    for t in spec_model.graph.initializer:
        out[t.name] = list(t.dims)
    return out


def explicit(b, coords, sizes, shape, axes, use_placements):
    """A binding of one rank, in the explicit form (slice/partial/group) or with placements."""
    out = {"value": b["value"], "spec": b["spec"]}
    partial = [a for a, d in b["place"].items() if d == "P"]
    if use_placements and not partial:
        out["placements"] = placements(b["place"], axes)
        if b["local"]:
            out["local_slice"] = b["local"]
        return out
    sl = region(b["place"], coords, sizes, shape, b["local"])
    if any([a, e] != [0, n] for (a, e), n in zip(sl, shape)):
        out["slice"] = [None if [a, e] == [0, n] else [a, e] for (a, e), n in zip(sl, shape)]
    if partial:
        out["partial"] = "sum"
        grp = ".".join("%s%d" % (a, coords[a]) for a in axes if a not in partial)
        if grp:
            out["group"] = grp
    return out


def build_ranks(m, plan, generic=False):
    return [Program(m, plan, r, generic).build() for r in range(plan.world)]


def plan_header(plan):
    head = {"format": FORMAT, "world_size": plan.world}
    if plan.axes:
        head["mesh"] = {"axes": [a for a, _ in plan.axes], "shape": [n for _, n in plan.axes]}
    return head


def rank_bindings(progs, plan, shapes):
    axes = [a for a, _ in plan.axes]
    sizes = dict(plan.axes)
    out = {}
    for p in progs:
        out[p.rank] = [explicit(b, p.coords, sizes, shapes[b["spec"]], axes, plan.placements)
                       for b in p.bindings]
    return out


def write_per_rank(outdir, plan, models, bindings, input_names=None):
    """models: {rank: ModelProto}; bindings: {rank: [binding without rank]}.
    plan.bindings: "json" all in plan.json, "meta" all in metadata (no plan.json), "mixed" rank
    inputs in metadata and outputs in plan.json."""
    os.makedirs(outdir, exist_ok=True)
    head = plan_header(plan)
    head["bindings"] = []
    for r in sorted(models):
        mod = models[r]
        ins = {i.name for i in mod.graph.input} | {t.name for t in mod.graph.initializer}
        meta, js = [], []
        for b in bindings[r]:
            if plan.bindings == "meta" or (plan.bindings == "mixed" and b["value"] in ins):
                meta.append(b)
            else:
                js.append(dict(b, rank=r))
        del mod.metadata_props[:]
        if meta:
            p = mod.metadata_props.add()
            p.key, p.value = "onnx_tv.bindings", json.dumps(meta, sort_keys=True)
        head["bindings"] += js
        save(mod, os.path.join(outdir, "rank%d.onnx" % r))
    if plan.bindings != "meta":
        dump_json(head, os.path.join(outdir, "plan.json"))


def selector(ranks, mesh):
    """A mesh selector for a set of ranks if one describes it exactly, else the list."""
    cs = [mesh.coords(r) for r in ranks]
    fixed = {a: cs[0][a] for a in mesh.axes if all(c[a] == cs[0][a] for c in cs)}
    match = [r for r in range(mesh.size) if all(mesh.coords(r)[a] == v for a, v in fixed.items())]
    return fixed if match == sorted(ranks) else sorted(ranks)


def write_spmd(outdir, m, plan, representatives=None):
    """One program per group of identical ranks. Programs are built rank-generic (group_axes,
    peer_axis); ranks whose programs are byte-identical share one file. `representatives`
    ({rank: [ranks it stands for]}) skips building every rank, for the real sizes."""
    os.makedirs(outdir, exist_ok=True)
    mesh = Mesh(plan.axes)
    axes = mesh.axes
    reps = representatives or {r: [r] for r in range(plan.world)}
    groups = {}  # bytes -> (program, ranks)
    for r, stands_for in sorted(reps.items()):
        prog = Program(m, plan, r, generic=True).build()
        prog.g.name = "program"
        data = prog.g.model().SerializeToString()
        if data in groups:
            groups[data][1].extend(stands_for)
        else:
            groups[data] = (prog, list(stands_for), data)
    head = plan_header(plan)
    head["programs"], merged = [], {}
    for k, (prog, ranks, data) in enumerate(groups.values()):
        sel = selector(ranks, mesh)
        if isinstance(sel, dict) and list(sel) == ["pp"]:
            fname = "stage%d.onnx" % sel["pp"]
        elif isinstance(sel, dict) and not sel:
            fname = "program.onnx"
        else:
            fname = "program%d.onnx" % k
        with open(os.path.join(outdir, fname), "wb") as f:
            f.write(data)
        head["programs"].append({"file": fname, "ranks": sel})
        for b in prog.bindings:
            key = json.dumps([b["value"], b["spec"], placements(b["place"], axes), b["local"]])
            merged.setdefault(key, []).extend(ranks)
    head["bindings"] = []
    for key, ranks in merged.items():
        value, spec, pl, local = json.loads(key)
        b = {"ranks": selector(ranks, mesh), "value": value, "spec": spec, "placements": pl}
        if local:
            b["local_slice"] = local
        head["bindings"].append(b)
    dump_json(head, os.path.join(outdir, "plan.json"))
    return head
