"""The numpy runner's independent reading of the index ops (GatherElements, ScatterElements,
ScatterND, OneHot) on models/cross_entropy, and of TopK on models/moe: the spec's gradients match
finite differences, every correct plan agrees with the spec and every seeded bug disagrees, so
the verdicts the prover gives there (tests/e2e/cross_entropy_test.cpp, moe_test.cpp) are the
true ones."""
import os
import unittest

from _paths import ROOT
from zoo import numeric

MODELS = os.path.join(ROOT, "models", "cross_entropy")
CORRECT = ["dp2", "sp2", "tp2_vocab"]
WRONG = ["tp2_vocab_off_by_one", "tp2_vocab_unmasked_grad", "dp2_local_mean", "dp2_grad_w_not_reduced"]


class CrossEntropyModelsTest(unittest.TestCase):
    spec = os.path.join(MODELS, "spec.onnx")

    def test_the_specs_gradients_match_finite_differences(self):
        for p, err in numeric.finite_difference_check(self.spec, seed=3).items():
            self.assertLess(err, 1e-6, p)

    def test_correct_plans_agree_and_bugs_differ(self):
        for seed in (1, 2):
            for plan in CORRECT + WRONG:
                with self.subTest(plan=plan, seed=seed):
                    r = numeric.check(self.spec, os.path.join(MODELS, plan), seed=seed)
                    self.assertEqual(r["agree"], plan in CORRECT, r)

    def test_labels_get_the_range_of_the_one_hot_that_reads_them(self):
        import onnx
        ranges = numeric.integer_input_ranges(onnx.load(self.spec))
        self.assertEqual(ranges, {"ids": (0, 8), "labels": (0, 8)})


class MoeModelsTest(unittest.TestCase):
    def test_correct_plans_agree_and_bugs_differ(self):
        spec = os.path.join(ROOT, "models", "moe", "spec.onnx")
        for seed in (1, 2):
            for plan, right in (("ep2", True), ("ep4", True), ("ep2_scatter", True), ("ep2_offset", False),
                                ("ep2_full_softmax", False), ("ep2_routing_map", True),
                                ("ep4_or_map", True), ("ep2_map_first_slot", False),
                                ("a2a2_padded", True), ("a2a2_dense", True), ("a2a2_capacity", True),
                                ("a2a2_triangular", True), ("a2a2_wrong_gate", False),
                                ("a2a2_argsort", True), ("a2a2_argsort_twice", False)):
                with self.subTest(plan=plan, seed=seed):
                    r = numeric.check(spec, os.path.join(ROOT, "models", "moe", plan), seed=seed)
                    self.assertEqual(r["agree"], right, r)

    def test_capacity_dispatch_with_more_experts_and_tokens_agrees(self):
        for folder, plan in (("moe_e8", "a2a2_capacity"), ("moe_e8", "a2a2_triangular"),
                             ("moe8", "a2a2_capacity"), ("moe8", "a2a2_triangular")):
            for seed in (1, 2):
                with self.subTest(folder=folder, plan=plan, seed=seed):
                    spec = os.path.join(ROOT, "models", folder, "spec.onnx")
                    r = numeric.check(spec, os.path.join(ROOT, "models", folder, plan), seed=seed)
                    self.assertTrue(r["agree"], r)
            with self.subTest(folder=folder, plan=plan, ties=True):  # every token to experts 0, 1
                r = numeric.check(spec, os.path.join(ROOT, "models", folder, plan), seed=1,
                                  fixed={"Wr": 0.0})
                self.assertTrue(r["agree"], r)

    def test_unsorted_top_k_agrees_in_any_order_only_where_the_plan_allows_it(self):
        # ep2_mixed takes weights from an unsorted TopK and experts from a sorted one: right
        # where the runtime sorts, wrong where it reverses (the prover says UNKNOWN).
        spec = os.path.join(ROOT, "models", "moe", "spec.onnx")
        for plan, any_order in (("ep2_unsorted", True), ("a2a2_capacity_unsorted", True),
                                ("ep2_unsorted_mixed", False)):
            for order in ("sorted", "reversed"):
                with self.subTest(plan=plan, order=order):
                    r = numeric.check(spec, os.path.join(ROOT, "models", "moe", plan), seed=1,
                                      unsorted_order=order)
                    self.assertEqual(r["agree"], any_order or order == "sorted", r)

    def test_a_capacity_below_the_routed_tokens_drops_them(self):
        # Random scores rarely send both of a rank's tokens to one expert: all-equal scores do
        # (ties go to the lower experts), as the prover's witness does.
        for folder, plan in (("moe", "a2a2_capacity_per_rank"), ("moe8", "a2a2_triangular_short")):
            with self.subTest(plan=plan):
                spec = os.path.join(ROOT, "models", folder, "spec.onnx")
                r = numeric.check(spec, os.path.join(ROOT, "models", folder, plan), seed=1,
                                  fixed={"Wr": 0.0})
                self.assertFalse(r["agree"], r)


if __name__ == "__main__":
    unittest.main()
