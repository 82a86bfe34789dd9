"""What `zerocopy serve` keeps on disk (issue 29 §3): the events database (`events.EventStore`: SQLite in WAL mode,
one row per tracked object with the paths of its files), the storage folder around it (`storage.Storage`: the
background writer, retention, the busy files, the disk-full flag) and its `/metrics` families (`metrics.py`)."""
