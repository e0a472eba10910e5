"""Tracing a training step, forward and backward, into one fx graph of ATen ops.

make_fx (torch 1.13's functorch) runs the step on real tensors under a dispatch mode that
records every ATen op, including those autograd runs for the backward: nothing of the backward
is written by hand. Composite ops whose pieces the prover reads better (losses, activations and
their backward functions) are decomposed by torch's own decomposition table.

Every recorded node is tagged with the module it came from: forward ops by module hooks, and
backward ops by pre-hooks on the autograd nodes, each tagged with the module whose forward made
it. So a diverging operator is reported as `/layers.0/attn/wo/backward/mm_7`, in the user's
module names. (On torch 2.x, torch.export records the module stack itself; this is the 1.13
way of getting the same.)
"""
import contextlib

import torch
from torch.fx.experimental.proxy_tensor import PythonKeyTracer, make_fx

SCOPE = "onnx_tv_scope"

_DECOMPOSE = ["mse_loss", "mse_loss_backward", "silu", "silu_backward", "gelu", "gelu_backward",
              "_softmax_backward_data", "_log_softmax_backward_data", "sigmoid_backward",
              "tanh_backward", "addmm", "stack", "native_layer_norm_backward", "l1_loss",
              "smooth_l1_loss", "smooth_l1_loss_backward", "hardtanh_backward", "elu_backward",
              "leaky_relu_backward", "softplus_backward", "logit_backward", "slice_backward",
              "select_backward", "transpose_backward", "permute_backward", "t_backward",
              "unsqueeze_backward", "squeeze_backward", "expand_backward", "sum_backward",
              "mean_backward", "_reshape_alias", "rsub", "var_mean", "var", "baddbmm",
              "addmv", "addcmul", "addcdiv", "lerp"]


def decompositions():
    from torch._decomp import get_decompositions
    ops = [getattr(torch.ops.aten, name) for name in _DECOMPOSE if hasattr(torch.ops.aten, name)]
    return get_decompositions(ops)


def _scope_of(fqn):
    """'layers.0.attn.wq' -> '/layers.0/attn/wq' (a list index stays with its list's name, as
    torch's ONNX exporter writes scopes)."""
    parts = []
    for p in fqn.split(".") if fqn else []:
        if p.isdigit() and parts:
            parts[-1] += "." + p
        else:
            parts.append(p)
    return "".join("/" + p for p in parts)


class _Scopes:
    """The current module while the step runs, and the module each autograd node belongs to."""

    def __init__(self):
        self.stack = [""]
        self.backward = None  # the scope of the backward function running now
        self.of_grad_fn = {}
        self.handles = []
        self.boundaries = []

    def current(self):
        return self.backward if self.backward is not None else self.stack[-1]

    # forward: module hooks
    def attach(self, module):
        for fqn, m in module.named_modules():
            scope = _scope_of(fqn)
            self.handles.append(m.register_forward_pre_hook(self._pre(scope)))
            self.handles.append(m.register_forward_hook(self._post(scope)))

    def _pre(self, scope):
        def hook(module, args):
            self.stack.append(scope)
            self.boundaries.append({t.grad_fn for t in _tensors(args) if t.grad_fn is not None})
        return hook

    def _post(self, scope):
        def hook(module, args, out):
            self._claim(_tensors(out), self.boundaries.pop(), scope)
            self.stack.pop()
        return hook

    def _claim(self, outs, boundary, scope):
        """Tags the autograd nodes made inside this module call that no inner module claimed."""
        seen, todo = set(), [t.grad_fn for t in outs if t.grad_fn is not None]
        while todo:
            fn = todo.pop()
            if fn is None or fn in seen or fn in boundary:
                continue
            seen.add(fn)
            self.of_grad_fn.setdefault(fn, scope)
            todo.extend(nxt for nxt, _ in fn.next_functions)

    # backward: pre-hooks on the autograd nodes
    def before_backward(self, roots):
        self.handles = [h for h in self.handles if h is not None]
        seen, todo = set(), [t.grad_fn for t in roots if t.grad_fn is not None]
        while todo:
            fn = todo.pop()
            if fn is None or fn in seen:
                continue
            seen.add(fn)
            scope = self.of_grad_fn.get(fn, "")
            self.handles.append(fn.register_prehook(self._backward_pre(scope)))
            todo.extend(nxt for nxt, _ in fn.next_functions)

    def _backward_pre(self, scope):
        def hook(grad_outputs):
            self.backward = scope + "/backward"
        return hook

    def detach(self):
        for h in self.handles:
            h.remove()
        self.handles = []


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _tensors(o)]
    return []


