"""Autograd-aware collectives in the forms Megatron-LM's tensor-parallel mappings have, over
torch.distributed (so they run for real in a job, and trace into onnx_tv ops inside
`fake_distributed`). Each is a pair: what the forward does, and what its backward does.

| function | forward | backward |
|---|---|---|
| copy_to_region | identity | all-reduce |
| reduce_from_region | all-reduce | identity |
| scatter_to_region | keep this rank's chunk of the last dim | all-gather along the last dim |
| gather_from_region | all-gather along the last dim | keep this rank's chunk |
| scatter_to_sequence_region | keep this rank's chunk of dim 0 | all-gather along dim 0 |
| gather_from_sequence_region | all-gather along dim 0 | reduce-scatter along dim 0 |
| reduce_scatter_to_sequence_region | reduce-scatter along dim 0 | all-gather along dim 0 |
| all_reduce | all-reduce | all-reduce (torch.distributed.nn's form) |
| all_gather(dim) | all-gather along dim | reduce-scatter along dim |
| reduce_scatter(dim) | reduce-scatter along dim | all-gather along dim |
| all_to_all(split, concat) | all-to-all | all-to-all with the dims swapped |
| broadcast(src) | broadcast from src | sum of the gradients, on src only |
"""
import torch
import torch.distributed as dist


def _all_reduce(x, group):
    x = x.clone()
    dist.all_reduce(x, group=group)
    return x


def _gather(x, group, dim):
    n = dist.get_world_size(group)
    if n == 1:
        return x
    x = x.movedim(dim, 0).contiguous()
    out = torch.empty((n * x.shape[0],) + tuple(x.shape[1:]), dtype=x.dtype)
    dist.all_gather_into_tensor(out, x, group=group)
    return out.movedim(0, dim)


def _reduce_scatter(x, group, dim):
    n = dist.get_world_size(group)
    if n == 1:
        return x
    x = x.movedim(dim, 0).contiguous()
    out = torch.empty((x.shape[0] // n,) + tuple(x.shape[1:]), dtype=x.dtype)
    dist.reduce_scatter_tensor(out, x, group=group)
    return out.movedim(0, dim)


def _chunk(x, group, dim):
    n, r = dist.get_world_size(group), dist.get_rank(group)
    return x.chunk(n, dim=dim)[r].clone()


class _Pair(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group, fwd, bwd):
        ctx.group, ctx.bwd = group, bwd
        return fwd(x, group)

    @staticmethod
    def backward(ctx, g):
        return ctx.bwd(g, ctx.group), None, None, None


def _identity(x, group):
    return x


def copy_to_region(x, group):
    return _Pair.apply(x, group, _identity, _all_reduce)


def reduce_from_region(x, group):
    return _Pair.apply(x, group, _all_reduce, _identity)


def scatter_to_region(x, group):
    return _Pair.apply(x, group, lambda t, g: _chunk(t, g, -1), lambda t, g: _gather(t, g, -1))


def gather_from_region(x, group):
    return _Pair.apply(x, group, lambda t, g: _gather(t, g, -1), lambda t, g: _chunk(t, g, -1))


def scatter_to_sequence_region(x, group):
    return _Pair.apply(x, group, lambda t, g: _chunk(t, g, 0), lambda t, g: _gather(t, g, 0))


def gather_from_sequence_region(x, group):
    return _Pair.apply(x, group, lambda t, g: _gather(t, g, 0),
                       lambda t, g: _reduce_scatter(t, g, 0))


def reduce_scatter_to_sequence_region(x, group):
    return _Pair.apply(x, group, lambda t, g: _reduce_scatter(t, g, 0),
                       lambda t, g: _gather(t, g, 0))


def all_reduce(x, group):
    return _Pair.apply(x, group, _all_reduce, _all_reduce)


# ---- differentiable collectives along any dim (torch.distributed.nn.functional's forms) -------

def _all_to_all(x, group, split_dim, concat_dim):
    """x split into n chunks along split_dim, chunk j to member j, received chunks concatenated
    along concat_dim (plan-format's AllToAll), over all_to_all_single on dim 0."""
    n = dist.get_world_size(group)
    chunks = torch.stack(x.chunk(n, dim=split_dim))  # [n, ...]: chunk j first
    out = torch.empty_like(chunks)
    dist.all_to_all_single(out, chunks.contiguous(), group=group)
    return torch.cat(out.unbind(0), dim=concat_dim)


def _broadcast(x, group, src):
    x = x.clone()
    dist.broadcast(x, src=src, group=group)
    return x


def _reduce_to(x, group, dst):
    """The sum over the group on member `dst`, zero elsewhere (broadcast's backward)."""
    s = _all_reduce(x, group)
    return s if dist.get_rank() == dst else torch.zeros_like(s)


def all_gather(x, group, dim=0):
    return _Pair.apply(x, group, lambda t, g: _gather(t, g, dim),
                       lambda t, g: _reduce_scatter(t, g, dim))


def reduce_scatter(x, group, dim=0):
    return _Pair.apply(x, group, lambda t, g: _reduce_scatter(t, g, dim),
                       lambda t, g: _gather(t, g, dim))


def all_to_all(x, group, split_dim, concat_dim):
    return _Pair.apply(x, group, lambda t, g: _all_to_all(t, g, split_dim, concat_dim),
                       lambda t, g: _all_to_all(t, g, concat_dim, split_dim))


def broadcast(x, group, src):
    """x of global rank `src` on every member; the gradient sums back to `src`."""
    return _Pair.apply(x, group, lambda t, g: _broadcast(t, g, src),
                       lambda t, g: _reduce_to(t, g, src))
