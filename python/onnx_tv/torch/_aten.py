"""ATen ops, as make_fx traces them, written as ONNX ops the prover reads.

One function per ATen op (by its overload packet's name). Each gets the converter and the fx
node, with the node's arguments already turned into ONNX value names (tensors) or left as Python
values (scalars, sizes, dims), and returns the ONNX value name of the node's result (a list for
ops with several results). Sizes come from the traced tensors' metadata, which are static: the
exported programs have static shapes, as the prover needs.

Torch's own ONNX exporter has no symbolic for backward ops; here the backward ops that matter
are either written directly (slice_scatter, the softmax backward by decomposition) or come
decomposed into forward ops by the decomposition table in _trace.py.
"""
import math
import operator

import numpy as np

from onnx import numpy_helper

from ._onnx_graph import COMM_DOMAIN, onnx_dtype

CONVERTERS = {}


def converts(*names):
    def register(fn):
        for n in names:
            CONVERTERS[n] = fn
        return fn
    return register


class UnsupportedOp(Exception):
    pass


def _axis(d, rank):
    return d + rank if d < 0 else d


# ---- elementwise ----------------------------------------------------------------------------

_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "lt": "Less", "le": "LessOrEqual",
           "gt": "Greater", "ge": "GreaterOrEqual", "eq": "Equal"}


def _fake(c, a):
    """A stand-in for an operand in torch's type promotion: a tensor of its dtype and rank
    (0-d and n-d tensors promote differently), or the Python number itself."""
    import torch
    if isinstance(a, torch.fx.Node):
        return torch.empty([1] * len(c.shape(a)), dtype=c.torch_dtype(a))
    return a


def _compute_dtype(c, n, fx_operands):
    """The dtype torch computes in: the result's, or for a comparison the operands' promoted
    type (int64 positions against 2.5 compare as floats)."""
    import torch
    fakes = [_fake(c, a) for a in fx_operands]
    if c.torch_dtype(n) != torch.bool or all(not isinstance(f, torch.Tensor) for f in fakes):
        return c.dtype(n)
    t = fakes[0]
    for f in fakes[1:]:
        t = torch.empty((), dtype=torch.result_type(t, f)) if isinstance(t, torch.Tensor) or \
            isinstance(f, torch.Tensor) else t
    return torch.empty((), dtype=t.dtype).numpy().dtype if isinstance(t, torch.Tensor) else c.dtype(n)


def _in(c, n, value, fx_operand, dtype):
    """An operand as `dtype`: a Python number written in it, a tensor cast when it differs."""
    if isinstance(value, (bool, int, float)):
        return c.g.const(value, dtype)
    import torch
    if isinstance(fx_operand, torch.fx.Node) and c.dtype(fx_operand) != dtype:
        from ._onnx_graph import onnx_dtype
        return c.g.node("Cast", [value], c.sub_name(n, "cast"), to=onnx_dtype(dtype))
    return value


@converts(*_BINARY)
def _binary(c, n, a, b, alpha=1, rounding_mode=None):
    op = n.target.overloadpacket.__name__.rstrip("_")
    if rounding_mode is not None:
        raise UnsupportedOp("div with rounding_mode=%r" % rounding_mode)
    dt = _compute_dtype(c, n, n.args[:2])
    a, b = _in(c, n, a, n.args[0], dt), _in(c, n, b, n.args[1], dt)
    if alpha != 1:
        b = c.g.node("Mul", [b, c.g.const(alpha, dt)], c.sub_name(n, "alpha"))
    return c.g.node(_BINARY[op], [a, b], c.name(n))


@converts("rsub")
def _rsub(c, n, a, b, alpha=1):
    dt = _compute_dtype(c, n, n.args[:2])
    a, b = _in(c, n, a, n.args[0], dt), _in(c, n, b, n.args[1], dt)
    if alpha != 1:
        a = c.g.node("Mul", [a, c.g.const(alpha, dt)], c.sub_name(n, "alpha"))
    return c.g.node("Sub", [b, a], c.name(n))


_UNARY = {"neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "reciprocal": "Reciprocal",
          "sigmoid": "Sigmoid", "tanh": "Tanh", "cos": "Cos", "sin": "Sin", "relu": "Relu",
          "abs": "Abs", "erf": "Erf"}


@converts(*_UNARY)
def _unary(c, n, x):
    return c.g.node(_UNARY[n.target.overloadpacket.__name__.rstrip("_")], [x], c.name(n))


@converts("maximum", "minimum")
def _max_min(c, n, a, b):
    dt = c.dtype(n)
    op = "Max" if n.target.overloadpacket.__name__ == "maximum" else "Min"
    return c.g.node(op, [_in(c, n, a, n.args[0], dt), _in(c, n, b, n.args[1], dt)], c.name(n))


