"""The zoo at real Llama-3 8B dimensions (--real-zoo, --real-plan): the files carry the real
shapes, and the same code path at a middle size still gives plans that agree and mutants that
disagree on their catalogue output."""
import json
import os
import subprocess
import tempfile
import unittest

import onnx

from _paths import ROOT
from zoo import numeric
from zoo.config import NAMED_REAL_PLANS, SMALL_ZOO, named_real_config, real_zoo
from zoo.generate import generate_zoo
from zoo.graph import save
from zoo.mutants import CATALOGUE
from zoo.plan import build_spec
from zoo.writer import build_ranks, rank_bindings, spec_shapes, write_per_rank

GENERATE = os.path.join(ROOT, "tools", "zoo", "generate.py")
# a middle size: every dimension differs from the small zoo's, head_dim not a square
MIDDLE = dict(hidden=32, heads=4, kv_heads=2, head_dim=8, ffn=24, vocab=16, seq=8, theta=500000.0)


def input_shapes(path):
    model = onnx.load(path, load_external_data=False)
    return {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in model.graph.input}


def generate(*args):
    return subprocess.run(["/usr/bin/python3", GENERATE] + list(args), check=True,
                          capture_output=True, text=True).stdout


class RealZooTest(unittest.TestCase):
    def test_8b_one_config(self):
        with tempfile.TemporaryDirectory() as out:
            generate("--real-zoo", "8b", "--only", "l1_b2_mha", "--layers", "1", "--out", out)
            spec = input_shapes(os.path.join(out, "l1_b2_mha", "spec.onnx"))
            self.assertEqual(spec["x"], [2, 8192, 4096])
            self.assertEqual(spec["labels"], [2, 8192, 128256])
            self.assertEqual(spec["layers.0.w_q"], [4096, 32 * 128])
            self.assertEqual(spec["layers.0.w_k"], [4096, 32 * 128])  # multi-head stays so
            self.assertEqual(spec["layers.0.w_down"], [14336, 4096])
            self.assertEqual(spec["lm_head"], [4096, 128256])
            rank = input_shapes(os.path.join(out, "l1_b2_mha", "plans", "tp2_mb2", "rank1.onnx"))
            self.assertEqual(rank["layers.0.w_q"], [4096, 2048])

            with open(os.path.join(out, "index.json")) as f:
                index = json.load(f)
            bugs = [e["id"] for e in CATALOGUE if e["config"] == "l1_b2_mha"]
            plans = [p.name for m, ps in SMALL_ZOO if m.name == "l1_b2_mha" for p in ps]
            self.assertEqual([c["id"] for c in index],
                             ["l1_b2_mha/" + p for p in plans] + ["l1_b2_mha/" + b for b in bugs])
            for c in index:
                self.assertEqual(c["spec"], "l1_b2_mha/spec.onnx")
                self.assertTrue(os.path.isdir(os.path.join(out, c["shards"])), c["shards"])
                self.assertEqual(c["expect"], "NOT EQUIVALENT" if "bug" in c else "EQUIVALENT")
            with open(os.path.join(out, "catalogue.jsonl")) as f:
                self.assertEqual([json.loads(line)["id"] for line in f], bugs)

    def test_8b_models(self):
        models = {m.name: m for m, _ in real_zoo("8b")}
        self.assertEqual(set(models), {m.name for m, _ in SMALL_ZOO})
        for small, _ in SMALL_ZOO:
            m = models[small.name]
            self.assertEqual((m.hidden, m.heads, m.head_dim, m.ffn, m.vocab, m.seq, m.theta),
                             (4096, 32, 128, 14336, 128256, 8192, 500000.0))
            self.assertEqual(m.kv_heads, 8 if small.kv_heads < small.heads else 32)
            self.assertEqual((m.layers, m.batch, m.tokens, m.tied, m.rope),
                             (small.layers, small.batch, small.tokens, small.tied, "range"))
        self.assertEqual(models["l2_b4_tied_init"].weights, "external")

    def test_middle_size_same_bugs(self):
        """The real-zoo path with other dimensions: the size-dependent mutant constants follow."""
        with tempfile.TemporaryDirectory() as out:
            index, skipped = generate_zoo(out, real_zoo("8b", dims=MIDDLE, external=False),
                                          spmd=False, skip_failing=True, log=lambda s: None)
            self.assertEqual(skipped, [])
            with open(os.path.join(out, "catalogue.jsonl")) as f:
                cat = {e["id"]: e for e in map(json.loads, f)}
            self.assertEqual(len(cat), len(CATALOGUE))
            for c in index:
                with self.subTest(case=c["id"]):
                    r = numeric.check(os.path.join(out, c["spec"]), os.path.join(out, c["shards"]),
                                      seed=1)
                    if "bug" in c:
                        self.assertFalse(r["agree"])
                        self.assertGreater(r["errors"][cat[c["bug"]]["output"]], numeric.TOL)
                    else:
                        self.assertTrue(r["agree"], r["errors"])


class RealPlanTest(unittest.TestCase):
    def test_named_plans_at_middle_size(self):
        for name in NAMED_REAL_PLANS:
            m, p = named_real_config(name, layers=3, dims=MIDDLE)
            with self.subTest(plan=name), tempfile.TemporaryDirectory() as out:
                spec = build_spec(m)
                save(spec, os.path.join(out, "spec.onnx"))
                progs = build_ranks(m, p)
                write_per_rank(os.path.join(out, "plan"), p, {q.rank: q.g.model() for q in progs},
                               rank_bindings(progs, p, spec_shapes(spec)))
                r = numeric.check(os.path.join(out, "spec.onnx"), os.path.join(out, "plan"), seed=1)
                self.assertTrue(r["agree"], r["errors"])

    def test_8b_cp_plan(self):
        with tempfile.TemporaryDirectory() as out:
            generate("--real-plan", "8b_cp2_dp2_tp2_pp2_mb2", "--layers", "2", "--out", out)
            spec = input_shapes(os.path.join(out, "spec.onnx"))
            self.assertEqual(spec["x"], [4, 8192, 4096])
            self.assertEqual(spec["layers.1.w_k"], [4096, 8 * 128])
            with open(os.path.join(out, "plan", "plan.json")) as f:
                head = json.load(f)
            self.assertEqual(head["mesh"],
                             {"axes": ["dp", "pp", "cp", "tp"], "shape": [2, 2, 2, 2]})
            self.assertEqual(sorted(os.listdir(os.path.join(out, "plan"))),
                             sorted(["plan.json"] + ["rank%d.onnx" % r for r in range(16)]))
            # rank 0: dp 0, stage 0, first half of the sequence, first TP shard; one micro-batch
            rank = input_shapes(os.path.join(out, "plan", "rank0.onnx"))
            self.assertEqual(rank["x_mb0"], [1, 4096, 4096])
            self.assertEqual(rank["layers.0.w_k"], [4096, 4 * 128])


if __name__ == "__main__":
    unittest.main()
