"""What the ONNX mutations share: the op and attribute names they draw from, loading a model
that an earlier mutation may have damaged, picking a model and a node, and onnx_mutation, which
turns an edit of a ModelProto into a mutation of the case."""
import os
import warnings

import onnx

from .cases import Skip

COMM_DOMAINS = ("onnx_tv", "com.microsoft")
ONNX_TV_OPS = ["AllReduce", "AllGather", "ReduceScatter", "AllToAll", "Broadcast", "Send", "Recv"]
MS_OPS = ["AllReduce", "AllGather", "AllToAll", "Send", "Recv"]
# Ops of the same shape of signature: swapping among them keeps the graph well-formed, so the
# mutant reaches the prover and must get a verdict (usually NOT EQUIVALENT).
SIMILAR = [["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"],
           ["Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Erf",
            "Identity", "Sin", "Cos", "Floor", "Sign", "Softplus"],
           ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
            "ReduceLogSumExp"],
           ["Softmax", "LogSoftmax", "Hardmax"],
           ["MatMul", "Add", "Mul"]]
OTHER_OPS = ["Gemm", "Transpose", "Reshape", "Expand", "Concat", "Split", "Slice", "Gather",
             "GatherElements", "ScatterElements", "Where", "Equal", "Less", "Greater", "Cast",
             "Unsqueeze", "Squeeze", "Shape", "Size", "ConstantOfShape", "Range", "Tile", "Pad",
             "TopK", "OneHot", "CumSum", "Einsum", "LayerNormalization", "Dropout", "Sum",
             "Mean", "Clip", "Flatten", "Not", "And", "Trilu", "ArgMax", "Conv", "LSTM", "Loop",
             "If", "Scan", "Constant", "Resize", "NonZero", "Mod", "BitShift", "NoSuchOp", ""]
KNOWN_ATTRS = ["axis", "axes", "group", "group_axes", "perm", "keepdims", "to", "allowzero",
               "peer", "peer_axis", "peer_offset", "tag", "root", "split_axis", "concat_axis",
               "reduce", "group_size", "transA", "transB", "alpha", "beta", "epsilon", "value",
               "noop_with_empty_axes", "upper", "k", "largest", "sorted", "key", "bogus_attr"]


def load_model(path):
    try:
        with warnings.catch_warnings():  # protobuf's complaints about damaged bytes
            warnings.simplefilter("ignore")
            return onnx.load(path, load_external_data=False)
    except Exception:  # already damaged by an earlier mutation: draw another mutation
        raise Skip()


def pick_model(rng, case):
    """A model to edit: the spec one time in three, else a program of the shards folder."""
    progs = [p for p in case.programs() if os.path.isfile(p)]
    path = case.spec if (rng.random() < 0.3 or not progs) else rng.choice(progs)
    if not os.path.isfile(path):
        raise Skip()
    return path, load_model(path)


def onnx_mutation(fn):
    """Wraps an edit of a ModelProto into a mutation of the case: load, edit, write back
    (serialized as is: no checker, since a careless exporter runs none)."""

    def mutate(rng, case):
        path, m = pick_model(rng, case)
        what = fn(rng, m, case)
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        return "%s: %s" % (case.rel(path), what)

    mutate.__name__ = fn.__name__
    return mutate


def pick_node(rng, g, need=None):
    nodes = [i for i, n in enumerate(g.node) if need is None or need(n)]
    if not nodes:
        raise Skip()
    comm = [i for i in nodes if g.node[i].domain in COMM_DOMAINS]
    # Communication ops are few but matter most to a plan; they get a fair share of the edits.
    if comm and rng.random() < 0.4:
        return rng.choice(comm)
    return rng.choice(nodes)


def node_label(g, i):
    n = g.node[i]
    return "node %d %s%s(%s)" % (i, n.domain + "." if n.domain else "", n.op_type,
                                 n.name or ",".join(n.output))


def value_names(g):
    names = [v.name for v in g.input] + [t.name for t in g.initializer]
    for n in g.node:
        names.extend(o for o in n.output if o)
    return names
