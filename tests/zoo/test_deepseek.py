"""The DeepSeek small zoo (models/deepseek): regenerated bit for bit, every correct plan agrees
with its spec numerically, every catalogue bug disagrees on the output its entry names, the
hand-derived backward (MLA, router, experts, auxiliary loss) matches finite differences, and the
real configurations build."""
import filecmp
import json
import os
import subprocess
import tempfile
import unittest

import onnx

from _paths import DEEPSEEK, ROOT
from test_generate import tree
from zoo import numeric
from zoo.config import DeepSeekConfig, PlanConfig, deepseek_real_config
from zoo.plan import param_shapes


def load(name):
    with open(os.path.join(DEEPSEEK, name)) as f:
        return json.load(f) if name.endswith(".json") else [json.loads(line) for line in f]


class RegenerateTest(unittest.TestCase):
    def test_bit_for_bit(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "deepseek")
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "zoo", "generate.py"),
                            "--deepseek", "--out", out], check=True, stdout=subprocess.DEVNULL)
            self.assertEqual(tree(out), tree(DEEPSEEK))
            for f in tree(out):
                self.assertTrue(filecmp.cmp(os.path.join(out, f), os.path.join(DEEPSEEK, f),
                                            shallow=False), "%s differs" % f)


class PlansTest(unittest.TestCase):
    def test_every_correct_plan_agrees(self):
        cases = [c for c in load("index.json") if c["expect"] == "EQUIVALENT"]
        self.assertGreaterEqual(len(cases), 8)
        for c in cases:
            with self.subTest(case=c["id"]):
                r = numeric.check(os.path.join(DEEPSEEK, c["spec"]),
                                  os.path.join(DEEPSEEK, c["shards"]), seed=1)
                self.assertTrue(r["agree"], {k: v for k, v in r["errors"].items() if v > 1e-9})

    def test_every_bug_disagrees_on_its_output(self):
        cat = {e["id"]: e for e in load("catalogue.jsonl")}
        cases = [c for c in load("index.json") if c["expect"] == "NOT EQUIVALENT"]
        self.assertEqual(sorted(c["bug"] for c in cases), sorted(cat))
        for c in cases:
            e = cat[c["bug"]]
            with self.subTest(bug=e["id"]):
                # a bug that shows only under some routings (a capacity that drops a token
                # where two of a rank's tokens choose one expert) needs inputs that route so
                for seed in range(1, 9):
                    r = numeric.check(os.path.join(DEEPSEEK, c["spec"]),
                                      os.path.join(DEEPSEEK, c["shards"]), seed=seed)
                    if r["errors"][e["output"]] > 1e-6:
                        break
                self.assertGreater(r["errors"][e["output"]], 1e-6, e["output"])
                rank = onnx.load(os.path.join(DEEPSEEK, e["plan"].split("/")[0], "bugs", e["id"],
                                              "rank%d.onnx" % e["rank"]))
                names = {n.name for n in rank.graph.node}
                self.assertTrue(e["node"] in names, e["node"])
                if "located" in e:
                    self.assertTrue(e["located"] in names, e["located"])


