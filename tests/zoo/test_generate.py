"""The committed small zoo is exactly what the generator produces."""
import filecmp
import os
import subprocess
import tempfile
import unittest

from _paths import ROOT, ZOO


def tree(path):
    out = []
    for d, _, files in os.walk(path):
        out += [os.path.relpath(os.path.join(d, f), path) for f in files]
    return sorted(out)


class RegenerateTest(unittest.TestCase):
    def test_bit_for_bit(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "zoo")
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "zoo", "generate.py"),
                            "--out", out], check=True, stdout=subprocess.DEVNULL)
            self.assertEqual(tree(out), tree(ZOO))
            for f in tree(out):
                self.assertTrue(filecmp.cmp(os.path.join(out, f), os.path.join(ZOO, f), shallow=False),
                                "%s differs from the committed zoo" % f)

    def test_small_enough(self):
        size = sum(os.path.getsize(os.path.join(ZOO, f)) for f in tree(ZOO))
        self.assertLess(size, 20e6)


if __name__ == "__main__":
    unittest.main()
