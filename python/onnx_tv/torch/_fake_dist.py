"""A fake torch.distributed for tracing one rank of a plan in one process.

Inside `fake_distributed(mesh, rank)`, torch.distributed's collectives, point-to-point calls and
group queries are replaced by ones that act as rank `rank` of `mesh` would see them, and that
record each collective as an onnx_tv op (_collectives.py). Unmodified training code (Megatron's
mappings, a data-parallel gradient all-reduce, a pipeline stage's send/recv) then traces into
the rank's program. The in-place calls of torch.distributed (all_reduce fills its argument) are
kept in-place: the tensor receives the op's result by copy_, which the exporter reads as "from
here on, this tensor is the result".
"""
import contextlib
import itertools
import math

import torch
import torch.distributed as dist

from ._bindings import region_of_placements
from ._collectives import ops


class Mesh:
    """A device mesh: named axes and their sizes; ranks are row-major over the axes."""

    def __init__(self, **axes):
        if not axes:
            raise ValueError("a mesh needs at least one axis, e.g. Mesh(dp=2, tp=2)")
        self.axes = list(axes)
        self.shape = [int(v) for v in axes.values()]
        if any(s < 1 for s in self.shape):
            raise ValueError("mesh sizes must be positive: %s" % axes)
        self.size = math.prod(self.shape)

    def coords(self, rank):
        out = []
        for s in reversed(self.shape):
            out.append(rank % s)
            rank //= s
        return list(reversed(out))

    def rank_of(self, coords):
        r = 0
        for c, s in zip(coords, self.shape):
            r = r * s + c
        return r

    def axis_group(self, rank, axes):
        """The ranks sharing `rank`'s coordinates off `axes`, row-major over `axes`."""
        axes = [axes] if isinstance(axes, str) else list(axes)
        idx = [self.axes.index(a) for a in axes]
        base = self.coords(rank)
        out = []
        for vals in itertools.product(*[range(self.shape[i]) for i in idx]):
            c = list(base)
            for i, v in zip(idx, vals):
                c[i] = v
            out.append(self.rank_of(c))
        return out

    def axes_of_group(self, rank, ranks):
        """The mesh axes whose group (for `rank`) is exactly `ranks`, in that order, or None."""
        ranks = list(ranks)
        for k in range(1, len(self.axes) + 1):
            for axes in itertools.combinations(self.axes, k):
                if self.axis_group(rank, axes) == ranks:
                    return list(axes)
        return None


class FakeGroup:
    """A process group: its global ranks in group order, and its mesh axes when it is one."""

    def __init__(self, ranks, axes=None):
        self.ranks = list(ranks)
        self.axes = axes

    def size(self):
        return len(self.ranks)

    def __repr__(self):
        return "FakeGroup(%s)" % (self.axes or self.ranks)


class _Work:
    """What an async call returns. Its result lands in the buffers at wait(): until then they
    hold a marker that the exporter refuses to read (an async collective's buffer read before
    wait() is a race in a job), and a write to a buffer or input before wait() is refused."""

    def __init__(self, finish=None, watched=()):
        self._finish = finish
        self._watched = [(t, t._version) for t in watched]
        w = current_world()
        if w is not None and finish is not None:
            w.unfinished.append(self)

    def wait(self, *a, **k):
        if self._finish is not None:
            finish, self._finish = self._finish, None
            for t, version in self._watched:
                if t._version != version:
                    raise RuntimeError(
                        "a tensor of an async collective or isend/irecv was written before its "
                        "wait(): in a job that is a race; finish the call first")
            finish()
        return True

    def is_completed(self):
        return self._finish is None


def _land(async_op, results, inputs=()):
    """Puts each result into its buffer ([(buffer, value)]): at once, or at wait() for an
    async call (the buffers marked pending until then)."""
    if not async_op:
        for buf, value in results:
            buf.copy_(value)
        return None
    for buf, _ in results:
        buf.copy_(ops.pending(buf))
    def finish():
        with torch.no_grad():  # the data arrives as in a job: not through autograd
            for buf, value in results:
                buf.copy_(value)
    return _Work(finish, [buf for buf, _ in results] + list(inputs))


class _World:
    def __init__(self, mesh, rank):
        self.mesh, self.rank = mesh, rank
        self.world = FakeGroup(range(mesh.size), list(mesh.axes))
        self.unfinished = []  # async Works not waited on yet

    def check_all_waited(self):
        """An async call never waited on: its buffer may still be in flight when the step ends
        (an isend's may even be rewritten meanwhile), a race in a job."""
        left = [w for w in self.unfinished if not w.is_completed()]
        self.unfinished = []
        if left:
            raise RuntimeError(
                "rank %d's step returned with %d async collective or isend/irecv call(s) never "
                "waited on: call wait() on each (in a job, their buffers are still in use)"
                % (self.rank, len(left)))

    def group(self, g):
        if g is None or g is dist.group.WORLD:
            return self.world
        if not isinstance(g, FakeGroup):
            raise TypeError("a process group made outside onnx_tv.torch.fake_distributed: %r" % g)
        if self.rank not in g.ranks:
            raise ValueError("rank %d uses a group it is not in: %s" % (self.rank, g.ranks))
        return g

    def args(self, g):
        g = self.group(g)
        axes = g.axes if g.axes is not None else self.mesh.axes_of_group(self.rank, g.ranks)
        return g.ranks, axes or []

    def peer(self, peer):
        """(peer, axis, offset): a peer one step along a single mesh axis is written rank-generic."""
        a, b = self.mesh.coords(self.rank), self.mesh.coords(peer)
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return peer, self.mesh.axes[diff[0]], b[diff[0]] - a[diff[0]]
        return peer, "", 0


