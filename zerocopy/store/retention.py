"""The recordings' part of a retention pass (`store.storage.Storage.prune`): each camera's segments past its days
(`expire`), then the oldest files, events' or segments', while all of the folder's files take more than
`[storage] max_gb` (`over_cap`). Each does at most `rounds` batches of `PRUNE_BATCH`, the rest at the next pass."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from zerocopy.store.events import PRUNE_BATCH, EventStore, Freed
from zerocopy.store.segments import Oldest, Retain, SegmentIndex


def expire(index: SegmentIndex, rules: Mapping[str, Retain], default_days: float, now: float,
           is_busy: Callable[[str], bool], rounds: int) -> Freed:
    """The segments past their camera's rule (`default_days` for a camera without one) removed, but those busy."""
    rows = size = 0
    for _ in range(rounds):
        old = index.expired(rules, default_days, now, PRUNE_BATCH)
        gone, freed = index.remove([o.path for o in old], is_busy)
        rows, size = rows + gone, size + freed
        if len(old) < PRUNE_BATCH:
            break
    return Freed(rows, size)


def over_cap(store: EventStore, index: SegmentIndex, besides: Callable[[], int], is_busy: Callable[[str], bool],
             rounds: int) -> Freed:
    """The oldest events' files (through the events' own retention, which keeps what it must) and segments removed
    while they take more than `besides()` less (the cap, less what the other files take); a file `is_busy` never
    (asked right before its removal: a segment begun meanwhile is left)."""
    rows = size = 0
    for _ in range(rounds):
        files = store.totals()[1]
        over = files + index.totals()[1] + besides()
        if over <= 0:
            break
        from_events, paths = oldest_first(index.oldest_events(PRUNE_BATCH),
                                          [o for o in index.oldest(PRUNE_BATCH) if not is_busy(o.path)], over)
        freed = store.prune(max_bytes=files - from_events, busy=is_busy) if from_events else Freed(0, 0)
        gone, freed_bytes = index.remove(paths, is_busy)
        rows, size = rows + freed.rows + gone, size + freed.bytes + freed_bytes
        if not freed.rows and not gone:
            break
    return Freed(rows, size)


def oldest_first(events: Sequence[Oldest], segments: Sequence[Oldest], over: int) -> tuple[int, list[str]]:
    """(bytes of events' files, segment paths) to remove to free `over` bytes, taking the oldest (by start) of
    `events` and `segments` (each oldest first) until enough is freed or both run out."""
    from_events = 0
    paths: list[str] = []
    i = j = 0
    while over > 0 and (i < len(events) or j < len(segments)):
        if j >= len(segments) or (i < len(events) and events[i].start <= segments[j].start):
            from_events += events[i].bytes
            over -= events[i].bytes
            i += 1
        else:
            paths.append(segments[j].path)
            over -= segments[j].bytes
            j += 1
    return from_events, paths
