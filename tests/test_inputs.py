"""StatDP input patterns and the randomised neighbour search."""

import numpy as np

from hybrid.inputs import ALL_PATTERNS, local_move, neighbour_search, pattern, pattern_pairs, random_pair
from samplers.lang.domain import Domain
from samplers.lang.neighbours import all_differ, custom, one_differ, replace_one


def test_patterns_as_statdp_lists_them():
    assert pattern("one below", 5) == ([1] * 5, [0, 1, 1, 1, 1])
    assert pattern("half half", 5) == ([1] * 5, [2, 2, 0, 0, 0])
    assert pattern("x shape", 5) == ([1, 1, 0, 0, 0], [0, 0, 1, 1, 1])


def test_pairs_per_relation_both_orders_all_neighbours():
    d = Domain((-10,) * 5, (10,) * 5)
    pairs = pattern_pairs(d, all_differ)
    assert len(pairs) == 2 * len(ALL_PATTERNS) == 16
    assert all(all_differ.contains(p.x, p.x_prime) for p in pairs)
    assert {(p.x_prime, p.x) for p in pairs} == {(p.x, p.x_prime) for p in pairs}
    assert len(pattern_pairs(d, one_differ)) == 4


def test_clipping_drops_collapsed_pairs():
    d = Domain((0,) * 3, (1,) * 3)  # value 2 clips to 1
    pairs = pattern_pairs(d, all_differ, both_orders=False)
    assert all(d.contains(p.x) and d.contains(p.x_prime) and p.x != p.x_prime for p in pairs)
    assert not any(p.origin == "one above" for p in pairs)  # [2,1,1] clipped equals [1,1,1]


def test_random_pairs_and_local_moves_stay_neighbours():
    rng = np.random.default_rng(0)
    d = Domain((0,) * 4, (3,) * 4)
    near = custom(lambda a, b: sum(abs(u - v) for u, v in zip(a, b)) == 2, "l1=2")
    for rel in (all_differ, one_differ, replace_one, near):
        for _ in range(30):
            p = random_pair(d, rel, rng)
            assert rel.contains(p.x, p.x_prime) and d.contains(p.x) and d.contains(p.x_prime)
            m = local_move(p, d, rel, rng)
            assert rel.contains(m.x, m.x_prime) and d.contains(m.x) and d.contains(m.x_prime)


def test_neighbour_search_climbs():
    d = Domain((0,) * 3, (5,) * 3)
    scored = neighbour_search(lambda p: -sum(abs(v - 5) for v in p.x), d, all_differ, random_starts=3,
                              steps=60, seed=1)
    assert scored[0][0] >= -1  # climbs to (or next to) the corner (5, 5, 5)
    assert [s for s, _ in scored] == sorted((s for s, _ in scored), reverse=True)