def _reduce_name(op):
    """The onnx_tv reduce of a ReduceOp; AVG is a sum, divided by the caller (_averaged)."""
    if op is None or op == dist.ReduceOp.SUM or op == dist.ReduceOp.AVG:
        return "sum"
    if op == dist.ReduceOp.MAX:
        return "max"
    if op == dist.ReduceOp.MIN:
        return "min"
    names = {dist.ReduceOp.PRODUCT: "PRODUCT", dist.ReduceOp.BAND: "BAND",
             dist.ReduceOp.BOR: "BOR", dist.ReduceOp.BXOR: "BXOR"}
    raise ValueError("ReduceOp.%s has no onnx_tv form (SUM, AVG, MAX, MIN)"
                     % next((v for k, v in names.items() if op == k), str(op)))


def _averaged(value, op, n):
    return value / n if op is not None and op == dist.ReduceOp.AVG else value


_UNSUPPORTED = ["all_to_all", "reduce_scatter", "gather", "scatter", "batch_isend_irecv",
                "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list",
                "all_gather_coalesced", "all_reduce_coalesced", "monitored_barrier"]


def _member(rank, ranks, what):
    if rank not in ranks:
        raise ValueError("%s from or to rank %d, which is not in the group %s" % (what, rank, ranks))


def _no_autograd(name, *tensors):
    """torch.distributed's calls are invisible to autograd: in a job, a gradient flows through
    an in-place all_reduce as if it were not there. A trace cannot say that faithfully, so a
    collective on a tensor autograd tracks is refused (put it in an autograd.Function, as
    Megatron's mappings and onnx_tv.torch.regions do)."""
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors):
        raise RuntimeError(
            "torch.distributed.%s on a tensor that requires grad: autograd does not see the "
            "collective, so its backward is undefined; call it inside a torch.autograd.Function "
            "(onnx_tv.torch.regions has Megatron's forms) or on gradients after backward" % name)


