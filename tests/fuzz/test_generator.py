"""The generator's labels follow the contract: a recipe is correct unless a step carries a bug,
so every constant it writes for 1/count must stand for 1/count (plan-format section 1). A
low-precision literal that does not (bfloat16(1/1536) stands for 171/262144) makes a wrong plan
that the float64 run can miss, and the case would be counted as a false alarm."""
import os
import sys
import unittest
from fractions import Fraction

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from fuzz import families, gen, recipe as R  # noqa: E402
from fuzz.onnxb import CONST_TYPES, tensor  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from zoo.float_meaning import meaning  # noqa: E402


def stands_for(count, dtype):
    written = float(numpy_helper.to_array(tensor("c", 1.0 / count, dtype)))
    return meaning(written, CONST_TYPES[dtype])


class MeanLiterals(unittest.TestCase):
    def test_denoting_type(self):
        self.assertEqual(gen.denoting_type("bfloat16", 1536), "float32")
        self.assertEqual(gen.denoting_type("float16", 1536), "float32")
        self.assertEqual(gen.denoting_type("bfloat16", 4096), "bfloat16")
        self.assertEqual(gen.denoting_type("bfloat16", 48), "bfloat16")
        self.assertEqual(gen.denoting_type("float16", 1000), "float16")
        self.assertEqual(gen.denoting_type("bfloat16", 1000), "float32")

    def test_every_mean_literal_stands_for_its_count(self):
        checked = 0
        for seed in range(14022000, 14024000):
            if families.pick(seed) is not None:
                continue
            rec = gen.generate(seed)
            for st in rec["steps"]:
                if st["k"] != "reduce" or st["scale"] != "mean" or st.get("spec_form") != "lit":
                    continue
                full = R.size(rec, rec_dim(rec, st))
                with self.subTest(seed=seed, step=st["out"]):
                    self.assertEqual(stands_for(full, st["spec_dtype"]), Fraction(1, full))
                checked += 1
        self.assertGreater(checked, 50)


class PositionsFamily(unittest.TestCase):
    """Each bug of the positions family is wrong at full size and each correct form right, by
    the float64 run the campaign judges verdicts with."""

    def test_bugs_are_wrong_and_other_forms_right(self):
        import tempfile
        from fuzz import fam_positions, oracle
        base = dict(family="positions", seed=0, n=2, rows=65, h=1, a=0.25, c=1.0, window=70,
                    bad_rank=0)
        cases = [("table", "cos", None, "other", "agree"), ("mask", "cos", None, "other", "agree"),
                 ("table", "cos", "square", "plain", "disagree"),
                 ("table", "cos", "interpolate", "plain", "disagree"),
                 ("table", "affine", "interpolate", "plain", "agree"),  # affine: exact
                 ("mask", "cos", "window", "plain", "disagree"),
                 ("mask", "cos", "late", "plain", "disagree")]
        with tempfile.TemporaryDirectory() as d:
            for plan, f, bug, form, truth in cases:
                rec = dict(base, plan=plan, f=f, bug=bug, form=form)
                with self.subTest(plan=plan, f=f, bug=bug, form=form):
                    folder = fam_positions.write(rec, os.path.join(d, "case"))
                    self.assertEqual(oracle.numeric_truth(folder), truth)


def rec_dim(rec, st):
    return R.values(rec)[st["ins"][0]][0][st["axis"]]


if __name__ == "__main__":
    unittest.main()