@converts("clamp", "clamp_min", "clamp_max")
def _clamp(c, n, x, lo=None, hi=None):
    fx = list(n.args[1:3]) + [None] * 2
    if n.target.overloadpacket.__name__ == "clamp_max":
        lo, hi, fx = None, lo, [None, fx[0]]
    dt = c.dtype(n)
    y = x
    if lo is not None:
        y = c.g.node("Max", [y, _in(c, n, lo, fx[0], dt)],
                     c.sub_name(n, "low") if hi is not None else c.name(n))
    if hi is not None:
        y = c.g.node("Min", [y, _in(c, n, hi, fx[1], dt)], c.name(n))
    return y


@converts("logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and", "bitwise_or",
          "bitwise_not", "bitwise_xor")
def _logical(c, n, a, b=None):
    """Truth values as Where over booleans (and = a ? b : false); a logical op reads a
    non-boolean operand as `!= 0`, a bitwise one works on booleans only."""
    import torch
    kind, name = n.target.overloadpacket.__name__.split("_")
    operands = []
    for v, src in ((a, n.args[0]), (b, n.args[1] if len(n.args) > 1 else None)):
        if v is None:
            continue
        if isinstance(src, torch.fx.Node) and c.torch_dtype(src) != torch.bool:
            if kind == "bitwise":
                raise UnsupportedOp("%s on non-boolean tensors" % n.target.overloadpacket.__name__)
            zero = c.g.const(0, c.dtype(src))
            v = c.g.node("Where", [c.g.node("Equal", [v, zero], c.sub_name(n, "is_zero")),
                                   c.g.const(False, np.bool_), c.g.const(True, np.bool_)],
                         c.sub_name(n, "nonzero"))
        operands.append(v)
    a, b = operands[0], operands[1] if len(operands) > 1 else None
    f, t = c.g.const(False, np.bool_), c.g.const(True, np.bool_)
    if name == "and":
        return c.g.node("Where", [a, b, f], c.name(n))
    if name == "or":
        return c.g.node("Where", [a, t, b], c.name(n))
    if name == "xor":
        not_b = c.g.node("Where", [b, f, t], c.sub_name(n, "not"))
        return c.g.node("Where", [a, not_b, b], c.name(n))
    return c.g.node("Where", [a, f, t], c.name(n))


@converts("flip")
def _flip(c, n, x, dims):
    shape = c.shape(n.args[0])
    y = x
    for k, d in enumerate(sorted(_axis(d, len(shape)) for d in dims)):
        y = c.g.node("Gather", [y, c.g.ints(list(range(shape[d] - 1, -1, -1)))],
                     c.name(n) if k == len(dims) - 1 else c.sub_name(n, "dim%d" % d), axis=d)
    return y


@converts("addmv")
def _addmv(c, n, bias, mat, vec, beta=1, alpha=1):
    return _baddbmm(c, n, bias, mat, vec, beta, alpha)


@converts("baddbmm")
def _baddbmm(c, n, bias, a, b, beta=1, alpha=1):
    dt = c.dtype(n)
    prod = c.g.node("MatMul", [a, b], c.sub_name(n, "bmm"))
    if alpha != 1:
        prod = c.g.node("Mul", [prod, c.g.const(alpha, dt)], c.sub_name(n, "alpha"))
    if beta == 0:
        return c.alias(n, prod)
    if beta != 1:
        bias = c.g.node("Mul", [bias, c.g.const(beta, dt)], c.sub_name(n, "beta"))
    return c.g.node("Add", [bias, prod], c.name(n))


@converts("threshold_backward")
def _threshold_backward(c, n, grad, x, threshold):
    """relu's backward: the gradient where x > threshold, else 0."""
    dt = c.dtype(n)
    keep = c.g.node("Greater", [x, c.g.const(threshold, c.dtype(n.args[1]))], c.sub_name(n, "on"))
    return c.g.node("Where", [keep, grad, c.g.const(0, dt)], c.name(n))


@converts("rsqrt")
def _rsqrt(c, n, x):
    return c.g.node("Reciprocal", [c.g.node("Sqrt", [x], c.sub_name(n, "sqrt"))], c.name(n))


@converts("pow")
def _pow(c, n, x, e):
    if not isinstance(e, (int, float)):
        return c.g.node("Pow", [x, e], c.name(n))
    if e == 2:
        return c.g.node("Mul", [x, x], c.name(n))
    if e == 1:
        return c.alias(n, x)
    if e == 0.5:
        return c.g.node("Sqrt", [x], c.name(n))
    if e == -1:
        return c.g.node("Reciprocal", [x], c.name(n))
    if e == -0.5:
        return c.g.node("Reciprocal", [c.g.node("Sqrt", [x], c.sub_name(n, "sqrt"))], c.name(n))
    return c.g.node("Pow", [x, c.g.const(e, c.dtype(n))], c.name(n))


