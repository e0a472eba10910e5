"""An fx graph of ATen ops (from _trace.py) written as an ONNX model.

Graph inputs keep the names the caller gives (parameter names, `x`, ...), graph outputs too
(`loss`, `<param>.grad`). Only what the outputs need is written, plus the sends a pipeline stage
makes for its side effect. Constants the step made (buffers, tables) become initializers:
exact constants to the prover."""
import numpy as np
import torch

from . import _aten
from ._onnx_graph import OnnxGraph, onnx_dtype
from ._trace import SCOPE

_SIDE_EFFECTS = {"onnx_tv::send"}


class ExportError(Exception):
    """The traced step holds something the exporter cannot write (names the op and module)."""


def _key(node):
    target = node.target
    packet = getattr(target, "overloadpacket", None)
    if packet is None:
        return target
    ns = packet._qualified_op_name.split("::")[0]
    return packet.__name__ if ns == "aten" else ns + "::" + packet.__name__


def _meta(node):
    m = node.meta.get("tensor_meta")
    if m is None:
        raise ExportError("no tensor metadata on traced node '%s'" % node.name)
    return m


class Converter:
    def __init__(self, gm, graph_name):
        self.gm = gm
        self.g = OnnxGraph(graph_name)
        self.env = {}

    # ---- helpers the op converters use ----------------------------------------------------
    def _constant(self, node):
        return getattr(self.gm, node.target) if node.op == "get_attr" else None

    def shape(self, node):
        t = self._constant(node)
        return [int(s) for s in (t.shape if t is not None else _meta(node).shape)]

    def torch_dtype(self, node):
        t = self._constant(node)
        return t.dtype if t is not None else _meta(node).dtype

    def dtype(self, node):
        return torch.empty((), dtype=self.torch_dtype(node)).numpy().dtype

    def onnx_type(self, node):
        return onnx_dtype(self.dtype(node))

    def name(self, node):
        return "%s/%s" % (node.meta.get(SCOPE, ""), node.name)

    def sub_name(self, node, what):
        return "%s/%s" % (self.name(node), what)

    def alias(self, node, value):
        return value

    # ---- the walk ---------------------------------------------------------------------------
    def _needed(self, out_node):
        keep, todo = set(), [out_node] + [n for n in self.gm.graph.nodes
                                          if n.op == "call_function" and _key(n) in _SIDE_EFFECTS]
        while todo:
            n = todo.pop()
            if n in keep:
                continue
            keep.add(n)
            todo.extend(n.all_input_nodes)
        return keep

    def _value(self, a):
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self._value(x) for x in a)
        return a

    def run(self, input_names, output_names):
        nodes = list(self.gm.graph.nodes)
        out_node = nodes[-1]
        keep = self._needed(out_node)
        placeholders = [n for n in nodes if n.op == "placeholder"]
        if len(placeholders) != len(input_names):
            raise ExportError("the step has %d inputs, %d names were given"
                              % (len(placeholders), len(input_names)))
        for n, name in zip(placeholders, input_names):
            self.env[n] = self.g.add_input(name, self.dtype(n), self.shape(n))
        for n in nodes:
            if n.op in ("placeholder", "output") or n not in keep:
                continue
            if n.op == "get_attr":
                t = getattr(self.gm, n.target).detach().numpy()
                self.env[n] = self.g.const(t, t.dtype)
            elif n.op == "call_function":
                self.env[n] = self._call(n)
            else:
                raise ExportError("unexpected fx node %s (%s)" % (n.name, n.op))
        outs = out_node.args[0]
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        if len(outs) != len(output_names):
            raise ExportError("the step returns %d values, %d names were given"
                              % (len(outs), len(output_names)))
        for n, name in zip(outs, output_names):
            if not isinstance(n, torch.fx.Node):
                raise ExportError("output '%s' is not a tensor the step computed" % name)
            self.g.add_output(self.env[n], name, self.dtype(n), self.shape(n))
        return self.g

    def _call(self, n):
        fn = _aten.CONVERTERS.get(_key(n))
        where = "%s (traced node '%s', module '%s')" % (
            _key(n), n.name, n.meta.get(SCOPE, "") or "/")
        if fn is None and _aten.reads_no_tensor(n) and hasattr(n.target, "overloadpacket"):
            fn = _aten.constant_result
        if fn is None:
            raise ExportError("no ONNX form for the ATen op %s" % where)
        args = [self._value(a) for a in n.args]
        kwargs = {k: self._value(v) for k, v in n.kwargs.items()
                  if k not in ("dtype", "layout", "device", "pin_memory", "memory_format")
                  or _key(n) in ("sum", "mean")}
        kwargs.pop("dtype", None) if _key(n) not in ("sum", "mean") else None
        try:
            return fn(self, n, *args, **kwargs)
        except _aten.UnsupportedOp as e:
            raise ExportError("%s: %s" % (where, e)) from None


def to_onnx(gm, input_names, output_names, graph_name="step", doc=""):
    return Converter(gm, graph_name).run(input_names, output_names).model(doc)


def as_numpy(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
