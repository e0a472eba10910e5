"""The cases the campaign mutates (a spec.onnx under models/ with one of its shards folders),
found in a fixed order since a mutant's seed names its case by index, and the copy of one being
mutated. Skip is here too: every mutation raises it when it does not apply to the case."""
import json
import os

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "..", "..", ".."))
MODELS = os.path.join(ROOT, "models")


class Skip(Exception):
    """A mutation that does not apply to this case (no plan.json, no attribute, ...): another
    one is drawn instead, so that every mutant carries the number of mutations it drew."""


def find_cases(models=MODELS):
    """(spec, shards) pairs, paths relative to models/, in a fixed order (mutant seeds name
    cases by index). A shards folder is any folder below a spec's holding rank*.onnx files or a
    plan.json (the SPMD folders hold stage*.onnx programs)."""
    found = []
    for top, dirs, files in os.walk(models):
        dirs.sort()
        if "spec.onnx" not in files:
            continue
        for sub, subdirs, subfiles in os.walk(top):
            subdirs.sort()
            if sub == top:
                continue
            ranks = [f for f in subfiles if f.startswith("rank") and f.endswith(".onnx")]
            if ranks or "plan.json" in subfiles:
                found.append((os.path.relpath(os.path.join(top, "spec.onnx"), models),
                              os.path.relpath(sub, models)))
    return found


class Case:
    """A copied case being mutated: folder/spec.onnx and folder/shards/."""

    def __init__(self, folder):
        self.folder = folder
        self.spec = os.path.join(folder, "spec.onnx")
        self.shards = os.path.join(folder, "shards")
        self.plan = os.path.join(self.shards, "plan.json")

    def programs(self):
        if not os.path.isdir(self.shards):
            return []
        return [os.path.join(self.shards, f) for f in sorted(os.listdir(self.shards))
                if f.endswith(".onnx")]

    def files(self):
        return [self.spec] + self.programs() + ([self.plan] if os.path.exists(self.plan) else [])

    def rel(self, path):
        return os.path.relpath(path, self.folder)

    def world(self):
        """The world size the plan states, else the number of programs (for choosing ranks
        just inside and just outside the valid range)."""
        try:
            with open(self.plan) as f:
                w = json.load(f).get("world_size")
            if isinstance(w, int) and 0 < w < 1 << 20:
                return w
        except Exception:  # no plan.json, or one already mutated past reading
            pass
        return max(1, len(self.programs()))
