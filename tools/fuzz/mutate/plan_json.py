"""Mutations of plan.json: keys deleted, values replaced by hostile ones, world_size, bindings,
the mesh, the programs and ranks maps, and a plan.json added where the case had none."""
import copy
import json
import os

from .bindings import case_names, corrupt_binding
from .cases import Skip
from .hostile import dump_json, hostile_json, json_get, json_paths
from .onnx_edit import load_model


def read_plan(case):
    if not os.path.isfile(case.plan):
        raise Skip()
    try:
        with open(case.plan) as f:
            return json.load(f)
    except Exception:
        raise Skip()


def write_plan(case, plan):
    with open(case.plan, "w") as f:
        f.write(dump_json(plan))


def m_plan_del_key(rng, case):
    plan = read_plan(case)
    paths = [p for p, _ in json_paths(plan) if isinstance(p[-1], str)]
    if not paths:
        raise Skip()
    # top-level keys half the time: they are few and each matters
    top = [p for p in paths if len(p) == 1]
    p = rng.choice(top if top and rng.random() < 0.5 else paths)
    del json_get(plan, p[:-1])[p[-1]]
    write_plan(case, plan)
    return "plan.json: deleted %s" % "/".join(map(str, p))


def m_plan_value(rng, case):
    plan = read_plan(case)
    paths = [p for p, _ in json_paths(plan)]
    if not paths:
        raise Skip()
    p = rng.choice(paths)
    v = hostile_json(rng)
    json_get(plan, p[:-1])[p[-1]] = v
    write_plan(case, plan)
    return "plan.json: %s -> %s" % ("/".join(map(str, p)), str(v)[:40])


def m_plan_world(rng, case):
    plan = read_plan(case)
    w = plan.get("world_size", 1) if isinstance(plan.get("world_size"), int) else 1
    plan["world_size"] = rng.choice([w - 1, w + 1, 2 * w, 0, 1, -1, 1 << 31, 1 << 62, 1e300,
                                     str(w), float(w), None, [w]])
    write_plan(case, plan)
    return "plan.json: world_size %r -> %r" % (w, plan["world_size"])


def m_plan_binding(rng, case):
    plan = read_plan(case)
    bs = plan.get("bindings")
    if not isinstance(bs, list) or not bs or not all(isinstance(b, dict) for b in bs):
        raise Skip()
    how = rng.random()
    if how < 0.15:
        # the same binding twice (plan.json and metadata are merged; a repeat is an error)
        b = rng.choice(bs)
        bs.append(copy.deepcopy(b))
        what = "binding of %r duplicated" % b.get("value")
    elif how < 0.25:
        k = rng.randrange(len(bs))
        what = "binding of %r deleted" % bs.pop(k).get("value")
    else:
        k = rng.randrange(len(bs))
        what = "binding %d (%r): %s" % (k, bs[k].get("value"),
                                       corrupt_binding(rng, bs[k], case.world(),
                                                       case_names(case)))
    write_plan(case, plan)
    return "plan.json: " + what


def m_plan_mesh(rng, case):
    plan = read_plan(case)
    mesh = plan.get("mesh")
    if not isinstance(mesh, dict):
        # a mesh added to a plan without one, maybe contradicting world_size
        w = case.world()
        plan["mesh"] = rng.choice([{"axes": ["dp"], "shape": [w]},
                                   {"axes": ["dp"], "shape": [w + 1]},
                                   {"axes": ["dp", "tp"], "shape": [w, 1]},
                                   {"axes": [], "shape": []}])
        write_plan(case, plan)
        return "plan.json: mesh added %s" % json.dumps(plan["mesh"])
    axes, shape = list(mesh.get("axes", [])), list(mesh.get("shape", []))
    how = rng.choice(["shape_elem", "shape_len", "axes_dup", "axes_len", "axes_rename",
                      "shape_product", "remove"])
    if how == "shape_elem" and shape:
        shape[rng.randrange(len(shape))] = rng.choice([0, -1, 1, 3, 1 << 31, 1 << 62, "2", 2.0])
    elif how == "shape_len":
        shape = shape + [1] if rng.random() < 0.5 or not shape else shape[:-1]
    elif how == "axes_dup" and axes:
        axes[-1] = axes[0]
    elif how == "axes_len":
        axes = axes + ["ep"] if rng.random() < 0.5 or not axes else axes[:-1]
    elif how == "axes_rename" and axes:
        axes[rng.randrange(len(axes))] = rng.choice(["", "x", 0, None, "dp dp"])
    elif how == "shape_product" and len(shape) >= 2:
        # the same product, another factorization: every coordinate moves
        shape = [shape[0] * shape[1]] + [1] + shape[2:]
    elif how == "remove":
        del plan["mesh"]
        write_plan(case, plan)
        return "plan.json: mesh removed"
    else:
        raise Skip()
    mesh["axes"], mesh["shape"] = axes, shape
    write_plan(case, plan)
    return "plan.json: mesh %s -> axes %s shape %s" % (how, axes, shape)


