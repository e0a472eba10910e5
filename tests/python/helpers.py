"""Where the tests find the sources, the build and the CLI, and the CLI's output to compare with."""
import json
import os
import re
import subprocess
import tempfile

SOURCE = os.environ.get("ONNX_TV_SOURCE_DIR",
                        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD = os.environ.get("ONNX_TV_BUILD_DIR", os.path.join(SOURCE, "build"))
BINARY = os.environ.get("ONNX_TV_BINARY", os.path.join(BUILD, "onnx-tv"))

EXAMPLE = os.path.join(SOURCE, "models", "examples", "mlp_tp2")
SPEC = os.path.join(EXAMPLE, "spec.onnx")
SHARDS = os.path.join(EXAMPLE, "shards")          # EQUIVALENT
SHARDS_BUG = os.path.join(EXAMPLE, "shards_bug")  # NOT EQUIVALENT: the all-reduce is missing
NAN_LOG = os.path.join(SOURCE, "models", "edge_cases", "nan_log")          # INPUT ERROR
OLD_OPSET = os.path.join(SOURCE, "models", "edge_cases", "ir3_opset5")     # UNKNOWN
MICRO_BATCHES = os.path.join(SOURCE, "models", "handwritten", "mlp_mb4")   # 2 instances

# The summary line's time differs from run to run.
_SECONDS = re.compile(r"[0-9]+\.[0-9]+ s\n\Z")


def without_time(text):
    return _SECONDS.sub("<time> s\n", text)


def without_seconds(report):
    report = json.loads(json.dumps(report))
    report["stats"].pop("seconds")
    return report


class CliRun:
    """`onnx-tv check` run on the same arguments: its exit code, standard output and report."""

    def __init__(self, spec, shards, *options):
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "report.json")
            done = subprocess.run([BINARY, "check", spec, shards, "--no-progress", "--json", report,
                                   *options], stdout=subprocess.PIPE, check=False)
            self.exit_code = done.returncode
            self.stdout = done.stdout.decode()
            with open(report, encoding="utf-8") as f:
                self.report = json.load(f)
