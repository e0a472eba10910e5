#!/usr/bin/python3
"""Seed corpora for the libFuzzer harnesses (fuzz/), made from the bundled models rather than
kept as binary files in the repository:

  load_model/  every small .onnx under models/ and tests/fuzz/cases/
  plan_json/   every small plan.json there, and plans shaped for the harness's fixed programs
  check/       whole cases (spec, plan.json, up to four programs) packed as fuzz/sections.h
               says, from models/, tests/fuzz/cases/ and cases drawn by the differential
               fuzzer (tools/fuzz/gen.py and its families)

  tools/fuzz/libfuzzer_seeds.py OUT_DIR [--generated N]
  tools/fuzz/libfuzzer_seeds.py --unpack FILE DIR   # a check input -> DIR/spec.onnx, DIR/shards
  tools/fuzz/libfuzzer_seeds.py --pack DIR FILE     # the reverse, for DIR/spec.onnx, DIR/shards

Files are named by the SHA-1 of their bytes, so running it twice gives the same corpus.
"""
import argparse
import hashlib
import json
import os
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))

MAX_MODEL = 64 << 10  # larger seeds slow every execution down
MAX_PLAN = 16 << 10
MAX_CASE = 64 << 10
MAX_PROGRAMS = 4
MARK = b"\n@@file "  # fuzz/sections.h

# plan.json texts for the plan harness's fixed folder: rank0.onnx .. rank3.onnx and stage.onnx
# (with metadata bindings), each holding AllReduce over mesh axis "tp" and Send/Recv along "pp".
PLAN_SEEDS = [
    {"format": "onnx-tv.plan/1", "world_size": 4,
     "mesh": {"axes": ["pp", "tp"], "shape": [2, 2]},
     "bindings": [{"rank": 0, "value": "x", "spec": "x", "slice": [[0, 4], None]},
                  {"ranks": {"pp": 1}, "value": "y", "spec": "y", "partial": "sum"}]},
    {"format": "onnx-tv.plan/1", "world_size": 4,
     "mesh": {"axes": ["pp", "tp"], "shape": [2, 2]},
     "programs": [{"file": "stage.onnx", "ranks": {"pp": 0}},
                  {"file": "rank1.onnx", "ranks": [2, 3]}],
     "bindings": [{"ranks": {"tp": 1}, "value": "x", "spec": "x",
                   "placements": ["Shard(0)", "Replicate()"], "local_slice": [[0, 2], None]}]},
    {"format": "onnx-tv.plan/1", "world_size": 2,
     "ranks": {"0": "rank0.onnx", "1": "stage.onnx"},
     "bindings": [{"rank": 0, "value": "y", "spec": "y", "partial": "sum", "group": "g"}]},
    {"world_size": 8, "mesh": {"axes": ["dp", "pp", "tp"], "shape": [2, 2, 2]},
     "programs": [{"file": "stage.onnx", "ranks": {}}],
     "bindings": [{"ranks": {"dp": [0, 1]}, "value": "y", "spec": "y",
                   "placements": ["Partial()", "Replicate()", "Shard(1)"]}]},
]


def sha1_name(data):
    return hashlib.sha1(data).hexdigest()


def put(folder, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, sha1_name(data)), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def case_folders(roots):
    """(spec path, shards folder) for every folder under roots holding spec.onnx, with each of
    its subfolders that holds programs (shards, shards_bug, plans/x, bugs/y, ...)."""
    for root in roots:
        for d, subdirs, files in os.walk(root):
            if "spec.onnx" not in files:
                continue
            for sd, _, sfiles in os.walk(d):
                if sd != d and any(f.endswith(".onnx") for f in sfiles):
                    yield os.path.join(d, "spec.onnx"), sd


def pack(spec, shards):
    """The check harness's input for one case, or None when it is too large."""
    files = sorted(f for f in os.listdir(shards) if os.path.isfile(os.path.join(shards, f)))
    programs = [f for f in files if f.endswith(".onnx")]
    if len(programs) > MAX_PROGRAMS or any(f not in programs and f != "plan.json" for f in files):
        return None
    parts = [(b"spec.onnx", read(spec))]
    parts += [(f.encode(), read(os.path.join(shards, f))) for f in files]
    data = b"".join(MARK + name + b"\n" + body for name, body in parts)
    return data if len(data) <= MAX_CASE else None


def unpack(path, folder):
    """Writes the sections of a check input as the harness does (fuzz/check_fuzzer.cpp)."""
    data = read(path)
    os.makedirs(os.path.join(folder, "shards"), exist_ok=True)
    chunks = data.split(MARK)[1:]
    for chunk in chunks[:6]:
        name, _, body = chunk.partition(b"\n")
        name = name.decode("latin-1")
        if not name or name.startswith(".") or len(name) > 64 or \
                any(not (c.isascii() and (c.isalnum() or c in "._-")) for c in name):
            continue
        target = os.path.join(folder, name if name == "spec.onnx" else os.path.join("shards", name))
        with open(target, "wb") as f:
            f.write(body)
    print("unpacked %s into %s" % (path, folder))


def generated_cases(n, work):
    """n cases of the differential fuzzer's generators, written under work."""
    from fuzz.gen import generate
    from fuzz.writer import write_case
    for seed in range(n):
        folder = write_case(generate(seed), os.path.join(work, "case%d" % seed))
        yield os.path.join(folder, "spec.onnx"), os.path.join(folder, "shards")


def main():
    if len(sys.argv) == 4 and sys.argv[1] in ("--unpack", "--pack"):
        if sys.argv[1] == "--unpack":
            unpack(sys.argv[2], sys.argv[3])
        else:
            folder = sys.argv[2]
            data = pack(os.path.join(folder, "spec.onnx"), os.path.join(folder, "shards"))
            if data is None:
                sys.exit("%s: more than %d programs, other files, or more than %d bytes"
                         % (folder, MAX_PROGRAMS, MAX_CASE))
            with open(sys.argv[3], "wb") as f:
                f.write(data)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--generated", type=int, default=40,
                    help="cases drawn by the differential fuzzer's generators (default 40)")
    a = ap.parse_args()
    roots = [os.path.join(ROOT, "models"), os.path.join(ROOT, "tests", "fuzz", "cases")]
    counts = {}
    for root in roots:
        for d, _, files in os.walk(root):
            for f in files:
                p = os.path.join(d, f)
                size = os.path.getsize(p)
                if f.endswith(".onnx") and size <= MAX_MODEL:
                    put(os.path.join(a.out, "load_model"), read(p))
                elif f == "plan.json" and size <= MAX_PLAN:
                    put(os.path.join(a.out, "plan_json"), read(p))
    for plan in PLAN_SEEDS:
        put(os.path.join(a.out, "plan_json"), json.dumps(plan, indent=1).encode())
    with tempfile.TemporaryDirectory() as work:
        cases = list(case_folders(roots))
        if a.generated:
            cases += list(generated_cases(a.generated, work))
        for spec, shards in cases:
            data = pack(spec, shards)
            if data:
                put(os.path.join(a.out, "check"), data)
    for h in ("load_model", "plan_json", "check"):
        folder = os.path.join(a.out, h)
        counts[h] = len(os.listdir(folder)) if os.path.isdir(folder) else 0
    print("seeds: " + ", ".join("%s %d" % kv for kv in counts.items()))


if __name__ == "__main__":
    main()
