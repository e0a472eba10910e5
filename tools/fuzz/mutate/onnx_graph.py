"""ONNX mutations around the nodes: graph inputs and outputs, declared dims, element types and
ranks, initializers and Constant tensors (mutate_tensor serves tensor attributes too), opset
imports and ir_version."""
import copy

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper

from .cases import Skip
from .hostile import DIMS, ELEM_TYPES, ODD_FLOATS
from .onnx_edit import onnx_mutation, pick_node, value_names


@onnx_mutation
def onnx_graph_io(rng, m, case):
    g = m.graph
    how = rng.choice(["drop_output", "add_output", "drop_input", "dup_input", "dup_output",
                      "rename_input", "rename_output", "input_from_node"])
    if how == "drop_output" and g.output:
        k = rng.randrange(len(g.output))
        name = g.output[k].name
        del g.output[k]
        return "graph output %r dropped" % name
    if how == "add_output":
        names = value_names(g)
        name = rng.choice(names) if names else "nothing"
        vi = g.output.add()
        vi.name = name
        if rng.random() < 0.5:  # an output without a type, as some exporters write them
            vi.type.tensor_type.elem_type = rng.choice(ELEM_TYPES)
        return "graph output %r added" % name
    if how == "drop_input" and g.input:
        k = rng.randrange(len(g.input))
        name = g.input[k].name
        del g.input[k]
        return "graph input %r dropped" % name
    if how == "dup_input" and g.input:
        g.input.append(copy.deepcopy(rng.choice(g.input)))
        return "graph input %r duplicated" % g.input[-1].name
    if how == "dup_output" and g.output:
        g.output.append(copy.deepcopy(rng.choice(g.output)))
        return "graph output %r duplicated" % g.output[-1].name
    if how == "rename_input" and g.input:
        vi = rng.choice(g.input)
        old, vi.name = vi.name, rng.choice(["renamed_input", ""] + value_names(g))
        return "graph input %r renamed %r" % (old, vi.name)
    if how == "rename_output" and g.output:
        vi = rng.choice(g.output)
        old, vi.name = vi.name, rng.choice(["renamed_output", ""] + value_names(g))
        return "graph output %r renamed %r" % (old, vi.name)
    if how == "input_from_node" and g.node:
        # A value both computed by a node and declared as a graph input.
        n = g.node[pick_node(rng, g, lambda n: len(n.output) > 0)]
        vi = g.input.add()
        vi.name = n.output[0]
        vi.type.tensor_type.elem_type = TensorProto.FLOAT
        return "node output %r also declared a graph input" % vi.name
    raise Skip()


def pick_value_info(rng, g):
    vis = [("input", v) for v in g.input] + [("output", v) for v in g.output] + \
          [("value_info", v) for v in g.value_info]
    vis = [(w, v) for w, v in vis if v.type.HasField("tensor_type")]
    if not vis:
        raise Skip()
    return rng.choice(vis)


@onnx_mutation
def onnx_shape(rng, m, case):
    g = m.graph
    where, vi = pick_value_info(rng, g)
    tt = vi.type.tensor_type
    how = rng.choice(["dim", "dim", "dim", "elem_type", "elem_type", "add_dim", "remove_dim",
                      "no_shape", "scalar"])
    if how == "elem_type":
        old, tt.elem_type = tt.elem_type, rng.choice(ELEM_TYPES)
        return "%s %r: elem_type %d -> %d" % (where, vi.name, old, tt.elem_type)
    if how == "no_shape":
        tt.ClearField("shape")
        return "%s %r: shape removed" % (where, vi.name)
    if how == "scalar":
        del tt.shape.dim[:]
        tt.shape.SetInParent()
        return "%s %r: made a scalar" % (where, vi.name)
    dims = tt.shape.dim
    if how == "add_dim":
        at = rng.randint(0, len(dims))
        new = list(dims)
        d = onnx.TensorShapeProto.Dimension()
        d.dim_value = rng.choice([1, 2, 3])
        new.insert(at, d)
        del dims[:]
        dims.extend(new)
        return "%s %r: dim %d inserted at %d" % (where, vi.name, d.dim_value, at)
    if not dims:
        raise Skip()
    k = rng.randrange(len(dims))
    if how == "remove_dim":
        del dims[k]
        return "%s %r: dim %d removed" % (where, vi.name, k)
    v = rng.choice(DIMS)
    if v == "":
        dims[k].Clear()
    elif isinstance(v, str):
        dims[k].dim_param = v if v != "param" else "%s_dim_%d" % (vi.name, k)
    else:
        dims[k].dim_value = v
    return "%s %r: dim %d -> %r" % (where, vi.name, k, v if v != "" else "unset")


def pick_tensor(rng, g):
    """An initializer or the tensor of a Constant node."""
    tensors = [("initializer %r" % t.name, t) for t in g.initializer]
    for n in g.node:
        for a in n.attribute:
            if a.type == AttributeProto.TENSOR:
                tensors.append(("Constant %r" % (n.output[0] if n.output else n.name), a.t))
    if not tensors:
        raise Skip()
    return rng.choice(tensors)


