"""What a reviewer sees instead of the truth: anonymous labels, a private order, counterbalanced sides.

All of it is drawn from the batch's secret (``domain.keyed_random.KeyedRandom``), stored in the database, so
an assignment can be rebuilt and audited; none of it is derivable by a reviewer (labels are keyed draws, not
counters nor a function of the rubric's seed; orders are per-reviewer keyed shuffles). :func:`rng_for`
serves the plan's choice of who reviews what, which the rubric's seed keeps reproducible.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from reviewer_app.errors import AssignmentError

K = TypeVar("K", bound=Hashable)

LABEL_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: labels are read aloud in discussions
LABEL_LENGTH = 5  # 32**5 = 33.5M labels, drawn while at most half of them (16.7M) are taken
MAX_LABEL_LENGTH = 8  # 32**8 = 1.1e12: far past any batch a database here can hold


def rng_for(seed: int, *parts: object) -> random.Random:
    """A seeded generator for the plan's choice of who reviews what (``rng_for(seed, "plan", round_no)``): for
    nothing a reviewer observes, which :class:`~reviewer_app.domain.keyed_random.KeyedRandom` draws."""
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def label_length(total: int) -> int:
    """How long labels are when a batch holds ``total`` of them: :data:`LABEL_LENGTH` characters while that
    space is at most half full (so that a random draw mostly hits a free label), one more for each 32-fold.

    At k = 3 five characters serve batches of about 5.6M outputs; six, 179M. Raises
    :class:`AssignmentError` past :data:`MAX_LABEL_LENGTH`."""
    length = LABEL_LENGTH
    while total > len(LABEL_ALPHABET) ** length // 2:
        length += 1
        if length > MAX_LABEL_LENGTH:
            raise AssignmentError(
                f"a batch holds at most {len(LABEL_ALPHABET) ** MAX_LABEL_LENGTH // 2:,} anonymous labels "
                f"(one per item a reviewer is shown), and this would make {total:,}; split the batch"
            )
    return length


def draw_labels(rng: random.Random, count: int, taken: set[str] | None = None) -> list[str]:
    """``count`` distinct labels like ``K7Q2M``, none of them in ``taken`` (the batch's labels so far).

    Labels are unique across the whole batch, so two reviewers never hold the same label and cannot line up
    their notes on "output 7". They are :func:`label_length` characters long for the batch's labels so far
    plus these: five in all but the largest batches, where new labels get a sixth (``K7Q2MA``); labels
    already drawn keep their length. Below that size the draws are exactly what they always were.
    """
    taken = set() if taken is None else taken
    length = label_length(count + len(taken))
    space = len(LABEL_ALPHABET) ** length
    out: list[str] = []
    seen = set(taken)
    while len(out) < count:
        n = rng.randrange(space)
        chars = []
        for _ in range(length):
            n, r = divmod(n, len(LABEL_ALPHABET))
            chars.append(LABEL_ALPHABET[r])
        label = "".join(chars)
        if label not in seen:
            seen.add(label)
            out.append(label)
    return out


def balanced_orientation(pairs: Sequence[tuple[Hashable, Hashable]], rng: random.Random) -> list[bool]:
    """For each pair (a, b) decide whether to swap it (b on the left) so that every model stands on the
    left and on the right equally often, within one.

    This is an Euler orientation: add a dummy vertex joined to every odd-degree vertex, walk Euler circuits
    (every vertex is entered as often as it is left), and put each edge's tail on the left. Random start
    points and edge order keep it from being predictable.
    """
    adjacency: dict[Hashable, list[tuple[Hashable, int]]] = defaultdict(list)
    edges: list[tuple[Hashable, Hashable]] = list(pairs)
    for idx, (a, b) in enumerate(edges):
        adjacency[a].append((b, idx))
        adjacency[b].append((a, idx))
    dummy = object()
    all_edges = list(edges)
    for vertex in [v for v, adj in adjacency.items() if len(adj) % 2]:
        idx = len(all_edges)
        all_edges.append((vertex, dummy))
        adjacency[vertex].append((dummy, idx))
        adjacency[dummy].append((vertex, idx))
    for adj in adjacency.values():
        rng.shuffle(adj)
    used = [False] * len(all_edges)
    left_of: dict[int, Hashable] = {}
    pointer: dict[Hashable, int] = defaultdict(int)
    vertices = list(adjacency)
    rng.shuffle(vertices)
    for start in vertices:
        # Hierholzer's walk; we only need each edge's direction of travel, not the circuit itself.
        stack = [start]
        while stack:
            v = stack[-1]
            adj = adjacency[v]
            while pointer[v] < len(adj) and used[adj[pointer[v]][1]]:
                pointer[v] += 1
            if pointer[v] == len(adj):
                stack.pop()
                continue
            w, idx = adj[pointer[v]]
            used[idx] = True
            left_of[idx] = v
            stack.append(w)
    return [left_of[i] != a for i, (a, _b) in enumerate(edges)]


def pool_orientation(balance: Mapping[K, int], a: K, b: K, rng: random.Random) -> bool:
    """Whether to swap a pool-claimed pair (b on the left), given ``balance`` (model -> times on the left
    minus times on the right for this reviewer so far): the side that keeps every model nearest to even,
    and a coin from ``rng`` (the reviewer's own) when both sides do that equally well.

    The online counterpart of :func:`balanced_orientation`: claims come one at a time, so the plan cannot
    be drawn ahead, but the sides are as balanced and as unpredictable as planned ones. Always settling a
    tie the same way made every reviewer see the pattern "a on the left, then b, then a" in pool mode.
    """
    keep = max(abs(balance.get(a, 0) + 1), abs(balance.get(b, 0) - 1))
    swap = max(abs(balance.get(b, 0) + 1), abs(balance.get(a, 0) - 1))
    if keep != swap:
        return swap < keep
    return rng.random() < 0.5
