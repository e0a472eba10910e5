"""ONNX mutations of nodes: dropped or bypassed, duplicated, reordered, op types and domains
changed (to collectives too), attributes changed, removed, added or of the wrong type, inputs
and outputs renamed, swapped, dropped or added."""
import copy

import numpy as np
import onnx
from onnx import AttributeProto, numpy_helper

from .cases import Skip
from .hostile import HUGE_INTS, ODD_FLOATS, ODD_STRINGS, SMALL_INTS, hostile_int
from .onnx_edit import (COMM_DOMAINS, KNOWN_ATTRS, MS_OPS, ONNX_TV_OPS, OTHER_OPS, SIMILAR,
                        node_label, onnx_mutation, pick_node, value_names)
from .onnx_graph import mutate_tensor


@onnx_mutation
def onnx_drop_node(rng, m, case):
    g = m.graph
    i = pick_node(rng, g)
    label = node_label(g, i)
    n = g.node[i]
    if rng.random() < 0.5 or not n.input or not n.output or not n.input[0]:
        del g.node[i]
        return "dropped " + label
    # Bypassed rather than dropped, as an exporter that forgets an op writes it: readers of
    # its first output read its first input, so the graph stays well-formed and the mutant
    # gets as far as the proof (usually a wrong plan, or a shape error).
    src, out = n.input[0], n.output[0]
    del g.node[i]
    for other in g.node:
        for k, name in enumerate(other.input):
            if name == out:
                other.input[k] = src
    for vi in g.output:
        if vi.name == out:
            vi.name = src
    return "bypassed " + label


@onnx_mutation
def onnx_dup_node(rng, m, case):
    g = m.graph
    i = pick_node(rng, g)
    at = rng.choice([i + 1, len(g.node), 0])
    dup = copy.deepcopy(g.node[i])
    g.node.insert(at, dup)
    return "duplicated %s at %d (same outputs)" % (node_label(g, i if at > i else i + 1), at)


@onnx_mutation
def onnx_reorder(rng, m, case):
    g = m.graph
    if len(g.node) < 2:
        raise Skip()
    nodes = list(g.node)
    how = rng.choice(["swap", "swap_legal", "swap_legal", "reverse", "shuffle", "last_first"])
    if how == "swap_legal":
        # two neighbours where the second does not read the first: still in topological
        # order, so only the order of collectives (which pairs them up) can change the answer
        legal = [k for k in range(len(nodes) - 1)
                 if not set(nodes[k].output) & set(nodes[k + 1].input)]
        comm = [k for k in legal if nodes[k].domain in COMM_DOMAINS
                or nodes[k + 1].domain in COMM_DOMAINS]
        if not legal:
            raise Skip()
        k = rng.choice(comm if comm and rng.random() < 0.5 else legal)
        nodes[k], nodes[k + 1] = nodes[k + 1], nodes[k]
        how = "swapped independent nodes %d and %d (%s, %s)" % (
            k, k + 1, nodes[k + 1].op_type, nodes[k].op_type)
    elif how == "swap":
        i, j = sorted(rng.sample(range(len(nodes)), 2))
        nodes[i], nodes[j] = nodes[j], nodes[i]
        how = "swapped nodes %d and %d" % (i, j)
    elif how == "reverse":
        nodes.reverse()
        how = "node order reversed"
    elif how == "shuffle":
        rng.shuffle(nodes)
        how = "nodes shuffled"
    else:
        nodes.insert(0, nodes.pop())
        how = "last node moved first"
    del g.node[:]
    g.node.extend(nodes)
    return how


def comm_attrs(rng, n, op, world):
    """Plausible attributes for a node turned into a collective, half the time, so that the
    change gets past "missing attribute" and into group matching and shapes."""
    if rng.random() < 0.5:
        return
    group = list(range(world))
    if op in ("AllReduce", "AllGather", "ReduceScatter", "AllToAll", "Broadcast"):
        n.attribute.append(onnx.helper.make_attribute("group", group))
    if op in ("AllGather", "ReduceScatter"):
        n.attribute.append(onnx.helper.make_attribute("axis", rng.choice([0, 1, -1])))
    if op in ("Send", "Recv"):
        n.attribute.append(onnx.helper.make_attribute("peer", rng.randrange(world)))


