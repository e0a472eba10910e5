#!/usr/bin/python3
"""Generate the model zoo.

  generate.py --out models/zoo              the small zoo: specs, plans (per rank and per
                                            program group), mutants, index.json, catalogue.jsonl
  generate.py --real 8b|70b|405b --out DIR  a real Llama-3 size: spec and one program per
                                            pipeline stage, graph only, weights as inputs
"""
import argparse
import copy
import dataclasses
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from zoo.comm import Mesh  # noqa: E402
from zoo.config import SMALL_ZOO, real_config  # noqa: E402
from zoo.graph import save  # noqa: E402
from zoo.mutants import CATALOGUE  # noqa: E402
from zoo.plan import build_spec  # noqa: E402
from zoo.writer import (build_ranks, rank_bindings, spec_shapes, write_per_rank,  # noqa: E402
                        write_spmd)


def generate_small(out):
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    index, built = [], {}
    for m, plans in SMALL_ZOO:
        d = os.path.join(out, m.name)
        os.makedirs(d)
        spec = build_spec(m)
        save(spec, os.path.join(d, "spec.onnx"))
        shapes = spec_shapes(spec)
        for p in plans:
            progs = build_ranks(m, p)
            models = {q.rank: q.g.model() for q in progs}
            binds = rank_bindings(progs, p, shapes)
            rel = "%s/plans/%s" % (m.name, p.name)
            write_per_rank(os.path.join(out, rel), p, copy.deepcopy(models), binds)
            write_spmd(os.path.join(out, rel + ".spmd"), m, p)
            for shards in (rel, rel + ".spmd"):
                index.append({"id": shards.replace("/plans/", "/"), "spec": m.name + "/spec.onnx",
                              "shards": shards, "expect": "EQUIVALENT"})
            built[(m.name, p.name)] = (m, p, models, binds, shapes)
    lines = []
    for e in CATALOGUE:
        m, p, models, binds, shapes = built[(e["config"], e["plan"])]
        if e["bug"]:
            bp = dataclasses.replace(p, bug=e["bug"])
            progs = build_ranks(m, bp)
            models = {q.rank: q.g.model() for q in progs}
            binds = rank_bindings(progs, bp, shapes)
            node = {"vocab_ce_gathered": "/mb0/loss/AllGather_logits"}[e["bug"]]
        else:
            models = copy.deepcopy(models)
            node = e["edit"](models)
        rel = "%s/bugs/%s" % (m.name, e["id"])
        write_per_rank(os.path.join(out, rel), p, models, binds)
        index.append({"id": rel.replace("/bugs/", "/"), "spec": m.name + "/spec.onnx",
                      "shards": rel, "expect": "NOT EQUIVALENT", "bug": e["id"]})
        lines.append({"id": e["id"], "class": e["cls"], "plan": "%s/plans/%s" % (m.name, p.name),
                      "what": e["what"], "output": e["output"], "rank": e["rank"], "node": node,
                      "source": e["source"]})
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out, "catalogue.jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line, sort_keys=True) + "\n")
    return index


def write_stage_programs(m, p, out):
    """The one-program-per-stage form, building one representative rank per pipeline stage:
    without context parallelism or ZeRO-1 slices every rank of a stage runs the same program."""
    assert p.cp == 1 and p.zero != 1 and p.comm == "onnx_tv"
    mesh = Mesh(p.axes)
    reps = {}
    for r in range(mesh.size):
        reps.setdefault(mesh.rank({"pp": mesh.coords(r).get("pp", 0)}), []).append(r)
    return write_spmd(out, m, p, reps)


def generate_real(size, out):
    m, p = real_config(size)
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    save(build_spec(m), os.path.join(out, "spec.onnx"))
    t_spec = time.time() - t0
    write_stage_programs(m, p, os.path.join(out, p.name + ".spmd"))
    total = time.time() - t0
    size_b = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(out) for f in fs)
    print("%s %s: spec %.1fs, total %.1fs, %.1f MB in %s" % (m.name, p.name, t_spec, total,
                                                             size_b / 1e6, out))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--real", choices=["8b", "70b", "405b"])
    args = ap.parse_args(argv)
    if args.real:
        generate_real(args.real, args.out)
    else:
        index = generate_small(args.out)
        print("%d cases in %s" % (len(index), args.out))


if __name__ == "__main__":
    main()
