"""Model registry API: families, versions, aliases (GTO-style: a pure API under a thin CLI).

    registry = open_registry("sqlite:///models/registry.db")
    v = registry.register_version("world-agent", artifact_path="models/world_agent/grpo", metrics={...})
    registry.promote("world-agent", v.number)         # champion -> v
    registry.rollback("world-agent")                   # champion -> what it pointed at before

Every write is one transaction. On SQLite it starts with ``BEGIN IMMEDIATE`` under a busy
timeout, so concurrent pipeline runs serialise: version numbers stay consecutive and unique,
and a writer that cannot get the lock in time fails with :class:`RegistryBusyError` naming
the database.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from worldagent.errors import InputError, RunError
from worldagent.registry.db import (
    AliasEventRow,
    AliasRow,
    Base,
    Database,
    FamilyRow,
    VersionRow,
    create_tables,
    database_errors,
    make_engine,
    utcnow,
)

CHAMPION = "champion"
CHALLENGER = "challenger"
Status = Literal["registered", "published", "rejected", "failed"]
STATUSES: tuple[str, ...] = ("registered", "published", "rejected", "failed")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
T = TypeVar("T")


class RegistryError(RunError):
    """A registry operation that cannot be done (unknown family/version, no rollback target...)."""


class NotFoundError(RegistryError, InputError, LookupError):
    pass


class RegistryBusyError(RegistryError):
    """Another writer held the database lock longer than the busy timeout."""


@dataclass(frozen=True)
class Version:
    family: str
    number: int
    artifact_path: str
    status: str
    created_at: datetime
    source_path: str | None = None
    artifact_hash: str | None = None
    git_revision: str | None = None
    dvc_hash: str | None = None
    params_hash: str | None = None
    data_hash: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    published_uri: str | None = None
    published_revision: str | None = None
    aliases: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"v{self.number}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "version": self.number,
            "status": self.status,
            "aliases": list(self.aliases),
            "artifact_path": self.artifact_path,
            "source_path": self.source_path,
            "artifact_hash": self.artifact_hash,
            "git_revision": self.git_revision,
            "dvc_hash": self.dvc_hash,
            "params_hash": self.params_hash,
            "data_hash": self.data_hash,
            "metrics": self.metrics,
            "notes": self.notes,
            "published_uri": self.published_uri,
            "published_revision": self.published_revision,
            "created_at": self.created_at.isoformat(timespec="seconds") + "Z",
        }


@dataclass(frozen=True)
class AliasMove:
    family: str
    alias: str
    version: int
    previous: int | None


def _check_name(kind: str, name: str) -> None:
    if not _NAME.match(name):
        raise RegistryError(f"invalid {kind} name {name!r}: use letters, digits, '.', '_' or '-' (max 100)")


class Registry(Database):
    """A model registry on one database. Thread- and process-safe through database transactions."""

    def __repr__(self) -> str:
        return f"Registry({self.location!r})"

    # -- transactions -------------------------------------------------------------------------

    what = "model registry"

    @contextmanager
    def _session(self, write: bool) -> Iterator[Session]:
        # Busy first (its own error, which callers retry on), then the one database error path.
        with database_errors(self.what, self.location):
            try:
                with (
                    Session(self._writer if write else self.engine, expire_on_commit=False) as session,
                    session.begin(),
                ):
                    yield session
            except OperationalError as error:
                if "locked" in str(error.orig) or "busy" in str(error.orig):
                    raise RegistryBusyError(
                        f"registry database {self.location} is locked by another writer (another pipeline run?); "
                        "it waited for the busy timeout and gave up: retry when the other run has finished"
                    ) from None
                raise

    def _write(self, fn: Callable[[Session], T], retries: int = 3) -> T:
        for attempt in range(retries + 1):
            try:
                with self._session(write=True) as session:
                    return fn(session)
            except IntegrityError:
                # Non-SQLite databases without table locks: a concurrent writer took the same
                # version number or alias row first. The transaction rolled back; try again.
                if attempt == retries:
                    raise
        raise AssertionError("unreachable")

    # -- helpers --------------------------------------------------------------------------------

    @staticmethod
    def _family(session: Session, family: str, create: bool = False) -> FamilyRow:
        row = session.scalar(select(FamilyRow).where(FamilyRow.name == family))
        if row is None:
            if not create:
                raise NotFoundError(f"unknown model family {family!r}")
            _check_name("family", family)
            row = FamilyRow(name=family)
            session.add(row)
            session.flush()
        return row

    @staticmethod
    def _version_row(session: Session, family: FamilyRow, number: int) -> VersionRow:
        row = session.scalar(select(VersionRow).where(VersionRow.family_id == family.id, VersionRow.number == number))
        if row is None:
            raise NotFoundError(f"{family.name} has no version {number}")
        return row

    @staticmethod
    def _aliases_by_version(session: Session, family: FamilyRow) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for alias in session.scalars(select(AliasRow).where(AliasRow.family_id == family.id).order_by(AliasRow.name)):
            out.setdefault(alias.version_id, []).append(alias.name)
        return out

    @staticmethod
    def _to_version(family: FamilyRow, row: VersionRow, aliases: Sequence[str] = ()) -> Version:
        return Version(
            family=family.name,
            number=row.number,
            artifact_path=row.artifact_path,
            source_path=row.source_path,
            status=row.status,
            created_at=row.created_at,
            artifact_hash=row.artifact_hash,
            git_revision=row.git_revision,
            dvc_hash=row.dvc_hash,
            params_hash=row.params_hash,
            data_hash=row.data_hash,
            metrics=dict(row.metrics or {}),
            notes=list(row.notes or []),
            published_uri=row.published_uri,
            published_revision=row.published_revision,
            aliases=tuple(sorted(aliases, key=lambda a: (a != CHAMPION, a))),
        )

    def _snapshot(self, session: Session, family: FamilyRow, row: VersionRow) -> Version:
        return self._to_version(family, row, self._aliases_by_version(session, family).get(row.id, []))

    # -- versions -------------------------------------------------------------------------------

    def register_version(
        self,
        family: str,
        *,
        artifact_path: str,
        metrics: Mapping[str, Any] | None = None,
        status: Status = "registered",
        source_path: str | None = None,
        artifact_hash: str | None = None,
        git_revision: str | None = None,
        dvc_hash: str | None = None,
        params_hash: str | None = None,
        data_hash: str | None = None,
        notes: Sequence[str] = (),
    ) -> Version:
        """Add the next version of ``family`` (created on first use); numbers start at 1.

        ``artifact_path`` is where the adapter can be loaded from; ``source_path`` (default: the same)
        records the training output it came from. Deploy repoints ``artifact_path`` at the immutable
        published copy, so the champion survives the next training run overwriting its source.
        """
        if status not in STATUSES:
            raise RegistryError(f"invalid status {status!r}; expected one of {', '.join(STATUSES)}")

        def do(session: Session) -> Version:
            fam = self._family(session, family, create=True)
            if session.bind is not None and session.bind.dialect.name != "sqlite":
                # Serialise numbering on servers with row locks (SQLite is already IMMEDIATE).
                session.execute(select(FamilyRow.id).where(FamilyRow.id == fam.id).with_for_update())
            last = session.scalar(select(func.max(VersionRow.number)).where(VersionRow.family_id == fam.id))
            row = VersionRow(
                family_id=fam.id,
                number=(last or 0) + 1,
                artifact_path=str(artifact_path),
                source_path=str(source_path if source_path is not None else artifact_path),
                artifact_hash=artifact_hash,
                git_revision=git_revision,
                dvc_hash=dvc_hash,
                params_hash=params_hash,
                data_hash=data_hash,
                metrics=dict(metrics or {}),
                status=status,
                notes=list(notes),
                created_at=utcnow(),
            )
            session.add(row)
            session.flush()
            return self._to_version(fam, row)

        return self._write(do)

    def update_version(
        self,
        family: str,
        version: int,
        *,
        status: Status | None = None,
        artifact_path: str | None = None,
        published_uri: str | None = None,
        published_revision: str | None = None,
        notes: Sequence[str] | None = None,
    ) -> Version:
        if status is not None and status not in STATUSES:
            raise RegistryError(f"invalid status {status!r}; expected one of {', '.join(STATUSES)}")

        def do(session: Session) -> Version:
            fam = self._family(session, family)
            row = self._version_row(session, fam, version)
            if status is not None:
                row.status = status
            if artifact_path is not None:
                row.artifact_path = str(artifact_path)
            if published_uri is not None:
                row.published_uri = published_uri
            if published_revision is not None:
                row.published_revision = published_revision
            if notes is not None:
                row.notes = list(notes)
            session.flush()
            return self._snapshot(session, fam, row)

        return self._write(do)

    def get_version(self, family: str, version: int) -> Version:
        def do(session: Session) -> Version:
            fam = self._family(session, family)
            return self._snapshot(session, fam, self._version_row(session, fam, version))

        return self._read(do)

    def list_versions(self, family: str) -> list[Version]:
        """Every version of ``family``, oldest first (an unknown family has none)."""

        def do(session: Session) -> list[Version]:
            fam = session.scalar(select(FamilyRow).where(FamilyRow.name == family))
            if fam is None:
                return []
            aliases = self._aliases_by_version(session, fam)
            rows = session.scalars(select(VersionRow).where(VersionRow.family_id == fam.id).order_by(VersionRow.number))
            return [self._to_version(fam, row, aliases.get(row.id, [])) for row in rows]

        return self._read(do)

    def list_families(self) -> list[str]:
        return self._read(lambda session: list(session.scalars(select(FamilyRow.name).order_by(FamilyRow.name))))

    def find_version(self, family: str, *, artifact_hash: str, statuses: Sequence[str] = STATUSES) -> Version | None:
        """The newest version of ``family`` with this artifact hash (and one of ``statuses``)."""
        matches = [v for v in self.list_versions(family) if v.artifact_hash == artifact_hash and v.status in statuses]
        return matches[-1] if matches else None

    # -- aliases --------------------------------------------------------------------------------

    def set_alias(self, family: str, alias: str, version: int) -> AliasMove:
        """Point ``alias`` at ``version`` (recorded in the alias history)."""
        _check_name("alias", alias)

        def do(session: Session) -> AliasMove:
            fam = self._family(session, family)
            row = self._version_row(session, fam, version)
            return self._move(session, fam, alias, row, action="set")

        return self._write(do)

    def _move(self, session: Session, fam: FamilyRow, alias: str, row: VersionRow, action: str) -> AliasMove:
        current = session.scalar(select(AliasRow).where(AliasRow.family_id == fam.id, AliasRow.name == alias))
        previous_id = current.version_id if current is not None else None
        previous_number = session.get(VersionRow, previous_id).number if previous_id is not None else None  # type: ignore[union-attr]
        if previous_id == row.id:
            return AliasMove(family=fam.name, alias=alias, version=row.number, previous=previous_number)
        if current is None:
            session.add(AliasRow(family_id=fam.id, name=alias, version_id=row.id, updated_at=utcnow()))
        else:
            current.version_id = row.id
            current.updated_at = utcnow()
        session.add(
            AliasEventRow(
                family_id=fam.id,
                alias=alias,
                action=action,
                version_id=row.id,
                previous_version_id=previous_id,
                created_at=utcnow(),
            )
        )
        session.flush()
        return AliasMove(family=fam.name, alias=alias, version=row.number, previous=previous_number)

    def get_alias(self, family: str, alias: str) -> Version | None:
        def do(session: Session) -> Version | None:
            fam = session.scalar(select(FamilyRow).where(FamilyRow.name == family))
            if fam is None:
                return None
            current = session.scalar(select(AliasRow).where(AliasRow.family_id == fam.id, AliasRow.name == alias))
            if current is None:
                return None
            row = session.get(VersionRow, current.version_id)
            assert row is not None
            return self._snapshot(session, fam, row)

        return self._read(do)

    def remove_alias(self, family: str, alias: str) -> None:
        def do(session: Session) -> None:
            fam = self._family(session, family)
            current = session.scalar(select(AliasRow).where(AliasRow.family_id == fam.id, AliasRow.name == alias))
            if current is None:
                raise NotFoundError(f"{family} has no alias {alias!r}")
            session.delete(current)

        self._write(do)

    def alias_history(self, family: str, alias: str = CHAMPION) -> list[AliasMove]:
        """Every move of ``alias``, oldest first."""

        def do(session: Session) -> list[AliasMove]:
            fam = session.scalar(select(FamilyRow).where(FamilyRow.name == family))
            if fam is None:
                return []
            numbers = {
                vid: num
                for vid, num in session.execute(
                    select(VersionRow.id, VersionRow.number).where(VersionRow.family_id == fam.id)
                )
            }
            events = session.scalars(
                select(AliasEventRow)
                .where(AliasEventRow.family_id == fam.id, AliasEventRow.alias == alias)
                .order_by(AliasEventRow.id)
            )
            return [
                AliasMove(
                    fam.name,
                    alias,
                    numbers[e.version_id],
                    numbers.get(e.previous_version_id) if e.previous_version_id else None,
                )
                for e in events
            ]

        return self._read(do)

    def promote(self, family: str, version: int, *, allow_rejected: bool = False) -> AliasMove:
        """Make ``version`` the champion. Versions the gate rejected need ``allow_rejected``."""

        def do(session: Session) -> AliasMove:
            fam = self._family(session, family)
            row = self._version_row(session, fam, version)
            if row.status in ("rejected", "failed") and not allow_rejected:
                raise RegistryError(
                    f"{family} v{version} is {row.status}; promote it anyway with allow_rejected (--force)"
                )
            return self._move(session, fam, CHAMPION, row, action="set")

        return self._write(do)

    def rollback(self, family: str, alias: str = CHAMPION) -> AliasMove:
        """Move ``alias`` back to what it pointed at before its current target was set."""

        def do(session: Session) -> AliasMove:
            fam = self._family(session, family)
            current = session.scalar(select(AliasRow).where(AliasRow.family_id == fam.id, AliasRow.name == alias))
            if current is None:
                raise RegistryError(f"{family} has no {alias}: nothing to roll back")
            setter = session.scalar(
                select(AliasEventRow)
                .where(
                    AliasEventRow.family_id == fam.id,
                    AliasEventRow.alias == alias,
                    AliasEventRow.action == "set",
                    AliasEventRow.version_id == current.version_id,
                )
                .order_by(AliasEventRow.id.desc())
                .limit(1)
            )
            if setter is None or setter.previous_version_id is None:
                number = session.get(VersionRow, current.version_id).number  # type: ignore[union-attr]
                raise RegistryError(
                    f"{family} {alias} is v{number}, the first it ever pointed at: there is no previous version to roll back to"
                )
            target = session.get(VersionRow, setter.previous_version_id)
            assert target is not None
            return self._move(session, fam, alias, target, action="rollback")

        return self._write(do)


def open_registry(url: str, *, busy_timeout: float = 30.0) -> Registry:
    """Open (and create when missing: tables and the SQLite file's directory) the registry at ``url``.

    A database that cannot be opened raises ``DatabaseError`` (``CorruptDatabaseError`` for a bad file).
    """
    engine = make_engine(url, busy_timeout=busy_timeout)
    create_tables(engine, Base.metadata, "model registry", url, scan=True)  # a registry is small
    return Registry(engine, url)
