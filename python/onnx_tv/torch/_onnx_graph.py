"""A small ONNX graph builder for the exporter: unique value names, constants as initializers,
node names that say which module and which traced op each node comes from."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # LayerNormalization and the axes-as-input Reduce/Squeeze forms are both in 17
COMM_DOMAIN = "onnx_tv"

_NP_TO_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
               np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int64): TensorProto.INT64,
               np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL}


class OnnxGraph:
    def __init__(self, name):
        self.name = name
        self.nodes, self.inputs, self.outputs, self.inits = [], [], [], []
        self.value_info = []
        self.used = set()
        self.comm = False
        self.consts = {}  # (dtype, value bytes, shape) -> name: one initializer per constant

    def fresh(self, base):
        base = base.replace("::", "_") or "v"
        name, k = base, 1
        while name in self.used:
            k += 1
            name = "%s_%d" % (base, k)
        self.used.add(name)
        return name

    def node(self, op, inputs, name, outputs=1, domain="", **attrs):
        """Adds a node named `name` (made unique); returns its output name(s)."""
        node_name = self.fresh(name)
        outs = [self.fresh(node_name.rsplit("/", 1)[-1] if k == 0 else
                           "%s_out%d" % (node_name.rsplit("/", 1)[-1], k)) for k in range(outputs)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=node_name, domain=domain,
                                           **attrs))
        if domain == COMM_DOMAIN:
            self.comm = True
        return outs[0] if outputs == 1 else outs

    def const(self, value, dtype):
        """A constant initializer holding `value` (a number or array) as numpy dtype `dtype`."""
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.tobytes(), arr.shape)
        if key not in self.consts:
            name = self.fresh("const_" + arr.dtype.name)
            self.inits.append(numpy_helper.from_array(arr, name))
            self.consts[key] = name
        return self.consts[key]

    def ints(self, values):
        return self.const(np.asarray(values, np.int64), np.int64)

    def add_input(self, name, dtype, shape):
        self.used.add(name)
        self.inputs.append(helper.make_tensor_value_info(name, _NP_TO_ONNX[np.dtype(dtype)],
                                                         list(shape)))
        return name

    def declare(self, name, dtype, shape):
        """Type and shape of an intermediate value (a Recv's output takes them from here)."""
        self.value_info.append(helper.make_tensor_value_info(name, _NP_TO_ONNX[np.dtype(dtype)],
                                                             list(shape)))

    def add_output(self, value, name, dtype, shape):
        """Graph output `name` holding `value`; an Identity names it when the names differ (an
        input or a constant may be an output too)."""
        if value != name:
            if name in self.used:
                raise ValueError("output name '%s' is already a value of the graph" % name)
            self.used.add(name)
            self.nodes.append(helper.make_node("Identity", [value], [name], name="/outputs/" + name))
        self.outputs.append(helper.make_tensor_value_info(name, _NP_TO_ONNX[np.dtype(dtype)],
                                                          list(shape)))

    def model(self, doc=""):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits,
                                  value_info=self.value_info)
        opsets = [helper.make_opsetid("", OPSET)]
        if self.comm:
            opsets.append(helper.make_opsetid(COMM_DOMAIN, 1))
        m = helper.make_model(graph, opset_imports=opsets, producer_name="onnx_tv.torch",
                              doc_string=doc)
        m.ir_version = 8
        return m


def onnx_dtype(np_dtype):
    return _NP_TO_ONNX[np.dtype(np_dtype)]


def save(model, path):
    onnx.save(model, path)