@converts("where")
def _where(c, n, cond, a, b):
    dt = c.dtype(n)
    return c.g.node("Where", [cond, _in(c, n, a, n.args[1], dt), _in(c, n, b, n.args[2], dt)],
                    c.name(n))


@converts("masked_fill")
def _masked_fill(c, n, x, mask, value):
    dt = c.dtype(n)
    return c.g.node("Where", [mask, _in(c, n, value, n.args[2], dt), _in(c, n, x, n.args[0], dt)],
                    c.name(n))


@converts("clone", "detach", "alias", "lift_fresh_copy", "contiguous", "lift_fresh")
def _identity(c, n, x, *rest, **kw):
    return c.alias(n, x)


@converts("_to_copy", "to")
def _to_copy(c, n, x, *rest, **kw):
    src, dst = c.dtype(n.args[0]), c.dtype(n)
    if src == dst:
        return c.alias(n, x)
    return c.g.node("Cast", [x], c.name(n), to=c.onnx_type(n))


@converts("copy_", "copy")
def _copy(c, n, dst, src, non_blocking=False):
    """In-place copy: later uses of `dst` see `src` (make_fx points them at this node)."""
    v = src
    if c.dtype(n.args[1]) != c.dtype(n):
        v = c.g.node("Cast", [v], c.sub_name(n, "cast"), to=c.onnx_type(n))
    if tuple(c.shape(n.args[1])) != tuple(c.shape(n)):
        v = c.g.node("Expand", [v, c.g.ints(c.shape(n))], c.sub_name(n, "expand"))
    return c.alias(n, v)


# ---- matrix products ------------------------------------------------------------------------

@converts("mm", "bmm", "matmul", "mv", "dot")
def _matmul(c, n, a, b):
    return c.g.node("MatMul", [a, b], c.name(n))


@converts("addmm")
def _addmm(c, n, bias, a, b, beta=1, alpha=1):
    if beta != 1 or alpha != 1:
        raise UnsupportedOp("addmm with beta or alpha other than 1")
    return c.g.node("Add", [c.g.node("MatMul", [a, b], c.sub_name(n, "mm")), bias], c.name(n))


# ---- layout -----------------------------------------------------------------------------------

def _transpose_to(c, n, x, perm):
    if list(perm) == list(range(len(perm))):
        return c.alias(n, x)
    return c.g.node("Transpose", [x], c.name(n), perm=list(perm))


@converts("t", "numpy_T")
def _t(c, n, x):
    r = len(c.shape(n))
    return _transpose_to(c, n, x, list(reversed(range(r))))


@converts("transpose")
def _transpose(c, n, x, d0, d1):
    r = len(c.shape(n))
    perm = list(range(r))
    d0, d1 = _axis(d0, r), _axis(d1, r)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return _transpose_to(c, n, x, perm)


@converts("permute")
def _permute(c, n, x, dims):
    r = len(c.shape(n))
    return _transpose_to(c, n, x, [_axis(d, r) for d in dims])


@converts("view", "_unsafe_view", "reshape", "flatten", "view_as", "reshape_as")
def _reshape(c, n, x, *rest):
    if tuple(c.shape(n.args[0])) == tuple(c.shape(n)):
        return c.alias(n, x)
    return c.g.node("Reshape", [x, c.g.ints(c.shape(n))], c.name(n))


@converts("expand")
def _expand(c, n, x, sizes, implicit=False):
    if tuple(c.shape(n.args[0])) == tuple(c.shape(n)):
        return c.alias(n, x)
    return c.g.node("Expand", [x, c.g.ints(c.shape(n))], c.name(n))


@converts("unsqueeze")
def _unsqueeze(c, n, x, d):
    return c.g.node("Unsqueeze", [x, c.g.ints([_axis(d, len(c.shape(n)))])], c.name(n))


@converts("squeeze")
def _squeeze(c, n, x, dims=None):
    shape = c.shape(n.args[0])
    if dims is None:
        axes = [i for i, s in enumerate(shape) if s == 1]
    else:
        dims = dims if isinstance(dims, (list, tuple)) else [dims]
        axes = [_axis(d, len(shape)) for d in dims if shape[_axis(d, len(shape))] == 1]
    if not axes:
        return c.alias(n, x)
    return c.g.node("Squeeze", [x, c.g.ints(axes)], c.name(n))


@converts("cat", "concat")
def _cat(c, n, xs, dim=0):
    r = len(c.shape(n))
    xs = [x for x, src in zip(xs, n.args[0]) if math.prod(c.shape(src)) > 0 or len(xs) == 1]
    if len(xs) == 1:
        return c.alias(n, xs[0])
    return c.g.node("Concat", list(xs), c.name(n), axis=_axis(dim, r))


def _clamp_range(start, end, size):
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(0, min(size, end + size if end < 0 else end))
    return start, max(start, end)


