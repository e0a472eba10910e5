#!/usr/bin/python3
"""Generate the model zoo.

  generate.py --out models/zoo              the small zoo: specs, plans (per rank and per
                                            program group), mutants, index.json, catalogue.jsonl
  generate.py --deepseek --out models/deepseek
                                            the DeepSeek small zoo (MLA, MoE): specs, plans
                                            per rank, its bug catalogue
  generate.py --real 8b|70b|405b|dsv3 --out DIR [--bug BUG] [--layers N]
                                            a real Llama-3 size: spec and one program per
                                            pipeline stage, graph only, weights as inputs
  generate.py --real v2-lite|v2|v3 --out DIR [--layers N] [--trainverify-size]
                                            a real DeepSeek configuration, likewise, on
                                            TrainVerify's DP32 x TP8 x PP8 plan, 16 micro-batches
  generate.py --real-zoo 8b --out DIR [--only SUBSTRING ...] [--layers N] [--sparse-weights]
                                            the small zoo's configurations, plans (per rank)
                                            and mutants at real dimensions, graph only
  generate.py --real-plan NAME --out DIR [--layers N]
                                            a named real plan: DIR/spec.onnx and DIR/plan/
                                            (8b_dp2_tp2_pp2_mb2, 8b_cp2_dp2_tp2_pp2_mb2)
  generate.py --small-plan NAME --out DIR [--bug BUG] [--per-rank]
                                            a named small plan with four ranks along an axis
                                            or four micro-batches:
                                            DIR/spec.onnx and DIR/plan/ (one program per group
                                            of identical ranks, or per rank with --per-rank)
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
from zoo.config import (DEEPSEEK_EP_BASES, DEEPSEEK_REAL, DEEPSEEK_ZOO,  # noqa: E402
                         NAMED_REAL_PLANS, NAMED_SMALL_PLANS, REAL_DIMS, SMALL_ZOO,
                         deepseek_real_config, named_real_config, real_config, real_zoo)
from zoo.deepseek_bugs import DS_CATALOGUE  # noqa: E402
from zoo.graph import save  # noqa: E402
from zoo.mutants import CATALOGUE, describe  # noqa: E402
from zoo.plan import build_spec  # noqa: E402
from zoo.writer import (build_ranks, rank_bindings, spec_shapes, write_per_rank,  # noqa: E402
                        write_spmd)


def generate_zoo(out, zoo, spmd=True, only=None, skip_failing=False, log=print,
                 catalogue=CATALOGUE, bases=()):
    """Specs, plans and catalogue mutants of `zoo` ([(ModelConfig, [PlanConfig])]) under `out`:
    <config>/spec.onnx, <config>/plans/<plan>/ (and <plan>.spmd/ with `spmd`),
    <config>/bugs/<id>/, index.json, catalogue.jsonl. `only`: substrings, a case is written when
    its id holds one. `skip_failing`: a mutant whose edit does not apply (a node or an output it
    names does not exist in these configs) is left out with a printed reason instead of failing.
    `bases`: more configurations whose plans only carry catalogue bugs (correct plans the
    prover does not prove yet are not written as cases). Returns the index and the skipped
    [(id, reason)]."""
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    configs = {m.name: (m, {p.name: p for p in plans}) for m, plans in list(zoo) + list(bases)}
    specs, built = {}, {}

    def wanted(case_id):
        return not only or any(s in case_id for s in only)

    def spec_of(m):
        if m.name not in specs:
            os.makedirs(os.path.join(out, m.name), exist_ok=True)
            spec = build_spec(m)
            save(spec, os.path.join(out, m.name, "spec.onnx"))
            specs[m.name] = spec_shapes(spec)
        return specs[m.name]

    def base(m, p):
        if (m.name, p.name) not in built:
            shapes = spec_of(m)
            progs = build_ranks(m, p)
            built[(m.name, p.name)] = ({q.rank: q.g.model() for q in progs},
                                       rank_bindings(progs, p, shapes))
        return built[(m.name, p.name)]

    index, lines, skipped = [], [], []
    for m, plans in zoo:
        for p in plans:
            rel = "%s/plans/%s" % (m.name, p.name)
            forms = [rel] + ([rel + ".spmd"] if spmd else [])
            if not any(wanted(f.replace("/plans/", "/")) for f in forms):
                continue
            models, binds = base(m, p)
            write_per_rank(os.path.join(out, rel), p, copy.deepcopy(models), binds)
            if spmd:
                write_spmd(os.path.join(out, rel + ".spmd"), m, p)
            for shards in forms:
                index.append({"id": shards.replace("/plans/", "/"), "spec": m.name + "/spec.onnx",
                              "shards": shards, "expect": "EQUIVALENT"})
    for e in catalogue:
        rel = "%s/bugs/%s" % (e["config"], e["id"])
        if not wanted(rel.replace("/bugs/", "/")):
            continue
        m, plans = configs[e["config"]]
        p = plans[e["plan"]]
        shapes = spec_of(m)
        try:
            if e["output"] not in shapes:
                raise KeyError("the spec has no output %s" % e["output"])
            if e["bug"]:
                bp = dataclasses.replace(p, bug=e["bug"])
                progs = build_ranks(m, bp)
                models = {q.rank: q.g.model() for q in progs}
                binds = rank_bindings(progs, bp, shapes)
                node = e["node"]
            else:
                models, binds = base(m, p)
                models = copy.deepcopy(models)
                node = e["edit"](models, m, p)
        except (KeyError, ValueError) as err:
            if not skip_failing:
                raise
            reason = err.args[0] if err.args else str(err)
            log("skip %s (%s, layers %d): %s" % (e["id"], m.name, m.layers, reason))
            skipped.append((e["id"], reason))
            continue
        write_per_rank(os.path.join(out, rel), p, models, binds)
        index.append({"id": rel.replace("/bugs/", "/"), "spec": m.name + "/spec.onnx",
                      "shards": rel, "expect": "NOT EQUIVALENT", "bug": e["id"]})
        line = {"id": e["id"], "class": e["cls"], "plan": "%s/plans/%s" % (m.name, p.name),
                "what": describe(e, m), "output": e["output"], "rank": e["rank"],
                "node": node, "source": e["source"]}
        if e.get("near"):
            line["located"] = e["near"]
        lines.append(line)
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out, "catalogue.jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line, sort_keys=True) + "\n")
    return index, skipped


def generate_small(out):
    return generate_zoo(out, SMALL_ZOO)[0]


def generate_deepseek(out):
    """models/deepseek: the DeepSeek small zoo and its bug catalogue."""
    return generate_zoo(out, DEEPSEEK_ZOO, spmd=False, catalogue=DS_CATALOGUE,
                        bases=DEEPSEEK_EP_BASES)[0]


def tree_size(path, data=False):
    """Bytes of the files under `path`: without external-data files, or (`data`) only those."""
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs
               if f.endswith(".onnx.data") == data)


def write_sparse_data(out):
    """Every external-data file the models under `out` name, as a sparse file of zeros of the
    right length, so that loaders that read initializer data can open them."""
    import onnx
    ends = {}
    for d, _, fs in os.walk(out):
        for f in fs:
            if not f.endswith(".onnx"):
                continue
            model = onnx.load(os.path.join(d, f), load_external_data=False)
            for t in model.graph.initializer:
                if t.data_location == onnx.TensorProto.EXTERNAL:
                    kv = {e.key: e.value for e in t.external_data}
                    path = os.path.join(d, kv["location"])
                    ends[path] = max(ends.get(path, 0), int(kv["offset"]) + int(kv["length"]))
    for path, n in sorted(ends.items()):
        with open(path, "wb") as f:
            f.truncate(n)
    return len(ends)


def generate_real_zoo(size, out, only=None, layers=None, sparse=False):
    t0 = time.time()
    zoo = real_zoo(size, layers)
    index, skipped = generate_zoo(out, zoo, spmd=False, only=only, skip_failing=True)
    n_data = write_sparse_data(out) if sparse else 0
    bugs = sum(1 for e in index if "bug" in e)
    print("%s zoo: %d plans, %d bugs (%d skipped), %.1fs, %.1f MB in %s%s" % (
        size, len(index) - bugs, bugs, len(skipped), time.time() - t0, tree_size(out) / 1e6, out,
        ", and %d sparse data files (%.1f GB apparent)" % (n_data, tree_size(out, True) / 1e9)
        if n_data else ""))
    return index, skipped


def generate_real_plan(name, out, layers=None):
    """A named real plan: out/spec.onnx and out/plan/ (per rank, plan.json)."""
    m, p = named_real_config(name, layers)
    os.makedirs(out, exist_ok=True)
    plan_dir = os.path.join(out, "plan")
    if os.path.isdir(plan_dir):
        shutil.rmtree(plan_dir)
    t0 = time.time()
    spec = build_spec(m)
    save(spec, os.path.join(out, "spec.onnx"))
    t_spec = time.time() - t0
    progs = build_ranks(m, p)
    write_per_rank(plan_dir, p, {q.rank: q.g.model() for q in progs},
                   rank_bindings(progs, p, spec_shapes(spec)))
    print("%s (%d layers, %d ranks): spec %.1fs, total %.1fs, %.1f MB in %s" % (
        name, m.layers, p.world, t_spec, time.time() - t0, tree_size(out) / 1e6, out))


def generate_small_plan(name, out, bug=None, per_rank=False):
    """A named small plan: out/spec.onnx and out/plan/."""
    m, p = NAMED_SMALL_PLANS[name]
    p = dataclasses.replace(p, bug=bug)
    os.makedirs(out, exist_ok=True)
    plan_dir = os.path.join(out, "plan")
    if os.path.isdir(plan_dir):
        shutil.rmtree(plan_dir)
    spec = build_spec(m)
    save(spec, os.path.join(out, "spec.onnx"))
    if per_rank:
        progs = build_ranks(m, p)
        write_per_rank(plan_dir, p, {q.rank: q.g.model() for q in progs},
                       rank_bindings(progs, p, spec_shapes(spec)))
    else:
        write_spmd(plan_dir, m, p)


def write_stage_programs(m, p, out):
    """The one-program-per-stage form, building one representative rank per pipeline stage:
    without context parallelism or ZeRO-1 slices every rank of a stage runs the same program.
    Experts split inside the TP group make the TP ranks' programs differ (each slices its own
    experts out of the routing), so a model with MoE layers gets one representative per stage
    and TP coordinate; write_spmd shares a file among byte-identical programs."""
    assert p.cp == 1 and p.zero != 1 and p.comm == "onnx_tv"
    mesh = Mesh(p.axes)
    per_tp = p.tp > 1 and bool(getattr(m, "moe_layers", []))
    reps = {}
    for r in range(mesh.size):
        c = mesh.coords(r)
        key = {"pp": c.get("pp", 0)}
        if per_tp:
            key["tp"] = c.get("tp", 0)
        reps.setdefault(mesh.rank(key), []).append(r)
    return write_spmd(out, m, p, reps)


def generate_real(size, out, bug=None, layers=None, trainverify_size=False):
    if size in DEEPSEEK_REAL:
        m, p = deepseek_real_config(size, layers, trainverify_size)
    else:
        m, p = real_config(size, layers)
    p = dataclasses.replace(p, bug=bug)
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
    ap.add_argument("--real", choices=["8b", "70b", "405b", "dsv3"] + sorted(DEEPSEEK_REAL))
    ap.add_argument("--trainverify-size", action="store_true",
                    help="--real v2-lite|v2|v3: TrainVerify's hidden 512 and sequence 128")
    ap.add_argument("--real-zoo", choices=sorted(REAL_DIMS))
    ap.add_argument("--real-plan", choices=sorted(NAMED_REAL_PLANS))
    ap.add_argument("--small-plan", choices=sorted(NAMED_SMALL_PLANS))
    ap.add_argument("--deepseek", action="store_true",
                    help="the DeepSeek small zoo (models/deepseek) instead of the Llama one")
    ap.add_argument("--bug", choices=["dp_average_half", "dp_average_half_last_rank",
                                      "tp_residual_folded", "tp_residual_folded_half",
                                      "microbatch_scale_all", "microbatch_scale_last"],
                    help="--small-plan, --real: a generator-level bug")
    ap.add_argument("--per-rank", action="store_true",
                    help="--small-plan: one program file per rank")
    ap.add_argument("--only", nargs="+", action="extend", metavar="SUBSTRING",
                    help="--real-zoo: only the cases whose id holds one of these")
    ap.add_argument("--layers", type=int, help="--real, --real-zoo, --real-plan: layer count")
    ap.add_argument("--sparse-weights", action="store_true",
                    help="--real-zoo: write the external data of initializers as sparse files")
    args = ap.parse_args(argv)
    modes = [m for m in ("real", "real_zoo", "real_plan", "small_plan", "deepseek")
             if getattr(args, m)]
    if len(modes) > 1:
        ap.error("--real, --real-zoo, --real-plan, --small-plan and --deepseek exclude each other")
    if args.per_rank and not args.small_plan:
        ap.error("--per-rank goes with --small-plan")
    if args.bug and not (args.small_plan or args.real):
        ap.error("--bug goes with --small-plan or --real")
    if args.only and not args.real_zoo:
        ap.error("--only goes with --real-zoo")
    if args.sparse_weights and not args.real_zoo:
        ap.error("--sparse-weights goes with --real-zoo")
    if args.layers is not None and not (args.real or args.real_zoo or args.real_plan):
        ap.error("--layers goes with --real, --real-zoo or --real-plan")
    if args.layers is not None and args.layers < 1:
        ap.error("--layers must be at least 1")
    if args.real:
        generate_real(args.real, args.out, args.bug, args.layers, args.trainverify_size)
    elif args.real_zoo:
        generate_real_zoo(args.real_zoo, args.out, args.only, args.layers, args.sparse_weights)
    elif args.real_plan:
        generate_real_plan(args.real_plan, args.out, args.layers)
    elif args.small_plan:
        generate_small_plan(args.small_plan, args.out, args.bug, args.per_rank)
    else:
        index = generate_deepseek(args.out) if args.deepseek else generate_small(args.out)
        print("%d cases in %s" % (len(index), args.out))


if __name__ == "__main__":
    main()
