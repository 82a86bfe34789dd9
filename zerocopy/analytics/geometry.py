"""Polygons and line segments drawn on a camera's picture: read from text, checked (enough points, no crossing
itself, a length), placed on a frame of a given size (fractions 0–1 or pixels, clipped to the frame), and the
two questions asked of them: is a point inside (a zone), which side of a line is it on."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Points = tuple[tuple[float, float], ...]


def read_points(text: str) -> Points:
    """`x1,y1,x2,y2,...` → ((x1, y1), (x2, y2), ...); a ValueError says what is wrong."""
    items = [v.strip() for v in text.split(",")]
    try:
        values = [float(v) for v in items]
    except ValueError:
        raise ValueError(f"points are numbers x1,y1,x2,y2,..., not {text!r}") from None
    if len(values) % 2:
        raise ValueError(f"points come in x,y pairs: {len(values)} numbers in {text!r}")
    if not all(np.isfinite(values)) or any(v < 0 for v in values):
        raise ValueError(f"points are numbers ≥ 0 (pixels, or fractions of the frame): {text!r}")
    return tuple((values[i], values[i + 1]) for i in range(0, len(values), 2))


def write_points(points: Points) -> str:
    return ",".join(f"{v:g}" for p in points for v in p)


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def segments_cross(p1: np.ndarray, p2: np.ndarray, q1: np.ndarray, q2: np.ndarray) -> bool:
    """Whether segments p1–p2 and q1–q2 cross at a point inside both (touching ends do not count)."""
    d1, d2 = _cross(q1, q2, p1), _cross(q1, q2, p2)
    d3, d4 = _cross(p1, p2, q1), _cross(p1, p2, q2)
    return d1 * d2 < 0 and d3 * d4 < 0


def crosses_itself(points: Points) -> bool:
    """Whether a closed polygon's edges cross one another (edges that share a corner are not compared)."""
    p = np.asarray(points, np.float64)
    n = len(p)
    edges = [(p[i], p[(i + 1) % n]) for i in range(n)]
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue  # the first and last edges share the first corner
            if segments_cross(*edges[i], *edges[j]):
                return True
    return False


def check_polygon(points: Points) -> None:
    if len(points) < 3:
        raise ValueError(f"a polygon needs at least 3 points, not {len(points)}")
    if crosses_itself(points):
        raise ValueError("the polygon crosses itself (give its corners in order around it)")
    if abs(area(points)) == 0:
        raise ValueError("the polygon has no area (its points are on one line)")


def check_segment(points: Points) -> None:
    if len(points) != 2:
        raise ValueError(f"a line is two points x1,y1,x2,y2, not {len(points)}")
    if points[0] == points[1]:
        raise ValueError("the line has zero length (its two points are the same)")


def area(points: Points) -> float:
    p = np.asarray(points, np.float64)
    return 0.5 * float(np.dot(p[:, 0], np.roll(p[:, 1], -1)) - np.dot(p[:, 1], np.roll(p[:, 0], -1)))


@dataclass(frozen=True)
class Placed:
    """Points placed on a frame: in pixels, clipped to it; `clipped` says whether any point lay outside."""

    xy: np.ndarray  # float64, N×2
    clipped: bool


def place(points: Points, width: int, height: int) -> Placed:
    """The points in pixels of a `width`×`height` frame: fractions of it when every value is ≤ 1, else pixels;
    a point outside the frame is moved to its edge."""
    p = np.asarray(points, np.float64)
    if (p <= 1.0).all():
        p = p * (width, height)
    inside = np.clip(p, 0, (width, height))
    return Placed(inside, bool((inside != p).any()))


def inside(polygon: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """For each point (N×2), whether it is inside the polygon (M×2, pixels): even-odd ray casting, vectorised."""
    x, y = xy[:, 0:1], xy[:, 1:2]
    ax, ay = polygon[:, 0], polygon[:, 1]
    bx, by = np.roll(ax, -1), np.roll(ay, -1)
    spans = (ay > y) != (by > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        at = ax + (y - ay) * (bx - ax) / (by - ay)
    return ((spans & (x < at)).sum(axis=1) % 2) == 1


def bottom_centres(xyxy: np.ndarray) -> np.ndarray:
    """Each box's bottom-centre (Frigate's point of a zone test): where an object stands."""
    xyxy = np.asarray(xyxy, np.float64).reshape(-1, 4)
    return np.stack([(xyxy[:, 0] + xyxy[:, 2]) / 2, xyxy[:, 3]], axis=1)


def side(segment: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """Signed distance in pixels of each point from the line through `segment` (2×2): negative on its left-hand
    side looking from its first point to its second (image y points down), positive on its right."""
    a, b = segment
    d = b - a
    return ((d[0] * (xy[:, 1] - a[1])) - (d[1] * (xy[:, 0] - a[0]))) / float(np.hypot(*d))


def along(segment: np.ndarray, p: np.ndarray, q: np.ndarray) -> float | None:
    """Where the path p→q meets the line through `segment`, as a fraction of the segment from its first point
    (0–1: on the segment); None when the path runs parallel to it."""
    a, b = segment
    r, s = b - a, q - p
    denom = r[0] * s[1] - r[1] * s[0]
    if denom == 0:
        return None
    return float(((p[0] - a[0]) * s[1] - (p[1] - a[1]) * s[0]) / denom)