def m_plan_programs(rng, case):
    plan = read_plan(case)
    w = case.world()
    key = "programs" if "programs" in plan else "ranks" if "ranks" in plan else None
    if key is None:
        # an explicit rank map added to a plan that had none
        files = [os.path.basename(p) for p in case.programs()] or ["rank0.onnx"]
        plan["ranks"] = {str(r): rng.choice(files) for r in range(w)}
        if rng.random() < 0.5:
            plan["ranks"][rng.choice([str(w), "-1", "x", "0"])] = rng.choice(files + ["none.onnx"])
        write_plan(case, plan)
        return "plan.json: ranks map added %s" % json.dumps(plan["ranks"])[:80]
    if key == "ranks":
        ranks = plan["ranks"] if isinstance(plan["ranks"], dict) else {}
        how = rng.choice(["missing_file", "extra_rank", "drop_rank", "same_file", "abs_path"])
        if how == "missing_file" and ranks:
            ranks[rng.choice(sorted(ranks))] = "none.onnx"
        elif how == "extra_rank":
            ranks[str(rng.choice([w, -1, 1 << 40]))] = "rank0.onnx"
        elif how == "drop_rank" and ranks:
            del ranks[rng.choice(sorted(ranks))]
        elif how == "same_file" and ranks:
            f = ranks[rng.choice(sorted(ranks))]
            for r in ranks:
                ranks[r] = f
        else:
            ranks["0"] = rng.choice(["/dev/null", "../spec.onnx", ".", "plan.json"])
        plan["ranks"] = ranks
        write_plan(case, plan)
        return "plan.json: ranks %s" % how
    progs = plan["programs"]
    if not isinstance(progs, list) or not progs or not all(isinstance(p, dict) for p in progs):
        raise Skip()
    p = rng.choice(progs)
    how = rng.choice(["file", "ranks_overlap", "ranks_bad", "drop", "dup", "ranks_list"])
    if how == "file":
        p["file"] = rng.choice(["none.onnx", "/dev/null", "../spec.onnx", "", ".", "plan.json"])
    elif how == "ranks_overlap":
        p["ranks"] = {}
    elif how == "ranks_bad":
        p["ranks"] = rng.choice([{"zz": 0}, {"pp": 9}, {"pp": -1}, {"pp": "0"}, [w], [-1],
                                 [0, 0], None, {"pp": [0, 1]}])
    elif how == "drop":
        progs.remove(p)
    elif how == "dup":
        progs.append(copy.deepcopy(p))
    else:
        p["ranks"] = list(range(w))
    write_plan(case, plan)
    return "plan.json: programs %s" % how


def m_plan_create(rng, case):
    """A plan.json where the case had none (bindings in metadata): minimal, or repeating the
    metadata bindings (the same binding twice is an error), or contradicting the files."""
    if os.path.exists(case.plan):
        raise Skip()
    w = len(case.programs())
    how = rng.choice(["minimal", "world", "unknown_key", "no_world", "repeat_bindings"])
    plan = {"format": "onnx-tv.plan/1", "world_size": w}
    if how == "world":
        plan["world_size"] = rng.choice([w + 1, max(0, w - 1), 0])
    elif how == "unknown_key":
        plan["wrold_size"] = w
    elif how == "no_world":
        del plan["world_size"]
    elif how == "repeat_bindings":
        plan["bindings"] = []
        for r, path in enumerate(case.programs()):
            try:
                m = load_model(path)
                for p in m.metadata_props:
                    if p.key == "onnx_tv.bindings":
                        for b in json.loads(p.value)[:2]:
                            plan["bindings"].append(dict(b, rank=r))
            except Exception:  # a damaged program: fewer repeated bindings
                pass
    write_plan(case, plan)
    return "plan.json created (%s)" % how
