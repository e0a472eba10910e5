"""A Mixture-of-Experts step from PyTorch: a router's torch.topk, its weights scattered into the
gates (torch.scatter), experts as a batched weight, forward and backward (topk's backward is a
scatter into zeros, scatter's a gather). The export run in float64 gives torch's loss and
gradients; experts split over two ranks in the user's own code are proven, and the router's
gradient left unreduced (as in torchtitan #2387) is refuted."""
import math
import os
import sys
import tempfile
import unittest

import numpy as np
import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import onnx_tv  # noqa: E402
import onnx_tv.torch as ott  # noqa: E402
from onnx_tv.torch import regions  # noqa: E402
from zoo import numeric  # noqa: E402

E, H, K, T = 4, 3, 2, 5


class Moe(torch.nn.Module):
    """Experts [first, first + count) of E; every token is routed over all E."""

    def __init__(self, first=0, count=E, full=None):
        super().__init__()
        self.first, self.count = first, count
        self.router = torch.nn.Linear(H, E, bias=False)
        self.experts = torch.nn.Parameter(torch.randn(count, H, H))
        if full is not None:  # the user's expert-parallel code cuts its shard from the full model
            with torch.no_grad():
                self.router.weight.copy_(full.router.weight)
                self.experts.copy_(full.experts[first:first + count])

    def local(self, x):
        scores = self.router(x)
        vals, idx = torch.topk(scores, K, dim=-1)
        gates = torch.zeros_like(scores).scatter(1, idx, torch.softmax(vals, -1))
        mine = gates[:, self.first:self.first + self.count]
        return torch.einsum("te,eho,th->to", mine, self.experts, torch.tanh(x))

    def forward(self, x):
        return self.local(x)


class EpMoe(Moe):
    def forward(self, x):
        return regions.reduce_from_region(self.local(x), ott.group("ep"))


def loss_fn(out, probe):
    return (out * probe).sum()


class MoeAgreesWithTorch(unittest.TestCase):
    def test_loss_and_gradients(self):
        torch.manual_seed(0)
        m = Moe()
        x, probe = torch.randn(T, H), torch.randn(T, H)
        model = ott.export_step(m, loss_fn, (x,), (probe,))
        ops = {n.op_type for n in model.graph.node}
        self.assertTrue({"TopK", "ScatterElements", "GatherElements"} <= ops, ops)
        ref = Moe().double()
        ref.load_state_dict(m.state_dict())
        want = loss_fn(ref(x.double()), probe.double())
        want.backward()
        feeds = numeric.initializers(model)
        feeds.update({n: p.detach().double().numpy() for n, p in m.named_parameters()})
        feeds.update(x=x.double().numpy(), y=probe.double().numpy())
        got = numeric.run_graph(model, feeds)
        self.assertTrue(math.isclose(float(got["loss"]), float(want), rel_tol=1e-9))
        for n, p in ref.named_parameters():
            np.testing.assert_allclose(got[n + ".grad"], p.grad.numpy(), rtol=1e-9, atol=1e-12,
                                       err_msg=n)


def ep_step(reduce_router=True):
    def step(model, x, probe):
        loss = loss_fn(model(x), probe)
        loss.backward()
        if reduce_router:  # every rank's router sees only its own experts' share
            dist.all_reduce(model.router.weight.grad, group=ott.group("ep"))
        return loss
    return step


class ExpertParallel(unittest.TestCase):
    def check(self, step):
        torch.manual_seed(1)
        x, probe = torch.randn(T, H), torch.randn(T, H)
        plan = ott.Plan(Moe(), loss_fn, (x,), (probe,), mesh=ott.Mesh(ep=2), loss="replicated")
        for r in plan.ranks():
            model = EpMoe(first=r * (E // 2), count=E // 2, full=plan.model)
            plan.add_rank(model, (x,), (probe,), step=step)
        with tempfile.TemporaryDirectory() as tmp:
            spec, shards = plan.write(tmp)
            return onnx_tv.check(spec, shards)

    def test_experts_split_over_two_ranks_are_proven(self):
        r = self.check(ep_step())
        self.assertEqual(r.verdict, "EQUIVALENT", r.text)

    def test_router_gradient_not_all_reduced_is_refuted(self):
        r = self.check(ep_step(reduce_router=False))
        self.assertEqual(r.verdict, "NOT EQUIVALENT", r.text)
        self.assertIn("router.weight.grad", r.report["failing_outputs"], r.text)


if __name__ == "__main__":
    unittest.main()
