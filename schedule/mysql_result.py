"""MariaDB result sets on the hot path: each distinct set of column definitions is parsed once.

In the text protocol the server sends one column-definition packet per column before the rows of every
result, and aiomysql parses each into a `FieldDescriptorPacket` (six length-coded strings and a struct),
its DB-API description and its converter, every time. A chat message reads a few results of 7–25 columns,
so that parsing was about a tenth of the webhook's CPU on MariaDB (py-spy). The packets of one statement
are the same bytes each time, so here they are read as raw bytes (no packet object each) and looked up:
a set seen before gives its parsed fields, converters and description at once. Everything else (rows,
OK and error packets, several results per query) is aiomysql's own `MySQLResult`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiomysql.connection import MySQLResult
from pymysql.connections import TEXT_TYPES  # the set aiomysql decodes by it
from pymysql.constants import COMMAND, FIELD_TYPE
from pymysql.converters import through
from pymysql.err import InternalError
from pymysql.protocol import FieldDescriptorPacket, MysqlPacket

_KNOWN_MAX = 4096  # distinct column sets kept (a process runs a few dozen statements)
_known: dict[tuple[Any, ...], tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]] = {}


async def query(driver: Any, sql: str) -> None:
    """COM_QUERY on an aiomysql connection and its first result read (`driver._result`), as
    `Connection.query` does, with the column definitions looked up (see the module docstring)."""
    await driver._execute_command(COMMAND.COM_QUERY, sql.encode(driver.encoding, "surrogateescape"))
    await next_result(driver)


async def next_result(driver: Any) -> None:
    """The next result of a multi-statement query (`Connection.next_result` with `_Result`)."""
    driver._result = None
    result = _Result(driver)
    await result.read()
    driver._result = result
    driver._affected_rows = result.affected_rows
    if result.server_status is not None:
        driver.server_status = result.server_status


class _Result(MySQLResult):  # type: ignore[misc]  # aiomysql is untyped
    async def _get_descriptions(self) -> None:
        conn = self.connection
        raws = tuple([await _raw_packet(conn) for _ in range(self.field_count)])
        eof = await conn._read_packet()
        assert eof.is_eof_packet(), "Protocol error, expecting EOF"
        key = (raws, conn.use_unicode, conn.encoding, id(conn.decoders))
        parsed = _known.get(key)
        if parsed is None:
            parsed = _parse(raws, conn)
            if len(_known) < _KNOWN_MAX:
                _known[key] = parsed
        fields, converters, self.description = parsed
        self.fields, self.converters = list(fields), list(converters)


async def _raw_packet(conn: Any) -> bytes:
    """One whole packet's payload (a column definition: never near the 16 MB split), sequence checked."""
    try:
        header = await conn._read_bytes(4)
        if header[3] != conn._next_seq_id:
            conn.close()
            raise InternalError(f"Packet sequence number wrong - got {header[3]} expected {conn._next_seq_id}")
        conn._next_seq_id = (conn._next_seq_id + 1) % 256
        data: bytes = await conn._read_bytes(header[0] | header[1] << 8 | header[2] << 16)
    except asyncio.CancelledError:  # half a result read: the connection cannot be used again (as aiomysql)
        conn._close_on_cancel()
        raise
    if data[:1] == b"\xff":  # an error packet: the protocol sends none here, but one is never taken as a column
        MysqlPacket(data, conn._encoding).raise_for_error()
    return data


def _parse(raws: tuple[bytes, ...], conn: Any) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]:
    """Fields, (encoding, converter) pairs and description, exactly as aiomysql's `_get_descriptions`."""
    fields, converters, description = [], [], []
    for raw in raws:
        field = FieldDescriptorPacket(raw, conn._encoding)
        fields.append(field)
        description.append(field.description())
        field_type = field.type_code
        encoding: str | None = None
        if conn.use_unicode:
            if field_type == FIELD_TYPE.JSON:
                encoding = conn.encoding
            elif field_type in TEXT_TYPES:
                encoding = None if field.charsetnr == 63 else conn.encoding  # 63: binary
            else:
                encoding = "ascii"
        converter = conn.decoders.get(field_type)
        converters.append((encoding, None if converter is through else converter))
    return tuple(fields), tuple(converters), tuple(description)
