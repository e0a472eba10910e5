"""The fuzzer's CI mode: a fixed list of seeds (FUZZ_SEEDS: 200 seeds, about two minutes on two cores;
the train and counts families are slower per case than the step programs).

It fails on a generator fault (an invalid case: the fuzzer itself is broken), on a crash of
onnx-tv, on a wrong EQUIVALENT, on a false alarm (reduced refutes what --no-reduce and the
float64 run accept), on a refutation the float64 run contradicts and on the two modes parting
otherwise. UNKNOWN, input errors and timeouts are printed; ONNX_TV_FUZZ_STRICT=1 fails on them
too.
"""
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZ_SEEDS = os.environ.get("ONNX_TV_FUZZ_SEEDS", "0:200")
FAIL_ON = ["crash", "wrong_equivalent", "false_alarm", "refuted_numeric_agrees", "mode_mismatch"]


class ShortRun(unittest.TestCase):
    def test_seeds(self):
        cmd = ["/usr/bin/python3", os.path.join(ROOT, "tools", "fuzz", "run.py"),
               "--seeds", FUZZ_SEEDS]
        if os.environ.get("ONNX_TV_BINARY"):
            cmd += ["--binary", os.environ["ONNX_TV_BINARY"]]
        if os.environ.get("ONNX_TV_FUZZ_STRICT") == "1":
            cmd.append("--strict")
        else:
            cmd += ["--fail-on", ",".join(FAIL_ON)]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(p.stdout)
        self.assertEqual(p.returncode, 0, p.stdout[-3000:])
        self.assertNotIn("crash", p.stdout.splitlines()[-1], "onnx-tv crashed on a fuzz case")


if __name__ == "__main__":
    unittest.main()
