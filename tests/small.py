"""Small parameters for every discrete catalogue mechanism (shared by several test modules).

Small enough that the enumerator and global verification are instant; a new discrete
mechanism must be added here (tests check that every one is covered).
"""

from samplers import catalogue

SMALL = {
    "rr": dict(n=3, lam="1/5"),
    "kary_rr": dict(k=4, p="7/10"),
    "trunc_geom": dict(m=3, a="1/3"),
    "rr_count": dict(n=3),
    "noisy_max_geom": dict(m=3),
    "noisy_max_geom_value": dict(m=3),
    "above_threshold_geom": dict(L=3),
    "histogram_geom": dict(m=2),
    "histogram_geom_wrong_scale": dict(m=2),
    "geo_sample": dict(n=3, eps=0.5),
    "rappor": dict(h=2, m=4),
    "one_time_rappor": dict(h=2, m=4),
    "svt_geom": dict(L=3, W=1),
    "isvt1_geom": dict(L=3),
    "isvt2_geom": dict(L=3, W=1),
    "isvt3_geom": dict(L=3, W=1),
    "isvt4_geom": dict(L=3, W=1),
}


def discrete_names() -> list[str]:
    """Every catalogue mechanism an exact backend handles."""
    return sorted(m.name for m in catalogue.mechanisms() if not m.trace().continuous)
