#!/usr/bin/python3
"""Run a spec and a plan numerically in float64 and compare every bound output.

usage: run_numeric.py SPEC.onnx SHARDS_DIR [--seed N]
Exit 0 when every output agrees to 1e-9 relative, 1 when one disagrees, 2 on an input error."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from zoo.numeric import TOL, InputError, check  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec")
    ap.add_argument("shards")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        r = check(args.spec, args.shards, args.seed)
    except InputError as e:
        print("INPUT ERROR: %s" % e)
        return 2
    width = max(len(n) for n in r["errors"])
    for name, err in r["errors"].items():
        print("%-*s  max rel err %.3e  %s" % (width, name, err, "ok" if err <= TOL else "DIFFERS"))
    print("%s  (%d ranks; spec %.3fs, plan %.3fs, total %.3fs)" % (
        "AGREE" if r["agree"] else "DISAGREE", r["world"], r["t_spec"], r["t_plan"], r["t_total"]))
    return 0 if r["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
