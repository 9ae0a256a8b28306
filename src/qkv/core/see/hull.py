"""The convex-hull claim, checked by geometry rather than taken on trust.

One attention head's output is z = Σ_j a_j v_j with a_j ≥ 0 and Σ_j a_j = 1, so z lies in the
convex hull of the values v_j. `convex_weights` checks this for any point and any set of vertices
by solving a linear program; `pca_2d` and `hull_polygon` prepare the picture.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HullResult:
    """Is the point in the convex hull? `distance` is its L1 distance to the hull (0 inside);
    `weights` (≥ 0, summing to 1) give the hull point nearest in L1: the point itself when inside."""

    inside: bool
    distance: float
    weights: np.ndarray


def _as_points(vertices, name: str = "vertices") -> np.ndarray:
    V = np.asarray(vertices, dtype=float)
    if V.ndim == 1:
        V = V[:, None]  # n numbers are n points on a line
    if V.ndim != 2 or V.shape[0] == 0 or V.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty (n, d) array, got shape {V.shape}")
    if not np.all(np.isfinite(V)):
        raise ValueError(f"{name} contain a non-finite number")
    return V


def convex_weights(point, vertices, tol: float = 1e-9) -> HullResult:
    """Solve  min Σ(s⁺ + s⁻)  subject to  Vᵀw − s⁺ + s⁻ = p,  Σw = 1,  w, s⁺, s⁻ ≥ 0.

    The optimum is the L1 distance from p to conv{v_1..v_n}; p is inside when it is at most
    tol·(1 + scale), scale being the largest magnitude among p and the vertices. Works for any n
    and any dimension d, including degenerate hulls (n ≤ d, collinear or repeated points).
    """
    from scipy import sparse
    from scipy.optimize import linprog

    V = _as_points(vertices)
    n, d = V.shape
    p = np.asarray(point, dtype=float).reshape(-1)
    if p.shape != (d,):
        raise ValueError(f"the point has {p.size} coordinates but the vertices have {d}")
    if not np.all(np.isfinite(p)):
        raise ValueError("the point has a non-finite coordinate")
    scale = float(max(np.abs(V).max(), np.abs(p).max()))
    unit = scale if scale > 0 else 1.0  # solve in units of `scale`, so the solver's tolerances are relative
    cost = np.concatenate([np.zeros(n), np.ones(2 * d)])
    eye = sparse.identity(d, format="csr")  # sparse: the constraints hold n·d + 3d + n numbers, not (d + 1)(n + 2d)
    A_eq = sparse.vstack(
        [
            sparse.hstack([sparse.csr_matrix(V.T / unit), -eye, eye]),
            sparse.hstack([sparse.csr_matrix(np.ones((1, n))), sparse.csr_matrix((1, 2 * d))]),
        ],
        format="csr",
    )
    b_eq = np.concatenate([p / unit, [1.0]])
    res = linprog(
        cost,
        A_eq=A_eq,
        b_eq=b_eq,
        bounds=(0, None),
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if res.status != 0:  # cannot happen for a feasible, bounded LP; kept as a guard
        raise RuntimeError(f"the hull test failed to solve: {res.message}")
    w = np.clip(res.x[:n], 0.0, None)
    w = w / w.sum()
    # the distance is measured on the weights actually returned, so `inside` means V^T w reproduces p
    distance = float(np.abs(V.T @ w - p).sum())
    inside = distance <= tol * (1.0 + scale)
    return HullResult(inside=bool(inside), distance=0.0 if inside else distance, weights=w)


def pca_2d(points) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Project onto the two leading principal directions: y = (x − mean) Cᵀ, C = first 2 rows of Vᵀ
    in the SVD  X − mean = U S Vᵀ.  Returns (projected (n, 2), mean (d,), components (2, d)).

    For d ≤ 2 nothing needs projecting: mean is 0 and C the identity (with a zero row when d = 1),
    so the coordinates are kept as they are. The map is linear, so convex combinations survive it.
    """
    X = _as_points(points, "points")
    n, d = X.shape
    if d <= 2:
        components = np.eye(2, d)
        return X @ components.T, np.zeros(d), components
    mean = X.mean(axis=0)
    _, _, Vt = np.linalg.svd(X - mean, full_matrices=True)  # Vt: (d, d), rows orthonormal even if rank < 2
    components = Vt[:2].copy()
    for row in components:  # a fixed sign, so the same points always give the same picture
        if row[np.argmax(np.abs(row))] < 0:
            row *= -1
    return (X - mean) @ components.T, mean, components


def project(points, mean: np.ndarray, components: np.ndarray) -> np.ndarray:
    """Apply a projection from `pca_2d` to other points (e.g. z): (x − mean) Cᵀ."""
    X = np.atleast_2d(np.asarray(points, dtype=float))
    return (X - mean) @ components.T


def hull_polygon(points2d, tol: float = 1e-12) -> np.ndarray:
    """Vertices of the 2-D convex hull, in counter-clockwise order (scipy's Qhull).

    Degenerate cases: one distinct point gives (1, 2); collinear points give their two ends (2, 2).
    """
    from scipy.spatial import ConvexHull

    P = _as_points(points2d, "points")
    if P.shape[1] != 2:
        raise ValueError(f"hull_polygon needs 2-D points, got {P.shape[1]}-D")
    scale = max(1.0, float(np.abs(P).max()))
    distinct = P[np.unique(np.round(P / (scale * 1e-9)), axis=0, return_index=True)[1]]
    if len(distinct) == 1:
        return distinct
    centred = distinct - distinct.mean(axis=0)
    _, s, Vt = np.linalg.svd(centred, full_matrices=False)
    if len(s) < 2 or s[1] <= max(tol, 1e-9 * s[0]):  # all on one line: the hull is a segment
        t = centred @ Vt[0]
        return distinct[[np.argmin(t), np.argmax(t)]]
    hull = ConvexHull(distinct / scale)  # in units of the largest coordinate: Qhull's roundoff stays finite
    return distinct[hull.vertices]  # counter-clockwise for 2-D input