class ExpertParallelTest(unittest.TestCase):
    """Expert parallelism by AllToAll (moe_dispatch.py, moe_permute.py), generated into a
    temporary folder: the padded dispatch and a capacity above every rank's token count agree
    with the spec; a capacity computed per rank (1 slot) drops tokens; expert gradients averaged
    over the expert-data-parallel group only are EP times too large. The argsort permutation
    agrees, and its four bugs from upstream reports disagree."""

    def run_plan(self, plan):
        from zoo.generate import generate_zoo
        from zoo.config import DS_SMALL
        m = DeepSeekConfig("ep", batch=4, q_lora=2, **DS_SMALL)
        with tempfile.TemporaryDirectory() as tmp:
            generate_zoo(tmp, [(m, [plan])], spmd=False, only=["ep/"], catalogue=[])
            return numeric.check(os.path.join(tmp, "ep", "spec.onnx"),
                                 os.path.join(tmp, "ep", "plans", plan.name), seed=2)

    def test_dispatch(self):
        for plan in (PlanConfig("ep2", ep=2), PlanConfig("ep2_mb2", ep=2, mb=2),
                     PlanConfig("ep2_capacity4", ep=2, capacity=4),
                     PlanConfig("dp2_ep2", dp=2, ep=2)):
            with self.subTest(plan=plan.name):
                r = self.run_plan(plan)
                self.assertTrue(r["agree"], {k: v for k, v in r["errors"].items() if v > 1e-9})

    def test_bugs(self):
        r = self.run_plan(PlanConfig("ep2_capacity1", ep=2, capacity=1))
        self.assertGreater(r["errors"]["loss"], 1e-6)
        r = self.run_plan(PlanConfig("ep2_unscaled", ep=2, bug="expert_grad_unscaled_ep"))
        self.assertGreater(r["errors"]["grad_layers.1.experts.w_up"], 0.5)
        self.assertLess(r["errors"]["grad_layers.1.router"], 1e-9)
        r = self.run_plan(PlanConfig("dp2_ep2_group", dp=2, ep=2, bug="expert_grad_ep_group"))
        self.assertGreater(r["errors"]["grad_layers.1.experts.w_up"], 1e-6)

    def test_argsort_dispatch(self):
        """The argsort permutation (moe_permute.py) agrees: two local experts per rank on ep2
        (where the re-sort after the AllToAll matters) with two batch rows per rank, one row per
        rank with micro-batches and with DP, and one expert on each of four ranks."""
        for plan in (PlanConfig("ep2", ep=2, permute="argsort"),
                     PlanConfig("ep2_mb2", ep=2, mb=2, permute="argsort"),
                     PlanConfig("dp2_ep2", dp=2, ep=2, permute="argsort"),
                     PlanConfig("ep4", ep=4, permute="argsort")):
            with self.subTest(plan=plan.name):
                r = self.run_plan(plan)
                self.assertTrue(r["agree"], {k: v for k, v in r["errors"].items() if v > 1e-9})

    def argsort_bug(self, bug, **axes):
        return self.run_plan(PlanConfig("ep_" + bug, permute="argsort", bug=bug, **axes))

    def test_permute_twice(self):
        """torchtitan #1237: the combine applies the sort permutation again instead of its
        inverse, so the expert outputs return to the wrong (token, slot) pairs."""
        r = self.argsort_bug("permute_twice", ep=2)
        self.assertGreater(r["errors"]["loss"], 1e-6)
        self.assertGreater(r["errors"]["grad_layers.1.experts.w_up"], 1e-6)

    def test_no_expert_major_resort(self):
        """The received rows left rank-major: with two local experts each expert runs on the
        other's rows; with one local expert per rank the two orders are the same."""
        r = self.argsort_bug("no_expert_major_resort", ep=2)
        self.assertGreater(r["errors"]["loss"], 1e-6)
        self.assertGreater(r["errors"]["grad_layers.1.experts.w_up"], 1e-6)
        r = self.argsort_bug("no_expert_major_resort", ep=4)
        self.assertTrue(r["agree"], {k: v for k, v in r["errors"].items() if v > 1e-9})

    def test_sp_global_token_index(self):
        """torchtitan #3604: the index the combine scatters back to leaves out the batch row's
        offset. Two rows per rank: the second row's expert outputs land on the first's tokens;
        one row per rank (two micro-batches): right, as the report's B == 1 case was."""
        r = self.argsort_bug("sp_global_token_index", ep=2)
        self.assertGreater(r["errors"]["loss"], 1e-6)
        self.assertGreater(r["errors"]["grad_layers.1.router"], 1e-6)
        r = self.argsort_bug("sp_global_token_index", ep=2, mb=2)
        self.assertTrue(r["agree"], {k: v for k, v in r["errors"].items() if v > 1e-9})

    def test_index_add_overwrites(self):
        """pytorch #111159: index_add exported as ScatterElements without reduction, so a
        token's second top-k row overwrites its first instead of adding to it."""
        r = self.argsort_bug("index_add_overwrites", ep=2)
        self.assertGreater(r["errors"]["loss"], 1e-6)
        self.assertGreater(r["errors"]["grad_x"], 1e-6)


class GradientTest(unittest.TestCase):
    def test_finite_differences(self):
        for config in ("ds3_b4", "ds2_b2"):
            with self.subTest(config=config):
                worst = numeric.finite_difference_check(
                    os.path.join(DEEPSEEK, config, "spec.onnx"), seed=3)
                self.assertIn("layers.1.router", worst)
                self.assertIn("layers.0.w_kv_a", worst)
                for p, err in worst.items():
                    self.assertLess(err, 1e-5, "grad_%s" % p)

    def test_auxiliary_loss_reaches_the_router(self):
        """Without the auxiliary loss the router's gradient changes: the finite differences
        above cover its backward."""
        with tempfile.TemporaryDirectory() as tmp:
            from zoo.graph import save
            from zoo.plan import build_spec
            out = {}
            for alpha in (0.0, 0.0625):
                m = DeepSeekConfig("a", batch=2, aux_alpha=alpha, hidden=4, ffn=4, vocab=4,
                                   seq=2, kv_lora=2, moe_ffn=2, layers=2, dense_layers=1)
                path = os.path.join(tmp, "a%s.onnx" % alpha)
                save(build_spec(m), path)
                spec = onnx.load(path)
                feeds = numeric.random_spec_inputs(spec, set(), __import__("numpy").random.RandomState(0))
                out[alpha] = numeric.run_graph(spec, feeds)["grad_layers.1.router"]
            self.assertGreater(abs(out[0.0] - out[0.0625]).max(), 1e-6)


class RealConfigTest(unittest.TestCase):
    def test_real_shapes(self):
        m, p = deepseek_real_config("v3")
        shapes = param_shapes(m)
        self.assertEqual(shapes["layers.3.experts.w_gate"], [256, 7168, 2048])
        self.assertEqual(shapes["layers.0.w_kv_a"], [7168, 512 + 64])
        self.assertEqual(shapes["layers.0.w_q_b"], [1536, 128 * 192])
        self.assertNotIn("layers.2.router", shapes)
        self.assertEqual((p.dp, p.tp, p.pp, p.mb), (32, 8, 8, 16))
        lite, _ = deepseek_real_config("v2-lite")
        self.assertIn("layers.0.w_q", param_shapes(lite))


if __name__ == "__main__":
    unittest.main()