def _patches(w):
    def get_rank(group=None):
        g = w.group(group)
        return g.ranks.index(w.rank)

    def get_world_size(group=None):
        return w.group(group).size()

    def new_group(ranks=None, *a, **k):
        return w.world if ranks is None else FakeGroup(sorted(ranks))

    def all_reduce(t, op=None, group=None, async_op=False):
        _no_autograd("all_reduce", t)
        ranks, axes = w.args(group)
        total = ops.all_reduce(t, ranks, axes, _reduce_name(op))
        return _land(async_op, [(t, _averaged(total, op, len(ranks)))])

    def reduce(t, dst, op=None, group=None, async_op=False):
        """The reduce lands on `dst` only; the others keep their tensor (as NCCL leaves it)."""
        _no_autograd("reduce", t)
        ranks, axes = w.args(group)
        _member(dst, ranks, "reduce")
        total = _averaged(ops.all_reduce(t, ranks, axes, _reduce_name(op)), op, len(ranks))
        return _land(async_op, [(t, total)] if w.rank == dst else [])

    def all_gather_into_tensor(out, t, group=None, async_op=False):
        """torch reads both buffers flat: out holds the members' inputs one after another."""
        _no_autograd("all_gather_into_tensor", out, t)
        ranks, axes = w.args(group)
        gathered = ops.all_gather(t.reshape(-1), ranks, axes, 0)
        return _land(async_op, [(out, gathered.reshape(out.shape))], [t])

    def all_gather(tensor_list, t, group=None, async_op=False):
        _no_autograd("all_gather", t, *tensor_list)
        ranks, axes = w.args(group)
        full = ops.all_gather(t.unsqueeze(0), ranks, axes, 0)
        return _land(async_op, [(dst, full[i]) for i, dst in enumerate(tensor_list)], [t])

    def reduce_scatter_tensor(out, t, op=None, group=None, async_op=False):
        """torch reads both buffers flat: member i keeps the i-th block of out.numel()."""
        _no_autograd("reduce_scatter_tensor", out, t)
        ranks, axes = w.args(group)
        if t.numel() != len(ranks) * out.numel():
            raise ValueError("reduce_scatter_tensor: the input has %d elements, not %d x %d"
                             % (t.numel(), len(ranks), out.numel()))
        part = ops.reduce_scatter(t.reshape(-1), ranks, axes, 0, _reduce_name(op),
                                  ranks.index(w.rank))
        return _land(async_op, [(out, _averaged(part, op, len(ranks)).reshape(out.shape))], [t])

    def all_to_all_single(out, t, output_split_sizes=None, input_split_sizes=None, group=None,
                          async_op=False):
        _no_autograd("all_to_all_single", out, t)
        ranks, axes = w.args(group)
        for splits, buf in ((input_split_sizes, t), (output_split_sizes, out)):
            if splits and any(k * len(ranks) != buf.shape[0] for k in splits):
                raise ValueError("all_to_all_single with uneven splits %s has no onnx_tv form "
                                 "yet" % list(splits))
        return _land(async_op, [(out, ops.all_to_all(t, ranks, axes, 0, 0))], [t])

    def broadcast(t, src, group=None, async_op=False):
        _no_autograd("broadcast", t)
        ranks, axes = w.args(group)
        _member(src, ranks, "broadcast")
        return _land(async_op, [(t, ops.broadcast(t, ranks, axes, ranks.index(src)))])

    def send(t, dst, group=None, tag=0):
        _no_autograd("send", t)
        peer, axis, off = w.peer(dst)
        ops.send(t, peer, axis, off, tag)

    def _recv(t, src, tag, async_op):
        _no_autograd("recv", t)
        if src is None:
            raise ValueError("recv from any source has no onnx_tv form: name the source rank")
        peer, axis, off = w.peer(src)
        return _land(async_op, [(t, ops.recv(t, peer, axis, off, tag))])

    def recv(t, src=None, group=None, tag=0):
        _recv(t, src, tag, False)
        return src

    def isend(t, dst, group=None, tag=0):
        send(t, dst, group, tag)
        return _Work(lambda: None, [t])

    def irecv(t, src=None, group=None, tag=0):
        return _recv(t, src, tag, True)

    def unsupported(name):
        def call(*a, **k):
            raise NotImplementedError(
                "torch.distributed.%s has no onnx_tv form (the exporter traces all_reduce, "
                "reduce, all_gather, all_gather_into_tensor, reduce_scatter_tensor, "
                "all_to_all_single, broadcast, send, recv, isend, irecv; docs/pytorch.md)" % name)
        return call

    return {
        **{name: unsupported(name) for name in _UNSUPPORTED if hasattr(dist, name)},
        "reduce": reduce,
        "is_initialized": lambda: True, "is_available": lambda: True,
        "get_rank": get_rank, "get_world_size": get_world_size, "new_group": new_group,
        "barrier": lambda *a, **k: None, "all_reduce": all_reduce, "all_gather": all_gather,
        "all_gather_into_tensor": all_gather_into_tensor, "_all_gather_base": all_gather_into_tensor,
        "reduce_scatter_tensor": reduce_scatter_tensor, "_reduce_scatter_base": reduce_scatter_tensor,
        "all_to_all_single": all_to_all_single, "broadcast": broadcast, "send": send,
        "recv": recv, "isend": isend, "irecv": irecv,
        "get_process_group_ranks": lambda g: list(w.group(g).ranks),
    }


_CURRENT = []


@contextlib.contextmanager
def fake_distributed(mesh, rank):
    """torch.distributed as rank `rank` of `mesh` sees it, recording collectives for export."""
    if not 0 <= rank < mesh.size:
        raise ValueError("rank %d is outside the mesh of %d ranks" % (rank, mesh.size))
    w = _World(mesh, rank)
    saved = {name: getattr(dist, name, None) for name in _patches(w)}
    for name, fn in _patches(w).items():
        setattr(dist, name, fn)
    _CURRENT.append(w)
    try:
        yield w
    finally:
        _CURRENT.pop()
        for name, fn in saved.items():
            if fn is None:
                delattr(dist, name)
            else:
                setattr(dist, name, fn)


def current_world():
    return _CURRENT[-1] if _CURRENT else None


def group(axes):
    """The process group of the current fake rank along mesh axes (e.g. group("tp"))."""
    w = current_world()
    if w is None:
        raise RuntimeError("onnx_tv.torch.group() is for use inside fake_distributed()")
    axes = [axes] if isinstance(axes, str) else list(axes)
    return FakeGroup(w.mesh.axis_group(w.rank, axes), axes)




def shard(tensor, **dims):
    """The current rank's piece of `tensor`: shard(x, dp=0) is chunk `dp-coordinate` of x's dim 0
    over the mesh axis dp (several axes on one dim split it in mesh order, as DTensor does)."""
    w = current_world()
    if w is None:
        raise RuntimeError("onnx_tv.torch.shard() is for use inside fake_distributed()")
    unknown = set(dims) - set(w.mesh.axes)
    if unknown:
        raise ValueError("no mesh axis %s (the mesh has %s)" % (sorted(unknown), w.mesh.axes))
    placements = ["Shard(%d)" % dims[a] if a in dims else "Replicate()" for a in w.mesh.axes]
    region = region_of_placements(placements, list(tensor.shape), w.mesh, w.mesh.coords(w.rank))
    return tensor[tuple(slice(s, e) for s, e in region)].clone()