def _slice(c, n, x, dim, start, end, name, step=1):
    r = len(c.shape(n.args[0]))
    d = _axis(dim, r)
    size = c.shape(n.args[0])[d]
    start, end = _clamp_range(start, end, size)
    if start == 0 and end == size and step == 1:
        return c.alias(n, x) if name == c.name(n) else x
    return c.g.node("Slice", [x, c.g.ints([start]), c.g.ints([end]), c.g.ints([d]),
                              c.g.ints([step])], name)


@converts("slice")
def _slice_op(c, n, x, dim=0, start=None, end=None, step=1):
    return _slice(c, n, x, dim, start, end, c.name(n), step)


@converts("select")
def _select(c, n, x, dim, index):
    r = len(c.shape(n.args[0]))
    d = _axis(dim, r)
    i = index + c.shape(n.args[0])[d] if index < 0 else index
    piece = c.g.node("Slice", [x, c.g.ints([i]), c.g.ints([i + 1]), c.g.ints([d])],
                     c.sub_name(n, "slice"))
    return c.g.node("Squeeze", [piece, c.g.ints([d])], c.name(n))


@converts("split", "split_with_sizes")
def _split(c, n, x, sizes, dim=0):
    r = len(c.shape(n.args[0]))
    d = _axis(dim, r)
    total = c.shape(n.args[0])[d]
    if isinstance(sizes, int):
        sizes = [min(sizes, total - k) for k in range(0, total, sizes)]
    if len(sizes) == 1:
        return [c.alias(n, x)]
    return c.g.node("Split", [x, c.g.ints(sizes)], c.name(n), outputs=len(sizes), axis=d)


@converts("unbind")
def _unbind(c, n, x, dim=0):
    r = len(c.shape(n.args[0]))
    d = _axis(dim, r)
    k = c.shape(n.args[0])[d]
    parts = c.g.node("Split", [x, c.g.ints([1] * k)], c.sub_name(n, "split"), outputs=k, axis=d)
    parts = parts if k > 1 else [parts]
    return [c.g.node("Squeeze", [p, c.g.ints([d])], c.sub_name(n, "squeeze")) for p in parts]


@converts("slice_scatter")
def _slice_scatter(c, n, base, src, dim=0, start=None, end=None, step=1):
    """base with [start:end) along dim replaced by src: the pieces of base around it and src,
    concatenated (the backward of a slice, with a zero base)."""
    shape = c.shape(n.args[0])
    d = _axis(dim, len(shape))
    start, end = _clamp_range(start, end, shape[d])
    if step != 1:  # every step-th position from src: a Gather from base and src side by side
        take = np.arange(shape[d], dtype=np.int64)
        picked = np.arange(start, end, step, dtype=np.int64)
        take[picked] = shape[d] + np.arange(picked.size, dtype=np.int64)
        both = c.g.node("Concat", [base, src], c.sub_name(n, "both"), axis=d)
        return c.g.node("Gather", [both, c.g.ints(take)], c.name(n), axis=d)
    pieces = []
    if start > 0:
        pieces.append(c.g.node("Slice", [base, c.g.ints([0]), c.g.ints([start]), c.g.ints([d])],
                               c.sub_name(n, "before")))
    pieces.append(src)
    if end < shape[d]:
        pieces.append(c.g.node("Slice", [base, c.g.ints([end]), c.g.ints([shape[d]]),
                                         c.g.ints([d])], c.sub_name(n, "after")))
    if len(pieces) == 1:
        return c.alias(n, src)
    return c.g.node("Concat", pieces, c.name(n), axis=d)


@converts("select_scatter")
def _select_scatter(c, n, base, src, dim, index):
    shape = c.shape(n.args[0])
    d = _axis(dim, len(shape))
    i = index + shape[d] if index < 0 else index
    src = c.g.node("Unsqueeze", [src, c.g.ints([d])], c.sub_name(n, "unsqueeze"))
    return _slice_scatter(c, n, base, src, d, i, i + 1)


# as_strided reads the storage of its input; autograd's backward of an in-place op on a view
# uses it (CopySlices). Written as a Gather of constant positions from the flattened input,
# which is exact when that storage is the input itself, row-major from offset 0: the input is
# made by an op that allocates (not a view of something else) and is contiguous.
_VIEWS = {"view", "_unsafe_view", "reshape", "slice", "select", "t", "transpose", "permute",
          "expand", "as_strided", "alias", "detach", "unsqueeze", "squeeze", "split", "unbind",
          "diagonal", "narrow", "unfold", "view_as", "_reshape_alias"}