@onnx_mutation
def onnx_op_type(rng, m, case):
    g = m.graph
    i = pick_node(rng, g)
    n = g.node[i]
    label = node_label(g, i)
    how = rng.choice(["similar", "similar", "other", "onnx_tv", "com.microsoft"])
    if how == "similar":
        family = [f for f in SIMILAR if n.op_type in f]
        op = rng.choice(family[0] if family else OTHER_OPS)
        n.domain = ""
    elif how == "other":
        op = rng.choice(OTHER_OPS)
        n.domain = ""
    elif how == "onnx_tv":
        op = rng.choice(ONNX_TV_OPS)
        n.domain = "onnx_tv"
        if rng.random() < 0.5:
            del n.attribute[:]
        comm_attrs(rng, n, op, case.world())
    else:
        op = rng.choice(MS_OPS)
        n.domain = "com.microsoft"
        if rng.random() < 0.5:
            del n.attribute[:]
    n.op_type = op
    return "%s -> %s%s" % (label, n.domain + "." if n.domain else "", op)


@onnx_mutation
def onnx_domain(rng, m, case):
    g = m.graph
    i = pick_node(rng, g)
    label = node_label(g, i)
    d = rng.choice(["", "onnx_tv", "com.microsoft", "ai.onnx", "ai.onnx.ml", "bogus.domain",
                    "ONNX_TV"])
    g.node[i].domain = d
    return "%s: domain -> %r" % (label, d)


def set_attr_value(rng, a):
    """A hostile value of the attribute's own type; returns what was done."""
    t = a.type
    if t == AttributeProto.INT:
        a.i = hostile_int(rng)
        return "= %d" % a.i
    if t == AttributeProto.INTS:
        vals = list(a.ints)
        how = rng.choice(["elem", "empty", "repeat", "out_of_range", "negative", "huge", "drop",
                          "shuffle", "extend"])
        if how == "elem" and vals:
            vals[rng.randrange(len(vals))] = hostile_int(rng)
        elif how == "empty":
            vals = []
        elif how == "repeat":
            vals = vals + vals[:1] if vals else [0, 0]
        elif how == "out_of_range":
            vals = vals + [rng.choice([9, 64, 1 << 20])]
        elif how == "negative":
            vals = [-1] + vals
        elif how == "huge":
            vals = [rng.choice(HUGE_INTS)] + vals[1:]
        elif how == "drop" and vals:
            vals.pop(rng.randrange(len(vals)))
        elif how == "shuffle":
            rng.shuffle(vals)
        else:
            vals = vals + [hostile_int(rng) for _ in range(rng.randint(1, 3))]
        del a.ints[:]
        a.ints.extend(vals)
        return "= %s (%s)" % (vals[:8], how)
    if t == AttributeProto.FLOAT:
        a.f = rng.choice(ODD_FLOATS)
        return "= %r" % a.f
    if t == AttributeProto.FLOATS:
        del a.floats[:]
        a.floats.extend(rng.choice(ODD_FLOATS) for _ in range(rng.randint(0, 3)))
        return "= %s" % list(a.floats)
    if t == AttributeProto.STRING:
        s = rng.choice(ODD_STRINGS)
        a.s = s.encode() if rng.random() < 0.9 else b"\xff\xfe\x00"
        return "= %r" % a.s[:20]
    if t == AttributeProto.STRINGS:
        vals = list(a.strings)
        how = rng.choice(["empty", "repeat", "unknown", "drop", "extend"])
        if how == "empty":
            vals = []
        elif how == "repeat":
            vals = vals + vals[:1] if vals else [b"tp", b"tp"]
        elif how == "unknown":
            vals = vals[:-1] + [rng.choice(ODD_STRINGS).encode()]
        elif how == "drop" and vals:
            vals.pop(rng.randrange(len(vals)))
        else:
            vals = vals + [rng.choice([b"dp", b"pp", b"tp", b"zz"])]
        del a.strings[:]
        a.strings.extend(vals)
        return "= %s (%s)" % (vals[:8], how)
    if t == AttributeProto.TENSOR:
        return "tensor " + mutate_tensor(rng, a.t)
    raise Skip()


