"""Mutations of whole files: raw bytes (bits flipped, runs overwritten, truncation, appended
junk, a file emptied or replaced by a folder) and the programs of the shards folder (deleted,
copied under another rank's name, renamed, two swapped)."""
import os
import shutil

from .cases import Skip


# --- byte-level mutations -------------------------------------------------------------------

def pick_file(rng, case):
    files = [f for f in case.files() if os.path.isfile(f)]
    if not files:
        raise Skip()
    return rng.choice(files)


def m_bytes_flip(rng, case):
    path = pick_file(rng, case)
    data = bytearray(open(path, "rb").read())
    if not data:
        raise Skip()
    n = rng.choice([1, 1, 2, 4, 8])
    for _ in range(n):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    open(path, "wb").write(data)
    return "%s: %d bit(s) flipped" % (case.rel(path), n)


def m_bytes_overwrite(rng, case):
    path = pick_file(rng, case)
    data = bytearray(open(path, "rb").read())
    if not data:
        raise Skip()
    at = rng.randrange(len(data))
    n = min(len(data) - at, rng.choice([1, 2, 4, 8, 16]))
    fill = rng.choice(["random", "ff", "00", "7f"])
    for i in range(at, at + n):
        data[i] = rng.randrange(256) if fill == "random" else int(fill, 16)
    open(path, "wb").write(data)
    return "%s: %d byte(s) at %d set to %s" % (case.rel(path), n, at, fill)


def m_bytes_truncate(rng, case):
    path = pick_file(rng, case)
    data = open(path, "rb").read()
    if len(data) < 2:
        raise Skip()
    n = rng.choice([rng.randrange(1, len(data)), len(data) - 1, len(data) // 2, 1])
    open(path, "wb").write(data[:n])
    return "%s: truncated to %d of %d bytes" % (case.rel(path), n, len(data))


def m_bytes_append(rng, case):
    path = pick_file(rng, case)
    kind = rng.choice(["random", "zeros", "copy", "text"])
    n = rng.choice([1, 7, 100, 4096])
    junk = {"random": lambda: bytes(rng.randrange(256) for _ in range(n)),
            "zeros": lambda: bytes(n),
            "copy": lambda: open(path, "rb").read()[:n],
            "text": lambda: b'{"junk": 1}\n' * (n // 12 + 1)}[kind]()
    with open(path, "ab") as f:
        f.write(junk)
    return "%s: %d byte(s) of %s appended" % (case.rel(path), len(junk), kind)


def m_bytes_empty(rng, case):
    path = pick_file(rng, case)
    open(path, "wb").close()
    return "%s: emptied" % case.rel(path)


def m_bytes_to_dir(rng, case):
    path = pick_file(rng, case)
    os.remove(path)
    os.mkdir(path)
    return "%s: replaced by a directory" % case.rel(path)


# --- the files of the shards folder ---------------------------------------------------------

def m_files_delete(rng, case):
    progs = case.programs()
    if not progs:
        raise Skip()
    path = rng.choice(progs)
    if os.path.isdir(path):
        shutil.rmtree(path)
    else:
        os.remove(path)
    return "%s deleted" % case.rel(path)


def m_files_extra(rng, case):
    progs = [p for p in case.programs() if os.path.isfile(p)]
    if not progs:
        raise Skip()
    src = rng.choice(progs)
    n = len(progs)
    name = rng.choice(["rank%d.onnx" % n, "rank%d.onnx" % (n + 1), "rank99.onnx",
                       "stage%d.onnx" % n, "rank00.onnx", "rank-1.onnx"])
    dst = os.path.join(case.shards, name)
    if os.path.exists(dst):
        raise Skip()
    shutil.copyfile(src, dst)
    return "%s copied to shards/%s" % (case.rel(src), name)


def m_files_rename(rng, case):
    progs = case.programs()
    if not progs:
        raise Skip()
    src = rng.choice(progs)
    how = rng.choice(["swap", "name", "name"])
    if how == "swap" and len(progs) >= 2:
        # two programs exchanged: the files stay valid, the plan is wrong
        other = rng.choice([p for p in progs if p != src])
        tmp = src + ".tmp"
        os.rename(src, tmp)
        os.rename(other, src)
        os.rename(tmp, other)
        return "%s and %s swapped" % (case.rel(src), case.rel(other))
    base = os.path.basename(src)
    name = rng.choice(["rank%d.onnx" % len(progs), "Rank0.onnx", "rank01.onnx", "rank.onnx",
                       base + ".bak", base.upper(), "rank1e0.onnx", "rank 0.onnx"])
    dst = os.path.join(case.shards, name)
    if os.path.exists(dst):
        raise Skip()
    os.rename(src, dst)
    return "%s renamed shards/%s" % (case.rel(src), name)