def _storage_order(c, node):
    """The permutation that lays `node`'s tensor out as its storage holds it (row-major after
    transposing by it), when the tensor owns a dense storage from offset 0: it is made by an op
    that allocates (not a view of another tensor) and its strides are a permutation of dense
    row-major ones (a transposed layout autograd allocated, say). None otherwise."""
    shape = c.shape(node)
    meta = node.meta.get("tensor_meta")
    if meta is None:
        return list(range(len(shape)))
    if _is_view(node):
        return None
    strides = list(meta.stride)
    perm = sorted(range(len(shape)), key=lambda d: (-strides[d], d))
    expected = 1
    for d in reversed(perm):
        if shape[d] > 1 and strides[d] != expected:
            return None
        expected *= shape[d]
    return perm


def _positions(size, stride, offset):
    idx = np.full(size, offset, np.int64) if size else np.asarray(offset, np.int64)
    for k, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[k] = n
        idx = idx + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    return idx


def _is_view(node):
    return node.op == "call_function" and \
        getattr(getattr(node.target, "overloadpacket", None), "__name__", "") in _VIEWS


def _flat(c, n, x, node, through_views=False):
    """The elements of x's storage, in storage order. as_strided reads the storage of its
    input, views included (its positions are absolute), so with `through_views` a view is
    followed up to the tensor that owns the storage."""
    while through_views and _is_view(node):
        node = node.args[0]
        x = c.env[node]
    perm = _storage_order(c, node)
    if perm is None:
        raise UnsupportedOp("as_strided of a view, or of a tensor whose storage is not dense")
    if perm != sorted(perm):
        x = c.g.node("Transpose", [x], c.sub_name(n, "storage_order"), perm=perm)
    return c.g.node("Reshape", [x, c.g.ints([-1])], c.sub_name(n, "flat"))


@converts("as_strided")
def _as_strided(c, n, x, size, stride, offset=None):
    src = n.args[0]
    if offset is None and _is_view(src):
        raise UnsupportedOp("as_strided of a view at the view's own storage offset")
    flat = _flat(c, n, x, src, through_views=True)
    base = src
    while _is_view(base):
        base = base.args[0]
    idx = _positions(list(size), list(stride), offset or 0)
    total = int(np.prod(c.shape(base)))
    if idx.size and (idx.min() < 0 or idx.max() >= total):
        raise UnsupportedOp("as_strided outside its input's storage")
    return c.g.node("Gather", [flat, c.g.ints(idx)], c.name(n), axis=0)


def _element_positions(c, node):
    """The storage position of each element of `node`'s tensor, in its logical row-major
    order: from its strides when it owns its storage, from its own size, stride and offset
    when it is an as_strided view; None for other views."""
    shape = c.shape(node)
    if _is_view(node):
        name = node.target.overloadpacket.__name__
        if name != "as_strided" or len(node.args) < 4 or node.args[3] is None:
            return None
        return _positions(list(node.args[1]), list(node.args[2]), node.args[3]).reshape(-1)
    if _storage_order(c, node) is None:
        return None
    strides = list(node.meta["tensor_meta"].stride) if "tensor_meta" in node.meta else \
        [int(np.prod(shape[k + 1:])) for k in range(len(shape))]
    return _positions(shape, strides, 0).reshape(-1)


@converts("as_strided_scatter")
def _as_strided_scatter(c, n, base, src, size, stride, offset=0):
    """base with the elements at the storage positions as_strided(size, stride, offset) reads
    set to src: a Gather from base and src side by side, each element of base (in its logical
    order) taking its own value or src's."""
    shape = c.shape(n.args[0])
    total = int(np.prod(shape))
    where = _element_positions(c, n.args[0])
    idx = _positions(list(size), list(stride), offset or 0).reshape(-1)
    if where is None or len(set(where.tolist())) != where.size:
        raise UnsupportedOp("as_strided_scatter into a view whose storage positions are unknown")
    logical = {int(p): k for k, p in enumerate(where.tolist())}
    if len(set(idx.tolist())) != idx.size or any(int(p) not in logical for p in idx.tolist()):
        raise UnsupportedOp("as_strided_scatter with overlapping or outside positions")
    take = np.arange(total, dtype=np.int64)
    for j, p in enumerate(idx.tolist()):
        take[logical[int(p)]] = total + j
    flat_base = c.g.node("Reshape", [base, c.g.ints([-1])], c.sub_name(n, "base_flat"))
    flat_src = c.g.node("Reshape", [src, c.g.ints([-1])], c.sub_name(n, "src_flat"))
    both = c.g.node("Concat", [flat_base, flat_src], c.sub_name(n, "both"), axis=0)
    picked = c.g.node("Gather", [both, c.g.ints(take)], c.sub_name(n, "pick"), axis=0)
    return c.g.node("Reshape", [picked, c.g.ints(shape)], c.name(n))


@converts("triu", "tril")
def _trilu(c, n, x, diagonal=0):
    upper = 1 if n.target.overloadpacket.__name__ == "triu" else 0
    return c.g.node("Trilu", [x, c.g.ints(diagonal)], c.name(n), upper=upper)


# ---- reductions and normalisations ------------------------------------------------------------