NUMERIC = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
           TensorProto.FLOAT16: np.float16, TensorProto.INT64: np.int64,
           TensorProto.INT32: np.int32}


def mutate_tensor(rng, t):
    how = rng.choice(["dims", "dims", "data_type", "raw_len", "value", "value", "value",
                      "external", "typed_data"])
    if how == "dims":
        dims = list(t.dims)
        sub = rng.choice(["change", "append", "remove", "clear"])
        if sub == "change" and dims:
            k = rng.randrange(len(dims))
            dims[k] = rng.choice([0, -1, dims[k] * 2, dims[k] + 1, 1 << 40, 1 << 62])
        elif sub == "append":
            dims.append(rng.choice([1, 2]))
        elif sub == "remove" and dims:
            dims.pop(rng.randrange(len(dims)))
        else:
            dims = []
        del t.dims[:]
        t.dims.extend(dims)
        return "dims -> %s" % dims
    if how == "data_type":
        old, t.data_type = t.data_type, rng.choice(ELEM_TYPES)
        return "data_type %d -> %d" % (old, t.data_type)
    if how == "raw_len":
        if not t.raw_data:
            raise Skip()
        raw = t.raw_data
        sub = rng.choice(["short", "long", "empty", "odd"])
        t.raw_data = {"short": raw[:-rng.choice([1, 2, 4, len(raw)])] if len(raw) > 4 else b"",
                      "long": raw + bytes(rng.choice([1, 4, 8, 64])),
                      "empty": b"",
                      "odd": raw[:len(raw) // 2 + 1]}[sub]
        return "raw_data %d -> %d bytes" % (len(raw), len(t.raw_data))
    if how == "external":
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        for k, v in rng.choice([[("location", "missing.bin")],
                                [("location", "../../../../etc/hostname"), ("length", "4")],
                                [("location", "rank0.onnx"), ("offset", str(1 << 40))],
                                [("location", "spec.onnx"), ("offset", "-8"), ("length", "16")],
                                []]):
            e = t.external_data.add()
            e.key, e.value = k, v
        return "external data %s" % [(e.key, e.value) for e in t.external_data]
    if how == "typed_data":
        # raw bytes moved to a typed field of the wrong kind, or both fields set at once
        sub = rng.choice(["int64_data", "float_data", "both"])
        if sub == "int64_data":
            t.int64_data.extend([1, 2, 3])
        elif sub == "float_data":
            t.float_data.extend([1.0, float("nan")])
        else:
            t.float_data.extend([1.0])
            t.int32_data.extend([7])
        return "typed data added: %s" % sub
    # "value": one element changed, the tensor otherwise well-formed, so the mutant is read
    # and must be judged (a NaN is an input error naming the node; others change the verdict)
    if t.data_type not in NUMERIC or t.data_location == TensorProto.EXTERNAL:
        raise Skip()
    try:
        arr = numpy_helper.to_array(t).copy()
    except Exception:
        raise Skip()
    if arr.size == 0:
        raise Skip()
    k = rng.randrange(arr.size)
    if np.issubdtype(arr.dtype, np.floating):
        v = rng.choice(ODD_FLOATS + [float(arr.flat[k]) * 2, float(arr.flat[k]) + 1])
    else:
        info = np.iinfo(arr.dtype)
        v = rng.choice([-1, 0, 1, int(arr.flat[k]) + 1, info.max, info.min, 1 << 20])
    with np.errstate(over="ignore", invalid="ignore"):
        arr.flat[k] = v
    dims = list(t.dims)
    name = t.name
    t.CopyFrom(numpy_helper.from_array(arr.astype(NUMERIC[t.data_type]), name))
    del t.dims[:]
    t.dims.extend(dims)
    return "element %d -> %r" % (k, v)


@onnx_mutation
def onnx_tensor(rng, m, case):
    label, t = pick_tensor(rng, m.graph)
    return "%s: %s" % (label, mutate_tensor(rng, t))


@onnx_mutation
def onnx_opset(rng, m, case):
    how = rng.choice(["version", "version", "remove", "remove_all", "duplicate", "add_domain",
                      "ir_version"])
    if how == "ir_version":
        old, m.ir_version = m.ir_version, rng.choice([0, 3, 99, -1, 1 << 40])
        return "ir_version %d -> %d" % (old, m.ir_version)
    ops = m.opset_import
    if how == "remove_all":
        del ops[:]
        return "every opset_import removed"
    if how == "add_domain":
        o = ops.add()
        o.domain, o.version = rng.choice(["onnx_tv", "com.microsoft", "bogus"]), \
            rng.choice([0, 1, 99, -1])
        return "opset_import %r version %d added" % (o.domain, o.version)
    if not ops:
        raise Skip()
    o = rng.choice(ops)
    if how == "remove":
        ops.remove(o)
        return "opset_import %r removed" % o.domain
    if how == "duplicate":
        d = ops.add()
        d.CopyFrom(o)
        d.version = rng.choice([1, 7, 13, 99])
        return "opset_import %r duplicated with version %d" % (o.domain, d.version)
    old, o.version = o.version, rng.choice([1, 7, 13, 99, 0, -1, 1 << 40])
    return "opset_import %r version %d -> %d" % (o.domain, old, o.version)
