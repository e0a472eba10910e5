"""A minimal ONNX builder for fuzz programs: float64 data, typed constants, onnx_tv comm ops."""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
DOUBLE = TensorProto.DOUBLE
# float types a constant may be written in; the prover must read each by its meaning
CONST_TYPES = {"float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
               "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE}


class Builder:
    def __init__(self, name):
        self.name = name
        self.nodes, self.inputs, self.outputs, self.inits, self.vinfo = [], [], [], [], []
        self.count = 0

    def fresh(self, base):
        self.count += 1
        return "%s_%d" % (base, self.count)

    def node(self, op, ins, domain="", n_out=1, **attrs):
        outs = [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name=self.fresh("/" + op), domain=domain,
                                           **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value, dtype="float64", shape=None):
        """A float constant written in `dtype`, cast to double where it is used (casts between
        float types change no value in the contract)."""
        arr = np.asarray(value, np.float64).reshape(shape if shape is not None else np.shape(value))
        name = self.fresh("c_" + dtype)
        self.inits.append(tensor(name, arr, dtype))
        if dtype == "float64":
            return name
        return self.node("Cast", [name], to=DOUBLE)

    def ints(self, vals):
        name = self.fresh("i")
        self.inits.append(numpy_helper.from_array(np.asarray(vals, np.int64), name))
        return name

    def init(self, name, arr, dtype="float64"):
        self.inits.append(tensor(name, arr, dtype))
        return name

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, DOUBLE, list(shape)))
        return name

    def output(self, name, shape, as_name=None):
        if as_name and as_name != name:
            self.nodes.append(helper.make_node("Identity", [name], [as_name], name=self.fresh("/Id")))
            name = as_name
        self.outputs.append(helper.make_tensor_value_info(name, DOUBLE, list(shape)))
        return name

    def annotate(self, name, shape):
        self.vinfo.append(helper.make_tensor_value_info(name, DOUBLE, list(shape)))

    def model(self, metadata=None):
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits,
                              value_info=self.vinfo)
        opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("onnx_tv", 1)]
        m = helper.make_model(g, opset_imports=opsets, producer_name="onnx-tv-fuzz")
        m.ir_version = 8
        for k, v in (metadata or {}).items():
            m.metadata_props.add(key=k, value=v)
        return m


def tensor(name, arr, dtype):
    arr = np.asarray(arr, np.float64)
    if dtype == "bfloat16":
        return helper.make_tensor(name, TensorProto.BFLOAT16, arr.shape, arr.reshape(-1).tolist())
    np_type = {"float16": np.float16, "float32": np.float32, "float64": np.float64}[dtype]
    return numpy_helper.from_array(arr.astype(np_type), name)


def save(model, path):
    onnx.save(model, path)


def start_case(folder, spec_model):
    """A fresh case folder holding spec.onnx; returns its (empty) shards folder."""
    if os.path.exists(folder):
        shutil.rmtree(folder)
    shards = os.path.join(folder, "shards")
    os.makedirs(shards)
    save(spec_model, os.path.join(folder, "spec.onnx"))
    return shards
