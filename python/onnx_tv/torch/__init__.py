"""onnx_tv.torch: a PyTorch training step, forward and backward, as the ONNX programs that
`onnx-tv check` proves: the single-device spec, and each rank's program of a distributed plan
traced from the user's own torch.distributed code (docs/pytorch.md).

Needs torch 1.13 (Debian's python3-torch) or later."""
from ._bindings import BindingError
from ._convert import ExportError
from ._export import export_step, step_program
from ._fake_dist import FakeGroup, Mesh, fake_distributed, group, shard
from ._plan import Plan
from . import _collectives  # noqa: F401  (registers the onnx_tv ops with torch)

__all__ = ["export_step", "step_program", "Plan", "Mesh", "fake_distributed", "group", "shard",
           "FakeGroup", "ExportError", "BindingError"]
