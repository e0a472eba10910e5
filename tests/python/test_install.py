"""`cmake --install` puts a working onnx_tv package into the install prefix's dist-packages."""
import os
import subprocess
import sys
import tempfile
import unittest

from helpers import BUILD, SHARDS_BUG, SPEC

CMAKE = os.environ.get("CMAKE_COMMAND", "cmake")
PACKAGE_DIR = os.environ.get("ONNX_TV_PYTHON_INSTALL_DIR",
                             "lib/python%d.%d/dist-packages" % sys.version_info[:2])

# Run from the scratch folder with nothing but the installed package on the path.
PROBE = """
import onnx_tv, sys
result = onnx_tv.check(sys.argv[1], sys.argv[2])
print(onnx_tv.__file__)
print(result.verdict, result.locations[1].node)
"""


class Install(unittest.TestCase):
    def test_installed_package_imports_and_checks(self):
        with tempfile.TemporaryDirectory() as prefix:
            subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix, "--component", "python"],
                           check=True, stdout=subprocess.DEVNULL)
            package = os.path.join(prefix, PACKAGE_DIR, "onnx_tv")
            names = os.listdir(package)
            self.assertIn("__init__.py", names)
            self.assertTrue(any(n.startswith("_core.") and n.endswith(".so") for n in names), names)
            self.assertNotIn("__pycache__", names)
            env = dict(os.environ, PYTHONPATH=os.path.join(prefix, PACKAGE_DIR))
            done = subprocess.run([sys.executable, "-c", PROBE, SPEC, SHARDS_BUG], cwd=prefix,
                                  env=env, check=True, stdout=subprocess.PIPE, text=True)
            where, verdict = done.stdout.splitlines()
            self.assertEqual(where, os.path.join(package, "__init__.py"))
            self.assertEqual(verdict, "NOT EQUIVALENT /fc2/MatMul")


if __name__ == "__main__":
    unittest.main()