def _dims(c, n, dims):
    r = len(c.shape(n.args[0]))
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(r))
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    return sorted(_axis(d, r) for d in dims)


@converts("sum")
def _sum(c, n, x, dims=None, keepdim=False, dtype=None):
    if not c.shape(n.args[0]):
        return c.alias(n, x)
    return c.g.node("ReduceSum", [x, c.g.ints(_dims(c, n, dims))], c.name(n),
                    keepdims=int(bool(keepdim)))


@converts("mean")
def _mean(c, n, x, dims=None, keepdim=False, dtype=None):
    if not c.shape(n.args[0]):
        return c.alias(n, x)
    return c.g.node("ReduceMean", [x], c.name(n), axes=_dims(c, n, dims),
                    keepdims=int(bool(keepdim)))


@converts("amax")
def _amax(c, n, x, dims=(), keepdim=False):
    return c.g.node("ReduceMax", [x], c.name(n), axes=_dims(c, n, dims), keepdims=int(bool(keepdim)))


@converts("_softmax", "softmax")
def _softmax(c, n, x, dim, half_to_float=False):
    return c.g.node("Softmax", [x], c.name(n), axis=_axis(dim, len(c.shape(n))))


@converts("_log_softmax", "log_softmax")
def _log_softmax(c, n, x, dim, half_to_float=False):
    return c.g.node("LogSoftmax", [x], c.name(n), axis=_axis(dim, len(c.shape(n))))


# ---- lookups by token ids and the loss on class indices -------------------------------------
# Token ids and labels are int64 inputs the prover reads by their indicators (docs/design.md
# section 4): each is written as an index into the table it reads, with nothing between the
# input and its use but reshapes, so the prover finds its range (plan-format section 1).