def wrong_type(rng, a):
    """The attribute given with another type: either consistently (axis as a float, group as
    one int) or with the type field disagreeing with the field that holds the value."""
    types = [AttributeProto.INT, AttributeProto.INTS, AttributeProto.FLOAT, AttributeProto.STRING,
             AttributeProto.STRINGS, AttributeProto.FLOATS, AttributeProto.TENSOR,
             AttributeProto.GRAPH, AttributeProto.UNDEFINED, AttributeProto.SPARSE_TENSOR]
    new = rng.choice([t for t in types if t != a.type])
    if rng.random() < 0.5:
        a.type = new
        return "type field -> %d, value fields kept" % new
    name = a.name
    a.Clear()
    a.name = name
    a.type = new
    if new == AttributeProto.INT:
        a.i = rng.choice(SMALL_INTS)
    elif new == AttributeProto.INTS:
        a.ints.extend([0, 1])
    elif new == AttributeProto.FLOAT:
        a.f = 1.0
    elif new == AttributeProto.STRING:
        a.s = b"1"
    elif new == AttributeProto.STRINGS:
        a.strings.extend([b"0", b"1"])
    elif new == AttributeProto.FLOATS:
        a.floats.extend([0.0, 1.0])
    elif new == AttributeProto.TENSOR:
        a.t.CopyFrom(numpy_helper.from_array(np.array([1], dtype=np.int64)))
    elif new == AttributeProto.GRAPH:
        a.g.name = "empty"
    return "retyped as %d" % new


@onnx_mutation
def onnx_attr(rng, m, case):
    g = m.graph
    how = rng.choice(["change", "change", "change", "remove", "add", "wrong_type"])
    i = pick_node(rng, g, None if how == "add" else lambda n: len(n.attribute) > 0)
    n = g.node[i]
    label = node_label(g, i)
    if how == "add":
        name = rng.choice(KNOWN_ATTRS)
        kind = rng.choice(["int", "ints", "string", "strings", "float"])
        value = {"int": lambda: hostile_int(rng),
                 "ints": lambda: [rng.choice(SMALL_INTS) for _ in range(rng.randint(0, 4))],
                 "string": lambda: rng.choice(ODD_STRINGS),
                 "strings": lambda: [rng.choice(["dp", "pp", "tp", "zz"])],
                 "float": lambda: rng.choice(ODD_FLOATS)}[kind]()
        if value == []:  # make_attribute cannot infer a type from an empty list
            attr = AttributeProto(name=name, type=AttributeProto.INTS)
        else:
            attr = onnx.helper.make_attribute(name, value)
        n.attribute.append(attr)  # possibly a second attribute of one name
        return "%s: added %s = %r" % (label, name, value if not isinstance(value, list)
                                      else value[:8])
    a = rng.choice(n.attribute)
    if how == "remove":
        n.attribute.remove(a)
        return "%s: removed %s" % (label, a.name)
    if how == "wrong_type":
        return "%s: %s %s" % (label, a.name, wrong_type(rng, a))
    return "%s: %s %s" % (label, a.name, set_attr_value(rng, a))


@onnx_mutation
def onnx_node_io(rng, m, case):
    g = m.graph
    i = pick_node(rng, g)
    n = g.node[i]
    label = node_label(g, i)
    names = value_names(g)
    how = rng.choice(["rename_input", "rename_input", "rename_input_missing", "swap_inputs",
                      "drop_input", "add_input", "add_empty_input", "drop_output", "add_output",
                      "rename_output_existing", "empty_output"])
    if how.startswith("rename_input"):
        if not n.input:
            raise Skip()
        k = rng.randrange(len(n.input))
        old = n.input[k]
        n.input[k] = "no_such_value" if how.endswith("missing") else rng.choice(names)
        return "%s: input %d %r -> %r" % (label, k, old, n.input[k])
    if how == "swap_inputs":
        if len(n.input) < 2:
            raise Skip()
        a, b = rng.sample(range(len(n.input)), 2)
        n.input[a], n.input[b] = n.input[b], n.input[a]
        return "%s: inputs %d and %d swapped" % (label, a, b)
    if how == "drop_input":
        if not n.input:
            raise Skip()
        k = rng.randrange(len(n.input))
        old = n.input[k]
        del n.input[k]
        return "%s: input %d %r dropped" % (label, k, old)
    if how in ("add_input", "add_empty_input"):
        extra = "" if how == "add_empty_input" else rng.choice(names)
        n.input.append(extra)
        return "%s: input %r added" % (label, extra)
    if how == "drop_output":
        if not n.output:
            raise Skip()
        k = rng.randrange(len(n.output))
        old = n.output[k]
        del n.output[k]
        return "%s: output %d %r dropped" % (label, k, old)
    if how == "add_output":
        extra = rng.choice(["extra_out_%d" % i, rng.choice(names)])
        n.output.append(extra)
        return "%s: output %r added" % (label, extra)
    if not n.output:
        raise Skip()
    k = rng.randrange(len(n.output))
    old = n.output[k]
    n.output[k] = "" if how == "empty_output" else rng.choice(names)
    return "%s: output %d %r -> %r" % (label, k, old, n.output[k])
