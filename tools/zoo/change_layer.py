#!/usr/bin/env python3
"""Changes one layer of a plan the zoo generated, so that it differs from its neighbours; for
the tests of depth folding (docs/design.md section 4d), which must keep such a layer.

  change_layer.py scale DIR LAYER [--spec]   the attention scale of layer LAYER reads another
                                             constant (1/2), in every rank program (or the spec)
  change_layer.py swap DIR LAYER RANK A B     rank RANK binds layer LAYER's weights A and B
                                             the other way round (plan.json)
  change_layer.py regroup DIR LAYER          the all-reduce after layer LAYER's attention lists
                                             its members the other way round (a valid plan)
DIR holds spec.onnx and the plan folder plan/."""
import argparse
import glob
import json
import os

import numpy
import onnx
import onnx.numpy_helper


def scale(path, layer):
    m = onnx.load(path)
    nodes = list(m.graph.node)
    for n in [n for n in nodes if n.name.endswith("/layers.%d/attn/Mul_scale" % layer)]:
        other = n.name + "_other"
        c = onnx.helper.make_node("Constant", [], [other], name=other,
                                  value=onnx.numpy_helper.from_array(numpy.array(0.5, dtype=numpy.float32)))
        nodes.insert(nodes.index(n), c)
        n.input[1] = other
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    onnx.save(m, path)


def swap(plan, layer, rank, a, b):
    p = json.load(open(os.path.join(plan, "plan.json")))
    names = {"layers.%d.%s" % (layer, a): "layers.%d.%s" % (layer, b),
             "layers.%d.%s" % (layer, b): "layers.%d.%s" % (layer, a)}
    for binding in p["bindings"]:
        if binding["rank"] == rank and binding["spec"] in names:
            binding["spec"] = names[binding["spec"]]
    json.dump(p, open(os.path.join(plan, "plan.json"), "w"))


def regroup(path, layer):
    m = onnx.load(path)
    for n in m.graph.node:
        if "/layers.%d/attn/o_proj" % layer in n.name and n.op_type == "AllReduce":
            for a in n.attribute:
                if a.name == "group":
                    a.ints[:] = list(reversed(a.ints))
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("change", choices=["scale", "swap", "regroup"])
    ap.add_argument("dir")
    ap.add_argument("layer", type=int)
    ap.add_argument("rest", nargs="*")
    ap.add_argument("--spec", action="store_true", help="scale: change the spec, not the ranks")
    args = ap.parse_args()
    plan = os.path.join(args.dir, "plan")
    programs = sorted(glob.glob(os.path.join(plan, "*.onnx")))
    if args.change == "scale":
        for path in [os.path.join(args.dir, "spec.onnx")] if args.spec else programs:
            scale(path, args.layer)
    elif args.change == "swap":
        rank, a, b = args.rest
        swap(plan, args.layer, int(rank), a, b)
    else:
        for path in programs:
            regroup(path, args.layer)


if __name__ == "__main__":
    main()
