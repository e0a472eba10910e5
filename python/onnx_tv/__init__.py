"""onnx_tv: proves a distributed training plan (one ONNX program per rank) equivalent to its
single-device ONNX model, or shows where it is not; the Python face of `onnx-tv check`
(docs/python.md).

    import onnx_tv
    result = onnx_tv.check("spec.onnx", "shards")
    if not result.equivalent:
        print(result.text)
"""
from ._check import check
from ._errors import Error, InputError, InternalError
from ._result import Location, Result

__all__ = ["check", "Result", "Location", "Error", "InputError", "InternalError"]
