"""The storage's Prometheus families (`/metrics`, built at scrape time by serve's collector)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from zerocopy.store.storage import StorageStats


def storage_metrics(stats: StorageStats) -> Iterator[Any]:
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily  # (the serve extra)

    used = GaugeMetricFamily("zerocopy_storage_bytes", "bytes the storage holds: the events' files (snapshots, "
                             "thumbnails, clips; with those no event names and those being written) and the events "
                             "database", labels=["kind"])
    used.add_metric(["files"], stats.file_bytes)
    used.add_metric(["database"], stats.database_bytes)
    yield used
    yield GaugeMetricFamily("zerocopy_storage_limit_bytes", "[storage] max_gb: the events' files are kept below this",
                            value=stats.max_bytes)
    yield GaugeMetricFamily("zerocopy_storage_events", "events kept in the database", value=stats.events)
    yield GaugeMetricFamily("zerocopy_storage_unnamed_files", "files in the storage folder no event names (a database "
                            "moved aside, a kill): counted in max_gb, removed oldest first", value=stats.unnamed_files)
    yield GaugeMetricFamily("zerocopy_storage_available", "1 while the events database is open",
                            value=1.0 if stats.available else 0.0)
    yield GaugeMetricFamily("zerocopy_storage_recording_stopped", "1 while a full disk stops recording (detection "
                            "and events go on)", value=1.0 if stats.recording_stopped else 0.0)
    yield CounterMetricFamily("zerocopy_storage_write_errors", "writes to the events database that failed and were "
                              "skipped", value=stats.write_errors)
    yield CounterMetricFamily("zerocopy_storage_dropped", "events never written: the store was behind",
                              value=stats.dropped)
    yield CounterMetricFamily("zerocopy_storage_removed", "events removed by retention (with their files)",
                              value=stats.removed)
    yield CounterMetricFamily("zerocopy_storage_refused", "file paths refused (outside the storage folder, '..', a "
                              "link): never served nor removed", value=stats.refused)
    yield CounterMetricFamily("zerocopy_storage_damaged_rows", "damaged rows of the events database, skipped",
                              value=stats.damaged_rows)
