"""Each ATen op the exporter writes, checked against torch: a small step that uses it, forward
and backward, exported and run in float64 by the zoo's numeric runner, must give torch's loss
and gradients. A converter that is wrong the same way in the spec and in the ranks would be
invisible to the proof; this is where it shows."""
import math
import os
import sys
import unittest

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import onnx_tv.torch as ott  # noqa: E402
from zoo import numeric  # noqa: E402


class Fn(torch.nn.Module):
    """A step of one weight w (shape `shape`) and one input x: loss = sum(f(w, x) * r)."""

    def __init__(self, f, shape):
        super().__init__()
        self.f = f
        self.w = torch.nn.Parameter(torch.randn(shape))

    def forward(self, x):
        return self.f(self.w, x)


CASES = {
    "transpose_permute": ((3, 4), (2, 3, 4), lambda w, x: (x.transpose(1, 2) @ w).permute(2, 0, 1)),
    "expand_cat_slice": ((4,), (3, 4), lambda w, x: torch.cat([x * w, w.expand(3, 4)], 0)[1:5, :3]),
    "select_split_unbind": ((4, 6), (4, 6), lambda w, x: torch.stack(
        [a * b[0] for a, b in zip(torch.split(w * x, 2, dim=1), torch.unbind(x, 0))])),
    "squeeze_unsqueeze": ((1, 4), (4,), lambda w, x: (w.squeeze(0) * x).unsqueeze(1) * w),
    "triu_where_masked_fill": ((4, 4), (4, 4), lambda w, x: torch.where(
        torch.ones(4, 4).triu(1) > 0, w * x, w).masked_fill(torch.eye(4) > 0, 2.0)),
    "softmax_log_softmax": ((3, 5), (3, 5), lambda w, x: torch.softmax(w * x, -1) +
                            F.log_softmax(w + x, dim=0)),
    "mean_sum": ((3, 4), (3, 4), lambda w, x: (w * x).mean(1, keepdim=True) * (w.sum(0) + x.sum())),
    "pow_rsqrt_reciprocal": ((4,), (4,), lambda w, x: (w * w + 1).pow(3) * torch.rsqrt(x * x + 1)
                             + 1 / (w * w + 2) + (w * w + 1).pow(-0.5) + (x * x + 1).sqrt()),
    "rsub_div_neg": ((4,), (4,), lambda w, x: (1 - w) / (x * x + 1) - (-w) * 3),
    "exp_log_sigmoid_tanh": ((4,), (4,), lambda w, x: torch.exp(w) * torch.log(x * x + 1) +
                             torch.sigmoid(w * x) + torch.tanh(w - x)),
    "silu_gelu": ((4,), (4,), lambda w, x: F.silu(w * x) + F.gelu(w + x)),
    "linear_bias_layer_norm": ((4, 4), (2, 4), lambda w, x: F.layer_norm(
        F.linear(x, w, torch.arange(4.0, dtype=w.dtype)), (4,))),
    "bmm_matmul": ((2, 4, 3), (2, 5, 4), lambda w, x: torch.bmm(x, w) @ w.transpose(1, 2)),
    "arange_full_zeros": ((4,), (4,), lambda w, x: w * torch.arange(4).to(w.dtype) + torch.full((4,), 0.5, dtype=w.dtype)
                          + torch.zeros(4, dtype=w.dtype) + x),
    "inplace_ops": ((4,), (4,), lambda w, x: _inplace(w, x)),
    "type_promotion": ((4,), (4,), lambda w, x: w * (torch.arange(4) / 2)
                       + (torch.arange(4) < 2.5).to(w.dtype) * x + (torch.arange(4) * 0.5) * w
                       + ((torch.arange(4) > 1) * 0.5).to(w.dtype) * w),
    "relu_clamp_maximum": ((4,), (4,), lambda w, x: F.relu(w * x) + torch.clamp(w, -0.5, 0.5)
                           + torch.maximum(w, x) + torch.minimum(w, 0.3 * x) + w.clamp(min=0.1)),
    "mv_dot_baddbmm": ((3, 4), (4,), lambda w, x: (w @ x) * torch.dot(x, x) + torch.baddbmm(
        w.unsqueeze(0), w.unsqueeze(0), torch.ones(1, 4, 4, dtype=w.dtype)).sum(0)[0, :3]),
    "stepped_slices": ((6, 4), (6, 4), lambda w, x: (w * x)[::2] + (w - x)[1::2]
                       + w[::2, ::3].sum(-1, keepdim=True)),
    "flip_xor_addmv": ((3,), (3, 4), lambda w, x: torch.flip(w, [0]) * torch.logical_xor(
        x[:, 0] > 0, torch.tensor([True, False, True])).to(w.dtype)
        + torch.addmv(w, x, torch.ones(4, dtype=w.dtype), beta=2, alpha=0.5)),
    "zero_grad_fill": ((4,), (4,), lambda w, x: _zero_fill(w, x)),
    "mutation_through_views": ((4, 3), (4, 3), lambda w, x: _through_views(w, x)),
}


def _zero_fill(w, x):
    y = w * x
    z = torch.empty_like(y)
    z.zero_()
    z.add_(y)
    t = torch.empty(4, dtype=w.dtype)
    t.fill_(2.0)
    return z * t + y


def _through_views(w, x):
    """In-place ops on views change their base: the export must see it (functionalization),
    and the backward autograd runs for it (as_strided, as_strided_scatter) must be exact."""
    y = w * x
    y[1:3].mul_(10)
    y.t()[0].add_(5)
    z = (w * x).t()  # a transposed layout: autograd's buffers for it are transposed too
    z[0].mul_(2)
    return y + z.t()


def _inplace(w, x):
    y = w * x
    z = y.clone()
    z.mul_(2).add_(1)
    return z * y


class OpsAgreeWithTorch(unittest.TestCase):
    def test_each(self):
        for name, (wshape, xshape, f) in CASES.items():
            with self.subTest(op=name):
                torch.manual_seed(0)
                m = Fn(f, wshape)
                x = torch.randn(xshape)
                probe = torch.randn(f(m.w.detach(), x).shape)

                def loss_fn(out, probe=probe):
                    return (out * probe).sum()

                model = ott.export_step(m, loss_fn, (x,))
                ref = Fn(f, wshape).double()
                ref.load_state_dict(m.state_dict())
                loss = loss_fn(ref(x.double()), probe.double())
                loss.backward()
                feeds = numeric.initializers(model)
                feeds.update(w=m.w.detach().double().numpy(), x=x.double().numpy())
                got = numeric.run_graph(model, feeds)
                self.assertTrue(math.isclose(float(got["loss"]), float(loss), rel_tol=1e-5,
                                             abs_tol=1e-6), (float(got["loss"]), float(loss)))
                want = ref.w.grad.numpy()
                np.testing.assert_allclose(got["w.grad"], want, rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
