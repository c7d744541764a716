"""Ranks, tiers and compact letter displays from the pairs a ranking separates.

Letters follow the insert-and-absorb algorithm of Piepho (2004, "An algorithm for a letter-based
representation of all-pairwise comparisons", J. Comput. Graph. Stat. 13(2)): two models share a letter
exactly when the ranking does not separate them. A model's tier is the place of its best letter among the
letters that are some model's best, numbered 1, 2, 3 ... without gaps (a letter that is no model's best, held
only beside a better one as in "de", gives no tier); so models in one tier are never separated, and a better
tier's models come first. Where separation is not transitive (A ~ B, B ~ C, A > C) the letters overlap ("a",
"ab", "b") and say so.
"""

from __future__ import annotations

import string

import numpy as np

LETTERS = string.ascii_lowercase + string.ascii_uppercase


def letter_name(k: int) -> str:
    """a, b, ..., z, A, ..., Z, then aa, ab, ... (a ranking rarely needs more than a handful)."""
    if k < len(LETTERS):
        return LETTERS[k]
    return letter_name(k // len(LETTERS) - 1) + LETTERS[k % len(LETTERS)]


def ranks_from(better: np.ndarray) -> np.ndarray:
    """Rank = 1 + the number of models significantly better (``better[i, j]``: i significantly above j)."""
    rank: np.ndarray = 1 + better.sum(axis=0).astype(int)
    return rank


def letter_groups(order: list[int], separated: np.ndarray) -> list[list[int]]:
    """The letter groups (lists of model indices), best group first.

    ``order`` lists the model indices from the best score down; ``separated`` is the symmetric (M x M)
    matrix of separated pairs. Insert: for each separated pair, every group holding both is split in two
    (one without each). Absorb: a group inside another is dropped. Sweep: a model is taken out of a group
    when each of its unseparated partners there also shares another group with it, and emptied or absorbed
    groups are dropped. Groups are ordered by their best member, then their next ones.
    """
    m = len(order)
    if m == 0:
        return []
    groups: list[frozenset[int]] = [frozenset(range(m))]
    position = {model: k for k, model in enumerate(order)}
    for a in range(m):
        for b in range(a + 1, m):
            i, j = order[a], order[b]
            if not separated[i, j]:
                continue
            split: list[frozenset[int]] = []
            for g in groups:
                if i in g and j in g:
                    split += [g - {j}, g - {i}]
                else:
                    split.append(g)
            groups = _absorb(split)
    groups = _absorb(_sweep([set(g) for g in groups], separated))
    ordered = sorted(groups, key=lambda g: sorted(position[x] for x in g))
    return [sorted(g, key=position.__getitem__) for g in ordered]


def _absorb(groups: list[frozenset[int]]) -> list[frozenset[int]]:
    unique = list(dict.fromkeys(g for g in groups if g))
    return [g for g in unique if not any(g < other for other in unique)]


def _sweep(groups: list[set[int]], separated: np.ndarray) -> list[frozenset[int]]:
    for g in groups:
        for x in sorted(g):
            others = [h for h in groups if h is not g]
            partners = [y for y in g if y != x]
            if partners and all(any(x in h and y in h for h in others) for y in partners):
                g.discard(x)
    return [frozenset(g) for g in groups if g]


def letters_and_tiers(order: list[int], separated: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Each model's letters ("a", "ab", ...) and tier: its best letter's place among the letters that are some
    model's best, numbered consecutively from 1 (letters a, ab, b, cd, d, e give tiers 1, 1, 2, 3, 3, 4; tiers
    taken straight from the letter index would skip where a letter is only ever held beside a better one)."""
    m = separated.shape[0]
    groups = letter_groups(order, separated)
    mine: list[list[int]] = [[] for _ in range(m)]
    for k, g in enumerate(groups):
        for x in g:
            mine[x].append(k)
    letters = ["".join(letter_name(k) for k in sorted(ks)) for ks in mine]
    best = [min(ks) if ks else 0 for ks in mine]
    place = {k: n + 1 for n, k in enumerate(sorted(set(best)))}
    tiers = np.array([place[k] for k in best], dtype=int)
    return letters, tiers
