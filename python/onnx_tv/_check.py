"""onnx_tv.check: the options of `onnx-tv check` as keyword arguments, checked here so that
the C++ side gets only values it accepts."""
import numbers
import os

from ._errors import InputError, InternalError
from ._result import Result

_MAX_ELEMENTS = 20_000_000  # the CLI's default (src/common/limits.h)
_MAX_JOBS = 1024            # as the CLI's --jobs
_OPTIONS = ("reduce", "stages", "reuse", "fold", "seed", "max_elements", "max_memory", "jobs", "progress")


def _path(name, value):
    try:
        return os.fsencode(value)  # bytes as the CLI gets them: any file name works
    except TypeError:
        raise TypeError("%s must be a path (str, bytes or os.PathLike), not %s"
                        % (name, type(value).__name__)) from None


def _bool(name, value):
    if not isinstance(value, bool):
        raise TypeError("%s must be True or False, not %r" % (name, value))
    return value


def _whole(name, value, low, high):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s must be a whole number, not %r" % (name, value))
    if not low <= value <= high:
        raise ValueError("%s must be from %d to %d, not %d" % (name, low, high, value))
    return int(value)


def _memory_bytes(value):
    """max_memory in GB (None: 85% of the machine's) as bytes, 0 meaning the default."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("max_memory must be a number of GB or None, not %r" % (value,))
    if not value > 0:
        raise ValueError("max_memory must be a positive number of GB, not %r" % (value,))
    return max(1, int(value * (1 << 30)))


def check(spec, shards, **options):
    """Proves the plan in the folder `shards` equivalent to the single-device model `spec`,
    as `onnx-tv check SPEC SHARDS` does, and returns a Result: EQUIVALENT, NOT EQUIVALENT
    (with witness and locations) or UNKNOWN. Raises InputError when the files cannot be
    checked and InternalError on a bug in onnx-tv.

    Options (keyword only), each as the CLI's:
      reduce=True        False: check at full size (--no-reduce)
      stages=True        False: no stage-wise proof first (--no-stages)
      reuse=True         False: no proof of each distinct stage once first (--no-reuse)
      fold=True          False: prove every layer, none left out as the same as one kept
                         (--no-fold)
      seed=1             seed of the witness search (--seed)
      max_elements=20000000  the most tensor elements an instance may hold (--max-elements)
      max_memory=None    GB past which the proof stops with UNKNOWN; None: 85% of the
                         machine's memory (--max-memory)
      jobs=1             instances proven at once (--jobs); None: the machine's cores, as
                         the CLI's default (Ctrl-C is then seen only between the steps the
                         calling thread runs)
      progress=None      called as progress(phase, done, total) as the check goes on; an
                         exception it raises stops the check and propagates
    Ctrl-C stops a check at its next step with KeyboardInterrupt."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise TypeError("check() got unknown option%s %s; the options are %s"
                        % ("s" if len(unknown) > 1 else "", ", ".join(map(repr, unknown)),
                           ", ".join(_OPTIONS)))
    progress = options.get("progress")
    if progress is not None and not callable(progress):
        raise TypeError("progress must be callable or None, not %r" % (progress,))
    jobs = options.get("jobs", 1)
    args = dict(
        spec=_path("spec", spec),
        shards=_path("shards", shards),
        reduce=_bool("reduce", options.get("reduce", True)),
        stages=_bool("stages", options.get("stages", True)),
        reuse=_bool("reuse", options.get("reuse", True)),
        fold=_bool("fold", options.get("fold", True)),
        seed=_whole("seed", options.get("seed", 1), 0, 2**64 - 1),
        max_elements=_whole("max_elements", options.get("max_elements", _MAX_ELEMENTS), 1,
                            2**63 - 1),
        max_memory=_memory_bytes(options.get("max_memory")),
        jobs=0 if jobs is None else _whole("jobs", jobs, 1, _MAX_JOBS),
        progress=progress,
    )
    from . import _core  # here, not at import: onnx_tv's pure-Python parts work without it
    out = _core.check(**args)
    if out["exit_code"] == 4:
        raise InternalError(out["message"])
    if out["exit_code"] == 2:
        import json
        raise InputError(out["message"], json.loads(out["json"]), out["text"])
    return Result(out["json"], out["text"], out["witness"])
