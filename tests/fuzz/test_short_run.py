"""The fuzzer's CI mode: a fixed list of seeds (FUZZ_SEEDS: 200 seeds, about two minutes on two cores;
the train and counts families are slower per case than the step programs).

It fails on a generator fault (an invalid case: the fuzzer itself is broken), on a crash of
onnx-tv, and, once the issue-16 fixes are merged and ONNX_TV_FUZZ_STRICT=1 is set, on any
disagreement between onnx-tv and the float64 run. Until then disagreements are printed only.
"""
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZ_SEEDS = os.environ.get("ONNX_TV_FUZZ_SEEDS", "0:200")


class ShortRun(unittest.TestCase):
    def test_seeds(self):
        cmd = ["/usr/bin/python3", os.path.join(ROOT, "tools", "fuzz", "run.py"),
               "--seeds", FUZZ_SEEDS]
        if os.environ.get("ONNX_TV_BINARY"):
            cmd += ["--binary", os.environ["ONNX_TV_BINARY"]]
        if os.environ.get("ONNX_TV_FUZZ_STRICT") == "1":
            cmd.append("--strict")
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(p.stdout)
        self.assertEqual(p.returncode, 0, p.stdout[-3000:])
        self.assertNotIn("crash", p.stdout.splitlines()[-1], "onnx-tv crashed on a fuzz case")


if __name__ == "__main__":
    unittest.main()
