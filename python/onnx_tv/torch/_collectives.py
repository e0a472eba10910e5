"""Collectives as traceable ops, and a fake process group that routes torch.distributed to them.

Each collective is a custom op in the `onnx_tv` namespace (torch.library), so make_fx records
it as one node, which _convert.py writes as the op of plan-format section 5. Run in one process,
the ops return values of the right shape only (an all-reduce returns its input): the trace is
what matters, not the values. A group is written as `group_axes` when its ranks are exactly the
ranks that share this rank's coordinates on the other mesh axes (so identical ranks export
identical programs), and as an explicit `group` otherwise.
"""
import torch

from . import _aten

_LIB = torch.library.Library("onnx_tv", "DEF")
_LIB.define("all_reduce(Tensor x, int[] group, str[] axes, str reduce) -> Tensor")
_LIB.define("all_gather(Tensor x, int[] group, str[] axes, int axis) -> Tensor")
_LIB.define("reduce_scatter(Tensor x, int[] group, str[] axes, int axis, str reduce, int index)"
            " -> Tensor")
_LIB.define("all_to_all(Tensor x, int[] group, str[] axes, int split_axis, int concat_axis)"
            " -> Tensor")
_LIB.define("broadcast(Tensor x, int[] group, str[] axes, int root) -> Tensor")
_LIB.define("send(Tensor x, int peer, str peer_axis, int peer_offset, int tag) -> Tensor")
_LIB.define("recv(Tensor like, int peer, str peer_axis, int peer_offset, int tag) -> Tensor")
# The value of an async call's buffer before wait(): reading it is refused on export.
_LIB.define("pending(Tensor x) -> Tensor")


def _impl(name):
    def register(fn):
        _LIB.impl(name, fn, "CompositeExplicitAutograd")
        return fn
    return register


@_impl("all_reduce")
def _all_reduce(x, group, axes, reduce):
    return x.clone()


@_impl("all_gather")
def _all_gather(x, group, axes, axis):
    return torch.cat([x] * len(group), dim=axis)


@_impl("reduce_scatter")
def _reduce_scatter(x, group, axes, axis, reduce, index):
    return x.chunk(len(group), dim=axis)[index].clone()


@_impl("all_to_all")
def _all_to_all(x, group, axes, split_axis, concat_axis):
    return torch.cat(x.chunk(len(group), dim=split_axis), dim=concat_axis)


@_impl("broadcast")
def _broadcast(x, group, axes, root):
    return x.clone()


@_impl("send")
def _send(x, peer, peer_axis, peer_offset, tag):
    return torch.zeros((), dtype=x.dtype)


@_impl("recv")
def _recv(like, peer, peer_axis, peer_offset, tag):
    return torch.zeros_like(like)


@_impl("pending")
def _pending(x):
    return x.clone()


# ---- writing them as ONNX -----------------------------------------------------------------

def _group_attrs(group, axes):
    return {"group_axes": list(axes)} if axes else {"group": list(group)}


@_aten.converts("onnx_tv::all_reduce")
def _w_all_reduce(c, n, x, group, axes, reduce):
    return _aten.comm_node(c, n, "AllReduce", [x], reduce=reduce, **_group_attrs(group, axes))


@_aten.converts("onnx_tv::all_gather")
def _w_all_gather(c, n, x, group, axes, axis):
    return _aten.comm_node(c, n, "AllGather", [x], axis=axis, **_group_attrs(group, axes))


@_aten.converts("onnx_tv::reduce_scatter")
def _w_reduce_scatter(c, n, x, group, axes, axis, reduce, index):
    return _aten.comm_node(c, n, "ReduceScatter", [x], axis=axis, reduce=reduce,
                           **_group_attrs(group, axes))


@_aten.converts("onnx_tv::all_to_all")
def _w_all_to_all(c, n, x, group, axes, split_axis, concat_axis):
    return _aten.comm_node(c, n, "AllToAll", [x], split_axis=split_axis,
                           concat_axis=concat_axis, **_group_attrs(group, axes))


@_aten.converts("onnx_tv::broadcast")
def _w_broadcast(c, n, x, group, axes, root):
    return _aten.comm_node(c, n, "Broadcast", [x], root=root, **_group_attrs(group, axes))


def _peer_attrs(peer, peer_axis, peer_offset, tag):
    if peer_axis:
        return {"peer_axis": peer_axis, "peer_offset": peer_offset, "tag": tag}
    return {"peer": peer, "tag": tag}


@_aten.converts("onnx_tv::send")
def _w_send(c, n, x, peer, peer_axis, peer_offset, tag):
    return _aten.comm_node(c, n, "Send", [x], **_peer_attrs(peer, peer_axis, peer_offset, tag))


@_aten.converts("onnx_tv::recv")
def _w_recv(c, n, like, peer, peer_axis, peer_offset, tag):
    y = _aten.comm_node(c, n, "Recv", [], **_peer_attrs(peer, peer_axis, peer_offset, tag))
    c.g.declare(y, c.dtype(n), c.shape(n))
    return y


@_aten.converts("onnx_tv::pending")
def _w_pending(c, n, x):
    readers = ", ".join("'%s'" % c.name(u) for u in n.users) or "the step's outputs"
    raise _aten.UnsupportedOp("the buffer of an async collective or irecv is read before its "
                              "wait(), by %s (a race in a job): wait first" % readers)


ops = torch.ops.onnx_tv
