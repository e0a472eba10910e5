"""The numeric runner reads float constants as the plan format means them (section 1), at every
size: a spec table and the ranks' slices of it must get the same numbers, or a correct plan whose
table is larger than the ranks' looks wrong (fuzz seed 6000762: float16 [8192, 16] against
[8192, 4] slices)."""
import unittest

import numpy as np
from onnx import TensorProto

from _paths import ROOT  # noqa: F401  (puts tools/ on the path)
from zoo.float_meaning import meaning_array


class FloatMeaning(unittest.TestCase):
    def test_a_float16_twelfth_power_of_two_is_a_fraction(self):
        got = meaning_array(np.array([2.0 ** -12], np.float16), TensorProto.FLOAT16)
        self.assertEqual(got[0], 1.0 / 4096)

    def test_a_large_table_and_its_slice_get_the_same_meanings(self):
        rng = np.random.default_rng(0)
        table = rng.uniform(0.5, 1.5, (8192, 16)).astype(np.float16)
        whole = meaning_array(table, TensorProto.FLOAT16)
        part = meaning_array(table[:, 4:8], TensorProto.FLOAT16)
        np.testing.assert_array_equal(whole[:, 4:8], part)
        self.assertFalse(np.array_equal(whole, table.astype(np.float64)))  # meanings, not binaries


if __name__ == "__main__":
    unittest.main()
