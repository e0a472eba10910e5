"""Running a mutant: `onnx-tv check` under a wall-clock timeout, its peak memory measured, the
outcome classified (exit 0 to 3 is fine; exit 4, a signal or a timeout is a finding), and a
finding saved with what replays it. one() is what a worker of the pool runs."""
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

from .mutant import make_mutant

LIMITS = ["--max-memory", "4", "--max-elements", "2000000"]
OUTCOMES = ["exit0", "exit1", "exit2", "exit3", "exit4", "signal", "timeout"]
FINE = {"exit0", "exit1", "exit2", "exit3"}
# A peak past the --max-memory given (4 GB), with some slack for what is not the proof's: not
# a finding by itself (the limit is checked between steps), but saved and reported for a look.
MEMORY_NOTE_MB = 4.5 * 1024


def run_check(binary, folder, no_reduce, timeout):
    """Runs the check with stdout and stderr into files of folder; returns (outcome, detail,
    seconds, peak RSS in MB). wait4 gives this child's own peak memory."""
    cmd = [binary, "check", os.path.join(folder, "spec.onnx"), os.path.join(folder, "shards")]
    cmd += LIMITS + (["--no-reduce"] if no_reduce else [])
    with open(os.path.join(folder, "stdout.txt"), "wb") as out, \
            open(os.path.join(folder, "stderr.txt"), "wb") as err:
        t0 = time.time()
        # its own session, so that a timeout kills whatever it started along with it
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             start_new_session=True)
        timed_out, nap = False, 0.002
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.time() - t0 > timeout:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:  # it ended just now
                    pass
                pid, status, usage = os.wait4(p.pid, 0)
                timed_out = True
                break
            time.sleep(nap)
            nap = min(0.05, nap * 1.5)
        p.returncode = code = os.waitstatus_to_exitcode(status)
    secs = time.time() - t0
    rss = usage.ru_maxrss / 1024.0
    if timed_out:
        return "timeout", "no answer in %g s" % timeout, secs, rss
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal %d" % -code
        return "signal", name, secs, rss
    return "exit%d" % code, "", secs, rss


def first_line(folder):
    """The start of what the binary said: stderr first, else stdout, two lines joined (the
    verdict line and the message under it), with the scratch folder cut from paths."""
    for name in ("stderr.txt", "stdout.txt"):
        try:
            with open(os.path.join(folder, name), errors="replace") as f:
                lines = [line.strip() for line in f.read(1 << 16).splitlines() if line.strip()]
        except OSError:
            continue
        if lines:
            return " | ".join(lines[:2]).replace(folder + "/", "")[:400]
    return ""


def replay_command(binary, folder, no_reduce):
    cmd = [binary, "check", os.path.join(folder, "spec.onnx"), os.path.join(folder, "shards")]
    return shlex.join(cmd + LIMITS + (["--no-reduce"] if no_reduce else []))


def scratch_root():
    """Mutant folders live in memory when /dev/shm is writable: thousands of small copies."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return tempfile.gettempdir()


_OPTS = None
_CASES = None


def init_worker(opts, cases):
    """Sets what one() reads: the options and the list of cases (a pool initializer)."""
    global _OPTS, _CASES
    _OPTS, _CASES = opts, cases


def one(seed, keep=False):
    """Makes, runs and (on a finding, or with keep) saves mutant `seed`; runs in a worker.
    Returns a dict describing it."""
    o = _OPTS
    base = tempfile.mkdtemp(prefix="onnx-tv-mut-%d-" % seed, dir=scratch_root())
    folder = os.path.join(base, "seed%d" % seed)
    r = dict(seed=seed, mutations=[], outcome="gen_error", detail="", secs=0.0, rss=0.0,
             saved=None, line="", case=None, no_reduce=False)
    try:
        r["case"], r["mutations"], r["no_reduce"] = make_mutant(seed, folder, _CASES)
        r["outcome"], r["detail"], r["secs"], r["rss"] = run_check(
            o.binary, folder, r["no_reduce"], o.timeout)
        r["line"] = first_line(folder)
        if keep or r["outcome"] not in FINE or r["rss"] > MEMORY_NOTE_MB:
            r["saved"] = save(o, folder, r)
    except Exception as e:  # a fault of this script on one mutant: counted apart, never a finding
        r["detail"] = "mutation failed: %r" % e
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return r


def save(o, folder, r):
    dest = os.path.join(o.save, "seed%d" % r["seed"])
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(o.save, exist_ok=True)
    shutil.copytree(folder, dest, symlinks=True)
    with open(os.path.join(dest, "command.sh"), "w") as f:
        f.write(replay_command(o.binary, dest, r["no_reduce"]) + "\n")
    with open(os.path.join(dest, "mutations.txt"), "w") as f:
        f.write("seed %d\ncase %s %s\n" % (r["seed"], r["case"][0], r["case"][1]))
        for kind, what in r["mutations"]:
            f.write("%s: %s\n" % (kind, what))
        f.write("outcome %s %s (%.1f s, %.0f MB)\n" % (r["outcome"], r["detail"], r["secs"],
                                                       r["rss"]))
    return dest
