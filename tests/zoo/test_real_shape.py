"""The real-size plans are written by the same code as the small zoo, one representative rank per
pipeline stage. Check that path numerically on a shrunken copy of the 405B plan's structure:
uneven stages (first and last one layer fewer), 1F1B, DP x TP x PP with GQA."""
import os
import tempfile
import unittest

import _paths  # noqa: F401
from zoo import numeric
from zoo.config import DS_SMALL, DeepSeekConfig, ModelConfig, PlanConfig, real_config, stage_layers
from zoo.generate import write_stage_programs
from zoo.graph import save
from zoo.plan import build_spec


class RealShapeTest(unittest.TestCase):
    def test_stage_split_405b(self):
        m, p = real_config("405b")
        sizes = [len(stage_layers(m.layers, p.pp, s)) for s in range(p.pp)]
        self.assertEqual(sizes, [7] + [8] * 14 + [7])
        self.assertEqual(p.world, 8192)

    def test_shrunken_405b_structure(self):
        m = ModelConfig("mini", layers=6, hidden=16, heads=4, kv_heads=2, head_dim=4, ffn=16,
                        vocab=8, seq=4, batch=4, rope="range")
        p = PlanConfig("dp2_tp2_pp4_mb2", dp=2, tp=2, pp=4, mb=2, schedule="1f1b")
        with tempfile.TemporaryDirectory() as tmp:
            save(build_spec(m), os.path.join(tmp, "spec.onnx"))
            head = write_stage_programs(m, p, os.path.join(tmp, "plan"))
            self.assertEqual([g["ranks"] for g in head["programs"]], [{"pp": s} for s in range(4)])
            r = numeric.check(os.path.join(tmp, "spec.onnx"), os.path.join(tmp, "plan"))
            self.assertTrue(r["agree"], r["errors"])

    def test_shrunken_deepseek_v3_structure(self):
        """V3's real plan splits the experts inside the TP group: the TP ranks of an MoE stage
        slice different experts, so they need programs of their own (one program per stage gave
        every TP rank the first rank's experts, and a plan that computes something else)."""
        dims = dict(DS_SMALL, layers=4, dense_layers=3)
        m = DeepSeekConfig("mini_v3", batch=4, q_lora=2, rope="range", theta=10000.0, **dims)
        p = PlanConfig("dp2_tp2_pp2_mb2", dp=2, tp=2, pp=2, mb=2, schedule="1f1b")
        with tempfile.TemporaryDirectory() as tmp:
            save(build_spec(m), os.path.join(tmp, "spec.onnx"))
            head = write_stage_programs(m, p, os.path.join(tmp, "plan"))
            # Stage 0 (dense layers) is one program; stage 1 (the MoE layer) one per TP rank.
            self.assertEqual([g["ranks"] for g in head["programs"]],
                             [{"pp": 0}, {"pp": 1, "tp": 0}, {"pp": 1, "tp": 1}])
            r = numeric.check(os.path.join(tmp, "spec.onnx"), os.path.join(tmp, "plan"))
            self.assertTrue(r["agree"], r["errors"])


if __name__ == "__main__":
    unittest.main()