_ACTIVE = []  # the _Scopes of the trace running now (traces do not nest)


@contextlib.contextmanager
def _tagging(scopes):
    """Tags each node the tracer makes with the current scope; backward passes started by the
    step (loss.backward(), torch.autograd.backward/grad) tag theirs first."""
    original = PythonKeyTracer.create_node
    backward, grad_fn = torch.autograd.backward, torch.autograd.grad

    def create_node(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.meta[SCOPE] = scopes.current()
        return node

    def tagged(run):
        def call(tensors, *args, **kwargs):
            scopes.before_backward(_tensors(tensors))
            try:
                return run(tensors, *args, **kwargs)
            finally:
                scopes.backward = None
        return call

    PythonKeyTracer.create_node = create_node
    torch.autograd.backward, torch.autograd.grad = tagged(backward), tagged(grad_fn)
    _ACTIVE.append(scopes)
    try:
        yield
    finally:
        _ACTIVE.pop()
        PythonKeyTracer.create_node = original
        torch.autograd.backward, torch.autograd.grad = backward, grad_fn
        scopes.detach()


def current_scopes():
    return _ACTIVE[-1] if _ACTIVE else None


def trace(fn, args, modules=()):
    """fx graph of fn(*args) (fn returns a flat list of tensors), free of in-place ops, with
    each node tagged by the module of `modules` it comes from."""
    scopes = _Scopes()
    for m in modules:
        scopes.attach(m)
    with _tagging(scopes):
        gm = make_fx(fn, decomposition_table=decompositions())(*args)
    return _functional(gm, args)


class _ScopedInterpreter(torch.fx.Interpreter):
    """Runs a traced graph node by node, with the scope of the node it runs as the current one,
    so the nodes a re-trace makes keep their module's name."""

    def __init__(self, gm, scopes):
        super().__init__(gm)
        self.scopes = scopes

    def run_node(self, n):
        self.scopes.stack[-1] = n.meta.get(SCOPE, "")
        return super().run_node(n)


def _functional(gm, args):
    """The same computation without mutation. The first trace records in-place ops as they ran
    (a gradient divided in place, a buffer filled by a collective); a later use of a tensor
    points at the last in-place op on it, but an in-place op through a view also changes its
    base, which that rule misses. functionalize re-runs the graph and writes every mutation,
    through views too, as out-of-place ops (autograd cannot run under functionalize, so it
    runs on the first trace's plain ATen graph)."""
    from functorch import functionalize
    scopes = _Scopes()
    with _tagging(scopes):
        try:
            return make_fx(functionalize(lambda *a: _ScopedInterpreter(gm, scopes).run(*a)))(
                *[a.detach() for a in args])
        except RuntimeError as e:
            if "functional tensor" not in str(e) and "Functionalization" not in str(e):
                raise
            from ._convert import ExportError
            raise ExportError(
                "the step changes a tensor of the module in place (a buffer such as BatchNorm's "
                "running statistics or an EMA): the exporter writes the step's outputs, the loss "
                "and the gradients, and cannot carry state updates; turn them off for the "
                "export (model.eval(), momentum=0) or make the state an output of the step") from None


