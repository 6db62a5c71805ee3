"""The advisor's words on a turn's keeps: each legal keep ranked by the best expected final
turn score (:func:`rank_keeps`), from the advisor's options made JSON-able (:func:`plain`)."""

from __future__ import annotations

from typing import Any

__all__ = ["plain", "rank_keeps"]


def plain(obj: Any) -> Any:
    """Dataclasses / named tuples / objects with to_dict to JSON-able values."""
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if hasattr(obj, "__dataclass_fields__"):
        return {k: plain(getattr(obj, k)) for k in obj.__dataclass_fields__}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    return obj


def rank_keeps(keeps: list[dict[str, Any]], advice: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give each keep the advisor's best expected final turn score and what to do next
    (``then``: ``bank`` or ``roll``), best first."""
    best: dict[tuple[tuple[int, ...], bool], dict[str, Any]] = {}
    for a in advice:
        key = (tuple(sorted(a.get("keep") or [])), bool(a.get("forced_reroll")))
        if key not in best or (a.get("expected") or 0) > (best[key].get("expected") or 0):
            best[key] = a
    out = []
    for k in keeps:
        a = best.get((tuple(sorted(k["dice"])), bool(k.get("forced_reroll"))))
        out.append(
            {
                **k,
                "expected": None if a is None else a.get("expected"),
                "then": None if a is None else a.get("then"),
            }
        )
    out.sort(key=lambda k: (k["expected"] is None, -(k["expected"] or 0), -k["points"]))
    return out
