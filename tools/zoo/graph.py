"""A small ONNX graph builder: scoped torch-style node names, cached constants, typed inputs."""
from contextlib import contextmanager

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
COMM_DOMAIN = "onnx_tv"
MS_DOMAIN = "com.microsoft"
FLOAT = TensorProto.FLOAT


class Graph:
    def __init__(self, name):
        self.name = name
        self.nodes, self.inputs, self.outputs, self.inits, self.value_info = [], [], [], [], []
        self.node_names, self.value_names = set(), set()
        self.prefix = []
        self.consts = {}
        self.domains = set()
        self.suffix = ""
        self.external_bytes = 0

    @contextmanager
    def backward(self):
        """Nodes added inside are named <op>_grad, as the backward of the scope's forward."""
        old, self.suffix = self.suffix, "_grad"
        try:
            yield
        finally:
            self.suffix = old

    @contextmanager
    def scope(self, *parts):
        self.prefix.extend(parts)
        try:
            yield
        finally:
            del self.prefix[len(self.prefix) - len(parts):]

    def _unique(self, base):
        name, k = base, 0
        while name in self.node_names:
            k += 1
            name = "%s_%d" % (base, k)
        self.node_names.add(name)
        return name

    def node(self, op, inputs, name=None, outputs=1, domain="", **attrs):
        """Add a node; returns its output name (or list of names when outputs > 1)."""
        full = self._unique("/" + "/".join(self.prefix + [(name or op) + self.suffix]))
        outs = ["%s_output_%d" % (full, i) for i in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=full, domain=domain or None,
                                           **attrs))
        if domain:
            self.domains.add(domain)
        return outs[0] if outputs == 1 else outs

    def last(self):
        return self.nodes[-1].name

    def const(self, value, dtype=np.float32):
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self.consts:
            self.consts[key] = self.node("Constant", [], value=numpy_helper.from_array(arr))
        return self.consts[key]

    def ints(self, values):
        return self.const(values, np.int64)

    def filled(self, shape, value):
        """A float tensor of `shape` holding `value` everywhere, as ConstantOfShape (a constant
        of that size would not fit at real sizes)."""
        key = ("filled", tuple(shape), float(value))
        if key not in self.consts:
            self.consts[key] = self.node("ConstantOfShape", [self.ints(list(shape))],
                                         value=numpy_helper.from_array(
                                             np.array([value], np.float32)))
        return self.consts[key]

    def input(self, name, shape, dtype=FLOAT):
        self.inputs.append(helper.make_tensor_value_info(name, dtype, list(shape)))
        return name

    def initializer(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array, np.float32), name))
        return name

    def external_initializer(self, name, shape):
        """A float32 initializer of `shape` whose data is ONNX external data in
        `<graph name>.onnx.data` (laid out one after another; the file itself is not written)."""
        t = TensorProto(name=name, dims=list(shape), data_type=FLOAT)
        length = 4 * int(np.prod(shape, dtype=np.int64))
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", self.name + ".onnx.data"), ("offset", str(self.external_bytes)),
                     ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.external_bytes += length
        self.inits.append(t)
        return name

    def output(self, name, value, shape, dtype=FLOAT):
        """Expose value under the graph output name `name` (through an Identity)."""
        with self.scope("outputs", name):
            self.nodes.append(helper.make_node("Identity", [value], [name],
                                               name=self._unique("/" + "/".join(self.prefix + ["Identity"]))))
        self.outputs.append(helper.make_tensor_value_info(name, dtype, list(shape)))
        return name

    def annotate(self, value, shape, dtype=FLOAT):
        self.value_info.append(helper.make_tensor_value_info(value, dtype, list(shape)))

    def model(self, metadata=None):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits,
                                  value_info=self.value_info)
        opsets = [helper.make_opsetid("", OPSET)]
        for d in sorted(self.domains):
            opsets.append(helper.make_opsetid(d, 1))
        m = helper.make_model(graph, opset_imports=opsets, producer_name="onnx-tv-zoo",
                              producer_version="1")
        m.ir_version = 8
        for k, v in (metadata or {}).items():
            p = m.metadata_props.add()
            p.key, p.value = k, v
        return m


def save(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
