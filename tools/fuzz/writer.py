"""A recipe on disk: spec.onnx and shards/ (plan.json, one program or one file per rank)."""
import json
import os

from . import families, lower
from .onnxb import save, start_case


def write_case(rec, folder):
    if families.of(rec):
        return families.of(rec).write(rec, folder)
    shards = start_case(folder, lower.lower_side(rec, None).g.model())
    n = rec["n"]
    plan = {"format": "onnx-tv.plan/1", "world_size": n}
    if rec["spmd"]:
        side = lower.lower_side(rec, 0)
        save(side.g.model(), os.path.join(shards, "program.onnx"))
        plan["mesh"] = {"axes": ["tp"], "shape": [n]}
        plan["programs"] = [{"file": "program.onnx", "ranks": {}}]
        plan["bindings"] = side.bindings
    else:
        plan["bindings"] = []
        for r in range(n):
            side = lower.lower_side(rec, r)
            save(side.g.model(), os.path.join(shards, "rank%d.onnx" % r))
            plan["bindings"] += side.bindings
    with open(os.path.join(shards, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1, sort_keys=True)
    return folder