@converts("embedding")
def _embedding(c, n, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return c.g.node("Gather", [weight, indices], c.name(n))


@converts("embedding_dense_backward")
def _embedding_dense_backward(c, n, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """Every token's gradient row added into the row of its id (ScatterND, reduction add); the
    padding row gets none."""
    if scale_grad_by_freq:
        raise UnsupportedOp("embedding backward with scale_grad_by_freq")
    g, name, dt = c.g, c.name(n), c.dtype(n)
    ids = g.node("Unsqueeze", [indices, g.ints([-1])], name + "/ids")
    if padding_idx >= 0:
        pad = g.node("Equal", [ids, g.const(padding_idx, np.int64)], name + "/is_padding")
        grad = g.node("Where", [pad, g.const(0, dt), grad], name + "/unpadded")
    zeros = g.node("ConstantOfShape", [g.ints(c.shape(n))], name + "/zeros",
                   value=numpy_helper.from_array(np.zeros(1, dt)))
    return g.node("ScatterND", [zeros, ids, grad], name, reduction="add")


def _nll_rows(c, n, logp, target, shape):
    """(log-probabilities [N, C], targets [N], rows N) of log-probabilities of `shape`: a 1-D
    input is one row."""
    if len(shape) > 2:
        raise UnsupportedOp("nll_loss over more than two dimensions (nll_loss2d)")
    if len(shape) == 2:
        return logp, target, shape[0]
    g, name = c.g, c.name(n)
    return (g.node("Unsqueeze", [logp, g.ints([0])], name + "/row"),
            g.node("Unsqueeze", [target, g.ints([0])], name + "/target_row"), 1)


def _kept(c, n, target, ignore_index, dt):
    """1 where the target is not ignore_index, as floats. Written for every ignore_index: a
    label the prover takes in [0, C) never equals the default -100, and then this is 1."""
    g, name = c.g, c.name(n)
    hit = g.node("Equal", [target, g.const(ignore_index, np.int64)], name + "/ignored")
    return g.node("Cast", [g.node("Not", [hit], name + "/kept_bool")], name + "/kept",
                  to=onnx_dtype(dt))


@converts("nll_loss_forward")
def _nll_loss_forward(c, n, logp, target, weight, reduction, ignore_index):
    """(loss, total weight) as torch returns them: -logp[i, target_i] over the rows not
    ignored, none/mean/sum (reduction 0/1/2)."""
    if weight is not None:
        raise UnsupportedOp("nll_loss with class weights")
    g, name = c.g, c.name(n)
    dt = c.dtype(n.args[0])
    lp, t, _ = _nll_rows(c, n, logp, target, c.shape(n.args[0]))
    picked = g.node("GatherElements", [lp, g.node("Unsqueeze", [t, g.ints([1])], name + "/label")],
                    name + "/picked", axis=1)
    kept = _kept(c, n, t, ignore_index, dt)
    losses = g.node("Mul", [g.node("Neg", [g.node("Squeeze", [picked, g.ints([1])], name + "/pick")],
                                   name + "/neg"), kept], name + "/losses")
    total = g.node("ReduceSum", [kept], name + "/total_weight", keepdims=0)
    if reduction == 0:
        out = losses if len(c.shape(n.args[0])) == 2 else g.node(
            "Squeeze", [losses, g.ints([0])], name + "/scalar")
    else:
        out = g.node("ReduceSum", [losses], name + "/sum", keepdims=0)
        if reduction == 1:
            out = g.node("Div", [out, total], name + "/mean")
    return [out, total]


@converts("nll_loss_backward")
def _nll_loss_backward(c, n, grad_out, logp, target, weight, reduction, ignore_index, total_weight):
    """-OneHot(target) on the rows not ignored, times the incoming gradient (divided by the
    total weight for a mean)."""
    if weight is not None:
        raise UnsupportedOp("nll_loss with class weights")
    g, name = c.g, c.name(n)
    dt = c.dtype(n)
    shape = c.shape(n.args[1])
    _, t, _ = _nll_rows(c, n, logp, target, shape)
    hot = g.node("OneHot", [t, g.const(shape[-1], np.int64), g.const([0, 1], dt)], name + "/one_hot",
                 axis=-1)
    kept = g.node("Unsqueeze", [_kept(c, n, t, ignore_index, dt), g.ints([1])], name + "/kept_col")
    scale = grad_out
    if reduction == 0 and len(shape) == 2:
        scale = g.node("Unsqueeze", [grad_out, g.ints([1])], name + "/grad_col")
    elif reduction == 1:
        scale = g.node("Div", [grad_out, total_weight], name + "/per_row")
    grad = g.node("Mul", [g.node("Neg", [hot], name + "/neg"), g.node("Mul", [kept, scale],
                                                                      name + "/scale")], name + "/rows")
    return grad if len(shape) == 2 else g.node("Squeeze", [grad, g.ints([0])], name)


# ---- selections and index ops on data: routers (docs/design.md section 4, "Selections") -----


@converts("topk")
def _topk(c, n, x, k, dim=-1, largest=True, sorted=True):
    """(values, indices): TopK over `dim`; the prover reads each slot as a selection."""
    rank = len(c.shape(n.args[0]))
    return c.g.node("TopK", [x, c.g.ints([k])], c.name(n), outputs=2, axis=_axis(dim, rank),
                    largest=int(bool(largest)), sorted=int(bool(sorted)))


@converts("gather")
def _gather(c, n, x, dim, index, sparse_grad=False):
    return c.g.node("GatherElements", [x, index], c.name(n), axis=_axis(dim, len(c.shape(n))))


@converts("index_select")
def _index_select(c, n, x, dim, index):
    return c.g.node("Gather", [x, index], c.name(n), axis=_axis(dim, len(c.shape(n))))


def _scatter_src(c, n, index, src):
    """A scatter's updates: a tensor, or a number written in the index's shape."""
    import torch
    if isinstance(n.args[3], torch.fx.Node):
        return src
    return c.g.node("Expand", [c.g.const(src, c.dtype(n)), c.g.ints(c.shape(n.args[2]))],
                    c.sub_name(n, "updates"))


@converts("scatter")
def _scatter(c, n, x, dim, index, src, reduce=None):
    """torch.scatter (no reduction, or reduce='add'/'multiply'), from a tensor or a number."""
    reduction = {None: "none", "add": "add", "multiply": "mul"}.get(reduce)
    if reduction is None:
        raise UnsupportedOp("scatter with reduce=%r" % reduce)
    return c.g.node("ScatterElements", [x, index, _scatter_src(c, n, index, src)], c.name(n),
                    axis=_axis(dim, len(c.shape(n))), reduction=reduction)


@converts("scatter_add")
def _scatter_add(c, n, x, dim, index, src):
    return c.g.node("ScatterElements", [x, index, src], c.name(n), axis=_axis(dim, len(c.shape(n))),
                    reduction="add")


@converts("native_layer_norm")
def _native_layer_norm(c, n, x, normalized_shape, weight, bias, eps):
    """(y, mean, rstd) as torch returns them: the backward (decomposed by torch) reads mean and
    rstd, so the forward is written out in the same terms rather than as LayerNormalization."""
    r = len(c.shape(n.args[0]))
    axes = list(range(r - len(normalized_shape), r))
    g, name = c.g, c.name(n)
    mean = g.node("ReduceMean", [x], name + "/mean", axes=axes, keepdims=1)
    d = g.node("Sub", [x, mean], name + "/centred")
    var = g.node("ReduceMean", [g.node("Mul", [d, d], name + "/square")], name + "/var",
                 axes=axes, keepdims=1)
    eps_c = g.const(eps, c.dtype(n.args[0]))
    rstd = g.node("Reciprocal", [g.node("Sqrt", [g.node("Add", [var, eps_c], name + "/var_eps")],
                                        name + "/std")], name + "/rstd")
    y = g.node("Mul", [d, rstd], name)
    if weight is not None:
        y = g.node("Mul", [y, weight], name + "/weight")
    if bias is not None:
        y = g.node("Add", [y, bias], name + "/bias")
    return [y, mean, rstd]


# ---- tensors made from sizes ----------------------------------------------------------------

def _filled(c, n, value):
    shape = c.shape(n)
    dtype = c.dtype(n)
    if math.prod(shape) <= 16:
        return c.alias(n, c.g.const(np.full(shape, value, dtype), dtype))
    return c.g.node("ConstantOfShape", [c.g.ints(shape)], c.name(n),
                    value=_one_element(value, dtype))


def _one_element(value, dtype):
    from onnx import numpy_helper
    return numpy_helper.from_array(np.asarray([value], dtype))


@converts("empty", "new_empty", "empty_like", "empty_strided", "new_empty_strided")
def _empty(c, n, *a, **kw):
    """An uninitialised buffer may only be filled (copy_, a Recv): read, its value is unknown."""
    for user in n.users:
        name = getattr(getattr(user.target, "overloadpacket", None), "__name__", "")
        if name not in ("copy_", "copy", "recv", "pending", "zero_", "zero", "fill_", "fill") \
                or user.args[0] is not n:
            raise UnsupportedOp("an uninitialised tensor (torch.empty) is read by '%s'" % user.name)
    return _filled(c, n, 0)


@converts("zeros", "new_zeros", "zeros_like")
def _zeros(c, n, *a, **kw):
    return _filled(c, n, 0)


@converts("ones", "new_ones", "ones_like")
def _ones(c, n, *a, **kw):
    return _filled(c, n, 1)


@converts("full", "new_full")
def _full(c, n, *a, **kw):
    value = a[1] if n.target.overloadpacket.__name__ == "full" else a[2]
    return _filled(c, n, value)


@converts("full_like")
def _full_like(c, n, x, value, **kw):
    return _filled(c, n, value)


@converts("scalar_tensor")
def _scalar_tensor(c, n, value, **kw):
    return c.alias(n, c.g.const(np.asarray(value, c.dtype(n)), c.dtype(n)))


@converts("arange")
def _arange(c, n, *a, **kw):
    nums = [v for v in a if isinstance(v, (int, float))]
    start, end, step = (0, nums[0], 1) if len(nums) == 1 else \
        (nums[0], nums[1], nums[2] if len(nums) > 2 else 1)
    if not all(isinstance(v, int) for v in (start, end, step)):
        return constant_result(c, n)
    r = c.g.node("Range", [c.g.const(start, np.int64), c.g.const(end, np.int64),
                           c.g.const(step, np.int64)], c.sub_name(n, "range")
                 if c.dtype(n) != np.int64 else c.name(n))
    if c.dtype(n) == np.int64:
        return r
    return c.g.node("Cast", [r], c.name(n), to=c.onnx_type(n))


_RANDOM = {"rand", "randn", "randint", "randperm", "normal", "bernoulli", "native_dropout",
           "dropout", "rand_like", "randn_like", "randint_like", "uniform", "exponential"}


def constant_result(c, n, *args, **kwargs):
    """An op that reads no tensor (eye, arange over floats, linspace): its value, computed by
    torch, is a constant of the program. Random ops are refused: a sample is no constant of
    the model (turn dropout off, model.eval() or p=0, for the check)."""
    name = n.target.overloadpacket.__name__
    if name in _RANDOM:
        raise UnsupportedOp("a random op (%s): export with dropout and other sampling off" % name)
    value = n.target(*n.args, **n.kwargs).detach().numpy()
    return c.alias(n, c.g.const(value, value.dtype))


def reads_no_tensor(n):
    return not n.all_input_nodes


# ---- Python's own ops on the traced values ------------------------------------------------------

def getitem(c, n, seq, index):
    return seq[index]


CONVERTERS[operator.getitem] = getitem


# ---- collectives (onnx_tv domain, plan-format section 5) --------------------------------------

def comm_node(c, n, op, inputs, **attrs):
    return c.g.node(op, inputs, c.name(n), domain=COMM_DOMAIN, **attrs)


# ---- in-place forms -----------------------------------------------------------------------------
# make_fx records `g.div_(n)` as aten.div_ and points later uses of `g` at that node, so an
# in-place op is its out-of-place op whose result replaces the tensor.

@converts("zero_", "zero")
def _zero_(c, n, x):
    return _filled(c, n, 0)


@converts("fill_", "fill")
def _fill_(c, n, x, value):
    if not isinstance(value, (int, float)):
        return c.g.node("Expand", [value, c.g.ints(c.shape(n))], c.name(n))
    return _filled(c, n, value)


for _name in list(_BINARY) + list(_UNARY) + ["rsqrt", "pow", "masked_fill", "clamp_min"]:
    if _name in CONVERTERS:
        CONVERTERS[_name + "_"] = CONVERTERS[_name]
