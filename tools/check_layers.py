#!/usr/bin/env python3
"""Checks the architecture's one-way layering (docs/design.md, "layer | folder | depends on"):
every `#include "<folder>/..."` in src/<layer> names the layer itself or one it may use, and
every namespace opened in src/<layer> is onnx_tv::<layer> or nested in it (common is onnx_tv).
Prints each violation as file:line and exits 1 if there is one."""
import os
import re
import sys

# What each layer may include: the layers it depends on, directly or through those below.
BELOW = {
    "common": [],
    "solver": ["common"],
    "ir": ["solver", "common"],
    "ops": ["ir", "solver", "common"],
    "frontend": ["ir", "solver", "common"],
    "exec": ["ops", "ir", "solver", "common"],
    "reduce": ["exec", "ops", "ir", "solver", "common"],
    "fold": ["ir", "solver", "common"],
    "check": ["reduce", "fold", "exec", "frontend", "ops", "ir", "solver", "common"],
    "eval": ["exec", "frontend", "ops", "ir", "solver", "common"],
    "dist": ["common"],
    "cli": ["check", "eval", "dist", "reduce", "exec", "frontend", "ops", "ir", "solver", "common"],
    "python": ["check", "reduce", "exec", "frontend", "ops", "ir", "solver", "common"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
NAMESPACE = re.compile(r"^namespace\s+(onnx_tv(?:::[a-z_]+)*)\s*\{")


def check(src):
    problems = []
    layers = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for layer in layers:
        if layer not in BELOW:
            problems.append("src/%s: a folder that is not a layer of docs/design.md" % layer)
            continue
        allowed = set(BELOW[layer]) | {layer}
        own = "onnx_tv" if layer == "common" else "onnx_tv::" + layer
        for name in sorted(os.listdir(os.path.join(src, layer))):
            path = os.path.join(src, layer, name)
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m and m.group(1) in BELOW and m.group(1) not in allowed:
                        problems.append("src/%s/%s:%d: %s includes %s" % (layer, name, n, layer, m.group(1)))
                    m = NAMESPACE.match(line)
                    if m and m.group(1) != own and not m.group(1).startswith(own + "::"):
                        problems.append("src/%s/%s:%d: namespace %s in folder %s" % (layer, name, n, m.group(1), layer))
    return problems


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
    problems = check(src)
    for p in problems:
        print(p)
    print("layers: %d violations" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
