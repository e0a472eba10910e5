"""The numeric runner's index and selection ops (numeric.py's run_op calls them): GatherElements,
GatherND, ScatterElements (and Scatter), ScatterND, OneHot, TopK, ArgMax and ArgMin, written
with numpy's own indexing as an independent reading of the ONNX specs."""
import numpy as np


# The order TopK with sorted=0 gives its k results in, which ONNX leaves to the runtime:
# "sorted", or "reversed" (another order a runtime may give). numeric.check sets it.
UNSORTED_ORDER = "sorted"


def select_op(op, a, ins):
    """TopK (sorted; ties to the lower index), ArgMax and ArgMin (ties to the lower index, or the
    higher with select_last_index), by a stable sort along the axis."""
    x = ins[0]
    if op == "TopK":
        ax = a.get("axis", -1) % x.ndim
        k = int(np.asarray(ins[1]).reshape(-1)[0]) if len(ins) > 1 else a["k"]
        key = -x if a.get("largest", 1) else x
        idx = np.take(np.argsort(key, axis=ax, kind="stable"), np.arange(k), axis=ax)
        if a.get("sorted", 1) == 0 and UNSORTED_ORDER == "reversed":
            idx = np.flip(idx, axis=ax)
        return [np.take_along_axis(x, idx, axis=ax), idx.astype(np.int64)]
    ax = a.get("axis", 0) % x.ndim
    key = -x if op == "ArgMax" else x
    if a.get("select_last_index", 0):
        key = np.flip(key, axis=ax)
        idx = x.shape[ax] - 1 - np.argmin(key, axis=ax)
    else:
        idx = np.argmin(key, axis=ax)
    idx = idx.astype(np.int64)
    return [np.expand_dims(idx, ax) if a.get("keepdims", 1) else idx]


def index_op(op, a, ins):
    """The index ops, written as numpy's own indexing (an independent reading of the ONNX
    specs: np.take_along_axis, np.add.at, fancy indexing)."""
    x = ins[0]
    if op == "OneHot":
        depth = int(np.asarray(ins[1]).reshape(-1)[0])
        ind = np.asarray(ins[0]).astype(np.int64)
        ind = np.where(ind < 0, ind + depth, ind)
        hot = (ind[..., None] == np.arange(depth)).astype(np.float64)
        y = ins[2][0] + hot * (ins[2][1] - ins[2][0])
        return np.moveaxis(y, -1, a.get("axis", -1) % (ind.ndim + 1))
    ind = np.asarray(ins[1]).astype(np.int64)
    if op == "GatherElements":
        ax = a.get("axis", 0) % x.ndim
        return np.take_along_axis(x, np.where(ind < 0, ind + x.shape[ax], ind), axis=ax)
    if op == "GatherND":
        b = a.get("batch_dims", 0)
        k = ind.shape[-1]
        lead = ind.shape[:-1]
        out = np.empty(lead + x.shape[b + k:], dtype=x.dtype)
        for i in np.ndindex(*lead):
            out[i] = x[i[:b] + tuple(ind[i])]
        return out
    y = np.array(x, dtype=x.dtype, copy=True)
    red = a.get("reduction", b"none")
    red = red.decode() if isinstance(red, bytes) else red
    upd = ins[2]
    if op == "ScatterND":
        k = ind.shape[-1]
        places = [tuple(ind[i]) for i in np.ndindex(*ind.shape[:-1])]
        values = [upd[i] for i in np.ndindex(*ind.shape[:-1])]
    else:
        ax = a.get("axis", 0) % x.ndim
        places, values = [], []
        for i in np.ndindex(*ind.shape):
            t = list(i)
            t[ax] = ind[i] + (x.shape[ax] if ind[i] < 0 else 0)
            places.append(tuple(t))
            values.append(upd[i])
    for p, v in zip(places, values):
        if red == "add":
            y[p] = y[p] + v
        elif red == "mul":
            y[p] = y[p] * v
        elif red == "max":
            y[p] = np.maximum(y[p], v)
        elif red == "min":
            y[p] = np.minimum(y[p], v)
        else:
            y[p] = v
    return y
