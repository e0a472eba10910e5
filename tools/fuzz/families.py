"""Recipe families other than the step programs of gen.py: each is a module with generate(seed),
write(rec, folder), candidates(rec) (smaller recipes for shrink.py), cost(rec) and
issue_class(rec). A recipe names its family in `family`; recipes without one are step programs.
"""
import random

from . import fam_counts, fam_lookup, fam_positions, fam_route, fam_train, train_lower


class _Train:
    generate = staticmethod(fam_train.generate)
    write = staticmethod(train_lower.write)
    candidates = staticmethod(fam_train.candidates)
    cost = staticmethod(fam_train.cost)
    issue_class = staticmethod(fam_train.issue_class)


FAMILIES = {"train": _Train, "counts": fam_counts, "lookup": fam_lookup, "route": fam_route,
            "positions": fam_positions}
# share of seeds each family takes; the rest are step programs
SHARES = [("train", 0.3), ("counts", 0.12), ("lookup", 0.08), ("route", 0.06), ("positions", 0.06)]


def pick(seed):
    """The family of a seed (None: a step program), from a stream of its own so that adding a
    family does not change what the others draw."""
    x = random.Random(seed * 1000003 + 11).random()
    for name, share in SHARES:
        if x < share:
            return name
        x -= share
    return None


def of(rec):
    return FAMILIES.get(rec.get("family"))
