"""The numeric runner over the committed zoo: every correct plan agrees, every mutant disagrees
on the output its catalogue entry names, and every spec's gradients match finite differences."""
import json
import os
import subprocess
import unittest

from _paths import ROOT, ZOO
from zoo import numeric

REQUIRED_CLASSES = {
    "missing_allreduce_dataflow_kept", "missing_allreduce_dataflow_broken",
    "allreduce_replaced_by_allgather", "allgather_replaced_by_allreduce",
    "missing_reduce_in_backward", "wrong_pipeline_peer", "constant_off_one_rank",
    "constant_off_all_ranks", "backward_wrong_input", "rope_outputs_swapped",
    "inconsistent_scaling_average", "inconsistent_scaling_microbatch",
    "microbatch_missing_last_op", "cp_loss_scaled_by_cp_size", "tied_embedding_grad_not_summed",
    "vocab_parallel_ce_on_gathered_logits", "pipeline_grads_scaled_by_token_count",
    "partial_grad_treated_as_replicated", "rope_positions_not_offset",
}


def load_index():
    with open(os.path.join(ZOO, "index.json")) as f:
        return json.load(f)


def load_catalogue():
    with open(os.path.join(ZOO, "catalogue.jsonl")) as f:
        return [json.loads(line) for line in f]


class CorrectPlansTest(unittest.TestCase):
    def test_every_correct_plan_agrees(self):
        cases = [c for c in load_index() if c["expect"] == "EQUIVALENT"]
        self.assertGreaterEqual(len(cases), 20)
        for c in cases:
            with self.subTest(case=c["id"]):
                r = numeric.check(os.path.join(ZOO, c["spec"]), os.path.join(ZOO, c["shards"]), seed=1)
                bad = {k: v for k, v in r["errors"].items() if v > 1e-9}
                self.assertTrue(r["agree"], "%s: %s" % (c["id"], bad))

    def test_required_plans_exist(self):
        shards = {c["shards"].split("/")[-1] for c in load_index()}
        for p in ("dp2_mb2", "tp2_mb2", "pp2_gpipe_mb2", "pp2_1f1b_mb2", "dp2_tp2_pp2_mb2",
                  "tp2_sp_mb2", "cp2", "cp2_tp2", "zero1_dp2_mb2_ms", "zero2_dp2_mb2",
                  "dp2_pp2_zero2_mb2", "dp2_tp2_pp2_mb2.spmd"):
            self.assertIn(p, shards)


class MutantsTest(unittest.TestCase):
    def test_every_mutant_disagrees_on_its_output(self):
        cat = {e["id"]: e for e in load_catalogue()}
        cases = [c for c in load_index() if c["expect"] == "NOT EQUIVALENT"]
        self.assertEqual(sorted(c["bug"] for c in cases), sorted(cat))
        for c in cases:
            e = cat[c["bug"]]
            with self.subTest(bug=e["id"]):
                r = numeric.check(os.path.join(ZOO, c["spec"]), os.path.join(ZOO, c["shards"]), seed=1)
                self.assertFalse(r["agree"])
                self.assertGreater(r["errors"][e["output"]], 1e-6, e["output"])

    def test_catalogue_entries(self):
        entries = load_catalogue()
        self.assertTrue(REQUIRED_CLASSES <= {e["class"] for e in entries},
                        REQUIRED_CLASSES - {e["class"] for e in entries})
        import onnx
        for e in entries:
            with self.subTest(bug=e["id"]):
                self.assertEqual(set(e), {"id", "class", "plan", "what", "output", "rank", "node",
                                          "source"})
                self.assertTrue(os.path.isdir(os.path.join(ZOO, e["plan"])))
                config = e["plan"].split("/")[0]
                rank = onnx.load(os.path.join(ZOO, config, "bugs", e["id"], "rank%d.onnx" % e["rank"]))
                self.assertIn(e["node"], {n.name for n in rank.graph.node})
                spec = onnx.load(os.path.join(ZOO, config, "spec.onnx"))
                self.assertIn(e["output"], {o.name for o in spec.graph.output})


class GradientTest(unittest.TestCase):
    def test_finite_differences(self):
        for config in sorted(os.listdir(ZOO)):
            spec = os.path.join(ZOO, config, "spec.onnx")
            if not os.path.exists(spec):
                continue
            with self.subTest(config=config):
                worst = numeric.finite_difference_check(spec, seed=3)
                self.assertGreater(len(worst), 10)
                for p, err in worst.items():
                    self.assertLess(err, 1e-5, "grad_%s" % p)


class CommandLineTest(unittest.TestCase):
    def test_exit_codes(self):
        run = os.path.join(ROOT, "tools", "zoo", "run_numeric.py")
        good = subprocess.run(["/usr/bin/python3", run, os.path.join(ZOO, "l1_b2_mha/spec.onnx"),
                               os.path.join(ZOO, "l1_b2_mha/plans/tp2_mb2")], capture_output=True, text=True)
        self.assertEqual(good.returncode, 0, good.stdout)
        self.assertIn("AGREE", good.stdout)
        bad = subprocess.run(["/usr/bin/python3", run, os.path.join(ZOO, "l1_b2_mha/spec.onnx"),
                              os.path.join(ZOO, "l1_b2_mha/bugs/tp2_missing_allreduce_kept"), "--seed", "2"],
                             capture_output=True, text=True)
        self.assertEqual(bad.returncode, 1, bad.stdout)
        self.assertIn("DISAGREE", bad.stdout)


if __name__ == "__main__":
    unittest.main()
