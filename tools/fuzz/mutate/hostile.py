"""Hostile values: integers past int32 and int64, odd floats and strings, element types and
dims no exporter should write, and JSON values of the wrong kind or size for whatever key they
replace (deep nesting, NaN and 1e999 included, which Python's json module will not write)."""
import json

from onnx import TensorProto

INT64_MAX, INT64_MIN = (1 << 63) - 1, -(1 << 63)
HUGE_INTS = [1 << 31, (1 << 31) - 1, 1 << 32, 1 << 40, 1 << 62, INT64_MAX, INT64_MIN]
SMALL_INTS = [0, -1, 1, 2, 3, 4, 5, 7, 8, 9, -2, -9, 16, 100]
ODD_FLOATS = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e38, -1e38, 1e-45, 1e-40,
              0.33333334, 0.1, 1.0, -1.0, 2.0, 65504.0, 3.4028235e38]
ODD_STRINGS = ["", "sum", "max", "min", "mean", "prod", "bogus", "tp", "dp", "pp", "zz", "x",
               "\u00e9\u00ff", "a" * 300, "Shard(0)", "0", "-1", "NaN"]
ELEM_TYPES = [TensorProto.INT64, TensorProto.BOOL, TensorProto.FLOAT16, TensorProto.BFLOAT16,
              TensorProto.UNDEFINED, 999, TensorProto.FLOAT, TensorProto.DOUBLE,
              TensorProto.INT32, TensorProto.STRING, TensorProto.UINT8, TensorProto.COMPLEX64]
DIMS = [0, -1, 1, 2, 3, 5, 1 << 31, 1 << 40, 1 << 62, INT64_MAX, "param", "", "N"]


def hostile_int(rng):
    return rng.choice(HUGE_INTS) if rng.random() < 0.35 else rng.choice(SMALL_INTS)


def deep_list(depth):
    """Raw JSON text of `depth` nested lists: Python's json module would recurse too deep to
    write it, so it goes into the text as is (see dump_json)."""
    return RawJSON("[" * depth + "]" * depth)


class RawJSON(str):
    pass


def hostile_json(rng):
    """A value of the wrong kind or size for whatever key it replaces."""
    return rng.choice([
        lambda: rng.choice(HUGE_INTS),
        lambda: 1 << 64,  # past int64 and uint64
        lambda: rng.choice([-1, -7, 0]),
        lambda: rng.choice([1e300, -1e300, 1.5, 0.5, -0.0]),
        lambda: RawJSON(rng.choice(["NaN", "Infinity", "-Infinity", "1e999"])),
        lambda: rng.choice(ODD_STRINGS),
        lambda: None,
        lambda: rng.choice([True, False]),
        lambda: [],
        lambda: {},
        lambda: [rng.choice(SMALL_INTS) for _ in range(rng.randint(1, 4))],
        lambda: {"x": rng.choice(SMALL_INTS)},
        lambda: deep_list(rng.choice([64, 1000, 100000])),
    ])()


def dump_json(obj):
    """json.dumps that lets RawJSON values through as written (deep nesting, NaN, 1e999)."""
    raws = []

    def walk(o):
        if isinstance(o, RawJSON):
            raws.append(str(o))
            return "@@RAW%d@@" % (len(raws) - 1)
        if isinstance(o, dict):
            return {k: walk(v) for k, v in o.items()}
        if isinstance(o, list):
            return [walk(v) for v in o]
        return o

    text = json.dumps(walk(obj), indent=1)
    for i, r in enumerate(raws):
        text = text.replace('"@@RAW%d@@"' % i, r)
    return text


def json_paths(obj, prefix=()):
    """Every (path, value) in a JSON tree, the root excluded, parents before children."""
    out = []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) \
        else []
    for k, v in items:
        out.append((prefix + (k,), v))
        out.extend(json_paths(v, prefix + (k,)))
    return out


def json_get(obj, path):
    for k in path:
        obj = obj[k]
    return obj
