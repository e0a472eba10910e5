"""Every saved fuzz case through the binary, reduced and with --no-reduce: the verdict must be
the one the full-size float64 run gives (case.json `expect`).

tests/fuzz/cases/ is replayed always. tests/fuzz/pending/ holds the minimal cases of issue-16
classes whose fixes are not merged yet: set ONNX_TV_FUZZ_PENDING=1 to replay them too (or move a
class's folders into cases/ once its fix is in).
"""
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from fuzz import cases  # noqa: E402

BINARY = os.environ.get("ONNX_TV_BINARY", os.path.join(ROOT, "build", "onnx-tv"))
CODE = {"EQUIVALENT": 0, "NOT EQUIVALENT": 1}


def roots():
    out = [cases.CASES]
    if os.environ.get("ONNX_TV_FUZZ_PENDING") == "1":
        out.append(cases.PENDING)
    return out


class Replay(unittest.TestCase):
    def test_saved_cases(self):
        found = [c for r in roots() for c in cases.load(r)]
        for name, folder, meta in found:
            for flags in ([], ["--no-reduce"]):
                with self.subTest(case=name, flags=flags, issue_class=meta.get("issue_class")):
                    p = subprocess.run([BINARY, "check", os.path.join(folder, "spec.onnx"),
                                        os.path.join(folder, "shards")] + flags,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       timeout=120)
                    self.assertEqual(p.returncode, CODE[meta["expect"]], p.stdout[-2000:])

    def test_cases_are_reproducible(self):
        """Each case.json recipe still writes the committed files (the generator did not drift)."""
        import tempfile
        from fuzz.writer import write_case
        for root in (cases.CASES, cases.PENDING):
            for name, folder, meta in cases.load(root):
                with self.subTest(case=name), tempfile.TemporaryDirectory() as tmp:
                    out = write_case(meta["recipe"], os.path.join(tmp, "c"))
                    for rel in ["spec.onnx"] + ["shards/" + f for f in os.listdir(
                            os.path.join(folder, "shards"))]:
                        with open(os.path.join(folder, rel), "rb") as a, \
                                open(os.path.join(out, rel), "rb") as b:
                            self.assertEqual(a.read(), b.read(), rel)


if __name__ == "__main__":
    unittest.main()
