"""The official holiday schedules the operator loads (`schedbot holidays load FILE`), kept in the database so
every web and worker process of a deployment reads the same calendar, and installed into `schedule.holidays`
(`refresh`: at start, then now and then)."""

from __future__ import annotations

import json
import logging
import tomllib
from datetime import date
from pathlib import Path

from sqlalchemy import delete, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from schedule import holidays
from schedule.holidays import MAX_FILE_BYTES, HolidayFileError, YearSchedule, parse_schedules
from schedule.model import HolidayYearRow

log = logging.getLogger(__name__)


def read_file(path: Path) -> tuple[list[YearSchedule], str | None]:
    """The schedules in a JSON or TOML file (by its suffix; JSON otherwise), and the `source` each year named
    (the first); HolidayFileError (or OSError) when it cannot be used."""
    if path.stat().st_size > MAX_FILE_BYTES:
        raise HolidayFileError(f"{path.name} is larger than {MAX_FILE_BYTES} bytes")
    text = path.read_text(encoding="utf-8")
    try:
        data: object = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError and json.JSONDecodeError
        raise HolidayFileError(f"{path.name} is not valid {'TOML' if path.suffix.lower() == '.toml' else 'JSON'} "
                               f"({str(exc)[:120]})") from None
    source = None
    tables = data.get("years") if isinstance(data, dict) and "years" in data else [data]
    for table in tables if isinstance(tables, list) else []:
        if isinstance(table, dict) and isinstance(table.get("source"), str):
            source = str(table["source"])
            break
    return parse_schedules(data), source


async def store(session: AsyncSession, schedules: list[YearSchedule], *, source: str | None, now_ms: int) -> None:
    """Keep these years' schedules (a year loaded again is replaced)."""
    years = [s.year for s in schedules]
    await session.execute(delete(HolidayYearRow).where(HolidayYearRow.year.in_(years)))
    session.add_all(HolidayYearRow(year=s.year, holidays=sorted(d.isoformat() for d in s.holidays),
                                   workdays=sorted(d.isoformat() for d in s.workdays), source=source,
                                   loaded_at=now_ms) for s in schedules)
    await session.flush()


async def stored(session: AsyncSession) -> list[YearSchedule]:
    rows = (await session.scalars(select(HolidayYearRow).order_by(HolidayYearRow.year))).all()
    return [YearSchedule(row.year, frozenset(map(date.fromisoformat, row.holidays)),
                         frozenset(map(date.fromisoformat, row.workdays))) for row in rows]


async def refresh(sessions: async_sessionmaker[AsyncSession]) -> bool:
    """Install the stored schedules in this process; True when they changed. A database that cannot be read
    (not migrated yet, or down) leaves the calendar as it was."""
    try:
        async with sessions() as session:
            found = await stored(session)
    except (SQLAlchemyError, ValueError, TypeError) as exc:  # a row edited by hand into something unreadable too
        log.warning("holiday schedules not read (%s); the calendar stays as it was", type(exc).__name__)
        return False
    changed = holidays.install(found)
    if changed:
        log.info("official holiday schedules in use for %s", ", ".join(str(s.year) for s in found) or "no year")
    return changed
