"""The example of docs/pytorch.md, run as a user runs it: models/torch/check_llama_block.py
exports the Llama block under DP x TP from the user's code and checks it; with a seeded bug it
ends NOT EQUIVALENT at the user's module."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "models", "torch", "check_llama_block.py")


def run(*args):
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([sys.executable, SCRIPT, tmp] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=600)
        files = sorted(os.listdir(os.path.join(tmp, "shards")))
    return p, files


class Example(unittest.TestCase):
    def test_docs_lines_run_as_written(self):
        """The ten-odd lines of docs/pytorch.md, run verbatim in a scratch folder."""
        with open(os.path.join(ROOT, "docs", "pytorch.md")) as f:
            doc = f.read()
        start = doc.index("```python\nimport torch, torch.distributed")
        code = doc[start + len("```python\n"):doc.index("```", start + 10)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.join(ROOT, "models", "torch")] + env.get("PYTHONPATH", "").split(os.pathsep))
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([sys.executable, "-c", code], cwd=tmp, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("EQUIVALENT\n"), p.stdout + p.stderr)

    def test_correct_plan(self):
        p, files = run()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(p.stdout.startswith("EQUIVALENT\n"), p.stdout)
        self.assertEqual(files, ["plan.json", "program0.onnx"])

    def test_missing_all_reduce(self):
        p, _ = run("--bug", "missing-all-reduce")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("first diverging operator, plan: /ffn/w3/backward/", p.stdout)

    def test_wrong_n(self):
        p, _ = run("--bug", "wrong-n")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(".grad", p.stdout)
        self.assertIn("first diverging operator, plan: /div", p.stdout)


if __name__ == "__main__":
    unittest.main()
