"""A Llama-style transformer block in plain PyTorch, and its Megatron-style tensor-parallel form.

This is user code, written as training code is written: `torch.distributed` collectives inside
autograd functions (Megatron-LM's mappings), column- and row-parallel linears that hold their
shard of the weight, heads split over the tensor-parallel ranks. Nothing here knows about ONNX or
onnx-tv; docs/pytorch.md exports and checks it.
"""
import math

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class Config:
    def __init__(self, dim=16, n_heads=4, ffn=32, seq=8, eps=1e-6, rope_theta=10000.0):
        self.dim, self.n_heads, self.ffn, self.seq, self.eps = dim, n_heads, ffn, seq, eps
        self.head_dim = dim // n_heads
        self.rope_theta = rope_theta


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(cfg):
    inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2).float() / cfg.head_dim))
    ang = torch.outer(torch.arange(cfg.seq).float(), inv)
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos(), ang.sin()


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def apply_rope(x, cos, sin):  # x: [b, s, heads, head_dim]
    return x * cos[:, None, :] + rotate_half(x) * sin[:, None, :]


def attention_core(q, k, v, mask, head_dim):
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [b, heads, s, head_dim]
    scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim) + mask
    out = torch.softmax(scores, dim=-1) @ v
    return out.transpose(1, 2)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.wq = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.wo = nn.Linear(cfg.dim, cfg.dim, bias=False)
        cos, sin = rope_tables(cfg)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)
        self.register_buffer("mask", torch.full((cfg.seq, cfg.seq), float("-inf")).triu(1))

    def forward(self, x):
        b, s, _ = x.shape
        hd = self.cfg.head_dim
        cos, sin = self.cos[:s], self.sin[:s]  # positions 0..s-1, as Llama slices freqs_cis
        q = apply_rope(self.wq(x).view(b, s, -1, hd), cos, sin)
        k = apply_rope(self.wk(x).view(b, s, -1, hd), cos, sin)
        v = self.wv(x).view(b, s, -1, hd)
        return self.wo(attention_core(q, k, v, self.mask[:s, :s], hd).reshape(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w3 = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w2 = nn.Linear(cfg.ffn, cfg.dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.dim, cfg.eps)
        self.attn = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.eps)
        self.ffn = FeedForward(cfg)

    def forward(self, x):
        h = x + self.attn(self.attn_norm(x))
        return h + self.ffn(self.ffn_norm(h))


def loss_fn(out, target):
    return F.mse_loss(out, target)


# ---- Megatron-style tensor parallelism -------------------------------------------------------

class _CopyToRegion(torch.autograd.Function):
    """Identity forward; all-reduce of the gradient backward (Megatron's f)."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, g):
        g = g.clone()
        dist.all_reduce(g, group=ctx.group)
        return g, None


class _ReduceFromRegion(torch.autograd.Function):
    """All-reduce forward; identity backward (Megatron's g)."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.clone()
        dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, g):
        return g, None


class ColumnParallelLinear(nn.Module):
    """y_local = x @ W[rows of this rank]^T; the input's gradient is all-reduced."""

    def __init__(self, full: nn.Linear, group):
        super().__init__()
        n, r = dist.get_world_size(group), dist.get_rank(group)
        rows = full.out_features // n
        self.group = group
        self.weight = nn.Parameter(full.weight.detach()[r * rows:(r + 1) * rows].clone())

    def forward(self, x):
        return F.linear(_CopyToRegion.apply(x, self.group), self.weight)


class RowParallelLinear(nn.Module):
    """y = all-reduce of x_local @ W[:, columns of this rank]^T."""

    def __init__(self, full: nn.Linear, group):
        super().__init__()
        n, r = dist.get_world_size(group), dist.get_rank(group)
        cols = full.in_features // n
        self.group = group
        self.weight = nn.Parameter(full.weight.detach()[:, r * cols:(r + 1) * cols].clone())

    def forward(self, x):
        return _ReduceFromRegion.apply(F.linear(x, self.weight), self.group)


class TPAttention(nn.Module):
    def __init__(self, full: Attention, group):
        super().__init__()
        self.cfg = full.cfg
        self.wq = ColumnParallelLinear(full.wq, group)
        self.wk = ColumnParallelLinear(full.wk, group)
        self.wv = ColumnParallelLinear(full.wv, group)
        self.wo = RowParallelLinear(full.wo, group)
        for name in ("cos", "sin", "mask"):
            self.register_buffer(name, getattr(full, name))

    forward = Attention.forward


class TPFeedForward(nn.Module):
    def __init__(self, full: FeedForward, group):
        super().__init__()
        self.w1 = ColumnParallelLinear(full.w1, group)
        self.w3 = ColumnParallelLinear(full.w3, group)
        self.w2 = RowParallelLinear(full.w2, group)

    forward = FeedForward.forward


class TPBlock(nn.Module):
    """The block with attention heads and the FFN split over the group's ranks; the norms are
    replicated, and their gradients are complete on every rank because the activations they see
    are (the all-reduces of the row-parallel linears)."""

    def __init__(self, full: Block, group):
        super().__init__()
        self.attn_norm = full.attn_norm
        self.attn = TPAttention(full.attn, group)
        self.ffn_norm = full.ffn_norm
        self.ffn = TPFeedForward(full.ffn, group)

    forward = Block.forward


# ---- a two-stage pipeline: attention on the first stage, the FFN and the loss on the second ----

class AttnStage(nn.Module):
    def __init__(self, full: Block):
        super().__init__()
        self.attn_norm, self.attn = full.attn_norm, full.attn

    def forward(self, x):
        return x + self.attn(self.attn_norm(x))


class FFNStage(nn.Module):
    def __init__(self, full: Block):
        super().__init__()
        self.ffn_norm, self.ffn = full.ffn_norm, full.ffn

    def forward(self, h):
        return h + self.ffn(self.ffn_norm(h))


def first_stage_step(model, x, y):
    """Forward, send the activation on, receive its gradient back, finish the backward."""
    h = model(x)
    dist.send(h.detach(), dst=1)
    grad_h = torch.empty_like(h)
    dist.recv(grad_h, src=1)
    h.backward(grad_h)
    return None


def last_stage_step(model, x, y):
    """Receive the activation, compute the loss, send the activation's gradient back."""
    h = torch.empty_like(x)
    dist.recv(h, src=0)
    h.requires_grad_()
    loss = loss_fn(model(h), y)
    loss.backward()
    dist.send(h.grad, dst=0)
    return loss
