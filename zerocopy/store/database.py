"""One SQLite file in WAL mode for threads that write and threads that read (`Database`): one writing connection
under a lock, reading connections from a small pool (a read never waits for a write, nor a write for a read). The
file and its `-wal` and `-shm` are 0600, its folder 0700, whatever the umask. A file that is damaged (SQLite says
"malformed" or "not a database", or `quick_check` finds faults) is moved aside to `NAME.corrupt-TIME` (with its
`-wal` and `-shm`) with one line said, and a new one is made (`moved_aside`); one that merely cannot be opened
(permissions, a folder in its place, a read-only disk, an I/O error, a lock) is left alone: the database is
`unavailable` (its `reason` says why), said once, and every use of it raises `StoreUnavailable`. A file made by an
earlier version is brought up to date in place at opening (`migrations`, counted in `PRAGMA user_version`)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from zerocopy.errors import ZeroCopyError
from zerocopy.store.folder import PRIVATE_FILE, make_private, make_private_dirs

BUSY_TIMEOUT_S = 5.0  # how long a connection waits for another's lock (another process on the same file)
BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED: in use elsewhere, not damaged: never moved aside
CORRUPT_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB: the only failures that move a database aside
CORRUPT_WORDS = ("malformed", "not a database")


class StoreUnavailable(ZeroCopyError):
    """The event store could not be opened (its reason), or is closed."""


class Damaged(sqlite3.DatabaseError):
    """`quick_check` found faults in the file."""


class Database:
    """`path` opened (made if missing) with `schema` (SQL run at every opening: `CREATE … IF NOT EXISTS`), then
    each of `migrations` the file has not had yet (the Nth brings it to version N: `PRAGMA user_version`), each in
    one transaction. `writing()` gives the writing connection inside a transaction (`BEGIN IMMEDIATE` … `COMMIT`,
    rolled back on an error); `reading()` a reading connection. `say`: where a database moved aside is said."""

    def __init__(self, path: str | Path, schema: str, say: Callable[[str], None],
                 clock: Callable[[], float] = time.time, migrations: Sequence[str] = ()):
        self.path, self.schema, self.say, self.migrations = Path(path), schema, say, tuple(migrations)
        self.reason: str | None = None  # why it is unavailable
        self._write_lock = threading.Lock()
        self._pool_lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._closed = False
        self.moved_aside: Path | None = None  # where a damaged file was moved at opening
        self._writer = self._open(clock)

    @property
    def available(self) -> bool:
        return self._writer is not None and not self._closed

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL: a commit is not lost on a crash of the process
        except BaseException:
            conn.close()
            raise
        return conn

    def _first(self) -> sqlite3.Connection:
        """The writing connection, the file checked (`quick_check`) and the schema made."""
        self._make_private()
        conn = self._connect()
        try:
            if conn.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
                raise sqlite3.DatabaseError("it cannot be put in WAL mode")
            verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise Damaged(f"damaged ({verdict})")
            conn.executescript(self.schema)
            self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """The migrations the file has not had, in order, each with its version in one transaction (a file made by
        a later version is left as it is)."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for number, sql in enumerate(self.migrations[version:], start=version + 1):
            try:
                conn.executescript(f"BEGIN IMMEDIATE;\n{sql}\n;\nPRAGMA user_version = {number};\nCOMMIT;")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _make_private(self) -> None:
        """The folder made (0700), the file made if missing, and it and its `-wal` and `-shm` made 0600 (SQLite
        makes those two with the file's mode). Never through a link (`O_NOFOLLOW`)."""
        make_private_dirs(self.path.parent)
        for suffix in ("", "-wal", "-shm"):
            flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_CREAT if not suffix else 0)
            try:
                fd = os.open(f"{self.path}{suffix}", flags, PRIVATE_FILE)
            except FileNotFoundError:
                continue
            try:
                make_private(fd)
            finally:
                os.close(fd)

    def _open(self, clock: Callable[[], float]) -> sqlite3.Connection | None:
        try:
            return self._first()
        except (sqlite3.Error, OSError) as e:
            why = _why(e)
            if getattr(e, "sqlite_errorcode", None) in BUSY_CODES:
                return self._unavailable(f"{self.path} is in use by another process ({why})")
            if not _corrupt(e):  # cannot be opened (permissions, a folder in its place, I/O): left where it is
                return self._unavailable(f"cannot open {self.path}: {why}")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(clock())}")
        try:
            for suffix in ("-wal", "-shm", ""):
                if Path(f"{self.path}{suffix}").exists():
                    os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
        except OSError as e:
            return self._unavailable(f"{self.path} cannot be read ({why}) nor moved aside ({_why(e)})")
        self.moved_aside = aside
        self.say(f"events: {self.path} is damaged ({why}); moved aside to {aside.name}, a new one started")
        try:
            return self._first()
        except (sqlite3.Error, OSError) as e:
            return self._unavailable(f"cannot make {self.path}: {_why(e)}")

    def _unavailable(self, reason: str) -> None:
        self.reason = reason
        self.say(f"events: not kept: {reason}; detection goes on")
        return None

    def _check(self) -> None:
        if self._closed:
            raise StoreUnavailable("the event store is closed")
        if self._writer is None:
            raise StoreUnavailable(f"the event store is not available: {self.reason}")

    @contextlib.contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        with self._write_lock:
            self._check()
            assert self._writer is not None
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        self._check()
        with self._pool_lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._connect()
        try:
            yield conn
        finally:
            with self._pool_lock:
                if self._closed:
                    conn.close()
                else:
                    self._idle.append(conn)

    def size(self) -> int:
        """Bytes of the file and its write-ahead log."""
        return sum(os.path.getsize(p) for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def close(self) -> None:
        with self._write_lock, self._pool_lock:
            self._closed = True
            for conn in [*self._idle, *([self._writer] if self._writer is not None else [])]:
                conn.close()
            self._idle.clear()


def _corrupt(e: BaseException) -> bool:
    """Whether SQLite's error says the file is damaged (not merely that it cannot be opened)."""
    code = getattr(e, "sqlite_errorcode", None)
    return isinstance(e, Damaged) or (code is not None and code & 0xFF in CORRUPT_CODES) or (
        isinstance(e, sqlite3.DatabaseError) and any(w in str(e).lower() for w in CORRUPT_WORDS))


def _why(e: BaseException) -> str:
    return (getattr(e, "strerror", None) or str(e) or type(e).__name__).splitlines()[0][:200]
