"""MariaDB result sets on the hot path: each distinct set of column definitions is parsed once.

In the text protocol the server sends one column-definition packet per column before the rows of every
result, and aiomysql parses each into a `FieldDescriptorPacket` (six length-coded strings and a struct),
its DB-API description and its converter, every time. A chat message reads a few results of 7–25 columns,
so that parsing was about a tenth of the webhook's CPU on MariaDB (py-spy). The packets of one statement
are the same bytes each time, so here they are read as raw bytes (no packet object each) and looked up:
a set seen before gives its parsed fields, converters and description at once.

`query_all` goes further: it waits until the whole reply to a (multi-statement) query sits in the
connection's stream buffer, walking packet headers as bytes arrive, then takes it in one piece and reads
every result from it in one synchronous pass. aiomysql reads each packet with two awaited `readexactly`
calls and a packet object, about 28 packets and 95 awaits per chat message; run cold, at a server's idle
gaps, that was most of the driver's quarter of the webhook's CPU. The results are what aiomysql gives
(rows as tuples through the same converters, affected rows, insert id, the server status of OK packets),
errors are its errors, a broken or cancelled read closes the connection as it does; a reply with a packet
of 16 MB or more, or a LOCAL INFILE request, is left to aiomysql's own reading.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiomysql.connection import MySQLResult
from pymysql.connections import TEXT_TYPES  # the set aiomysql decodes by it
from pymysql.constants import COMMAND, CR, FIELD_TYPE, SERVER_STATUS
from pymysql.converters import through
from pymysql.err import Error, InternalError, OperationalError
from pymysql.protocol import FieldDescriptorPacket, MysqlPacket

_KNOWN_MAX = 4096  # distinct column sets kept (a process runs a few dozen statements)
_known: dict[tuple[Any, ...], tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]] = {}


Outcome = tuple[list[Any], int, int | None]  # a statement's rows, affected rows and insert id
_MORE = SERVER_STATUS.SERVER_MORE_RESULTS_EXISTS
_WHOLE_MAX = 0xFFFFFF  # a payload of this length continues in the next packet: aiomysql reads those
_LOST = "Lost connection to MySQL server during query"


async def query_all(driver: Any, sql: str) -> list[Outcome]:
    """COM_QUERY and every statement's outcome, read in one pass (module docstring). An error raises the
    driver's exception carrying the outcomes before it as `schedbot_done`."""
    await driver._execute_command(COMMAND.COM_QUERY, sql.encode(driver.encoding, "surrogateescape"))
    done: list[Outcome] = []
    try:
        packets = await _whole_reply(driver)
        if packets is None:
            await _read_by_aiomysql(driver, done)
        else:
            _read(driver, packets, done)
    except Error as exc:
        exc.schedbot_done = done  # the statements before the failing one ran (pymysql's errors are untyped)
        raise
    return done


async def _read_by_aiomysql(driver: Any, done: list[Outcome]) -> None:
    await next_result(driver)
    while True:
        result = driver._result
        done.append((list(result.rows) if result.description else [], result.affected_rows, result.insert_id))
        if not result.has_next:
            return
        await next_result(driver)


def _lenenc(data: bytes | bytearray, at: int) -> tuple[int | None, int]:
    """A length-encoded integer at `at` (None for 0xFB, SQL NULL) and the offset after it."""
    first = data[at]
    if first < 0xFB:
        return first, at + 1
    if first == 0xFB:
        return None, at + 1
    if first == 0xFC:
        return data[at + 1] | data[at + 2] << 8, at + 3
    if first == 0xFD:
        return data[at + 1] | data[at + 2] << 8 | data[at + 3] << 16, at + 4
    return int.from_bytes(data[at + 1:at + 9], "little"), at + 9


def _ok_status(data: bytes | bytearray, at: int) -> int:
    """The server status of the OK packet whose payload starts at `at`."""
    at = _lenenc(data, _lenenc(data, at + 1)[1])[1]
    return data[at] | data[at + 1] << 8


async def _whole_reply(driver: Any) -> tuple[bytes, list[tuple[int, int]]] | None:
    """The reply's bytes, taken off the stream buffer once complete, and each packet's payload (start, end);
    None when aiomysql must read it (nothing taken then)."""
    reader = driver._reader
    buffer: bytearray = reader._buffer
    packets: list[tuple[int, int]] = []
    at, seq = 0, driver._next_seq_id
    state, columns = 0, 0  # 0 a statement's first packet, 1 its column definitions, 2 their EOF, 3 its rows
    while True:
        while at + 4 <= len(buffer):
            size = buffer[at] | buffer[at + 1] << 8 | buffer[at + 2] << 16
            if size >= _WHOLE_MAX:
                return None
            if at + 4 + size > len(buffer):
                break
            if buffer[at + 3] != seq:
                _wrong_sequence(driver, buffer[at + 3], seq)
            seq = (seq + 1) % 256
            start, at = at + 4, at + 4 + size
            packets.append((start, at))
            kind = buffer[start] if size else -1
            ended = False
            if state == 0:
                if kind == 0x00 and size >= 7:
                    ended = not _ok_status(buffer, start) & _MORE
                elif kind == 0xFF:
                    ended = True
                elif kind == 0xFB:
                    return None  # LOCAL INFILE: aiomysql's business (never asked for here)
                else:
                    count = _lenenc(buffer, start)[0]
                    columns, state = count or 0, 1 if count else 2
            elif state == 1:
                columns -= 1
                state = 1 if columns else 2
            elif state == 2:
                state = 3
                ended = kind == 0xFF
            elif kind == 0xFE and size < 9:
                ended = not (buffer[start + 3] | buffer[start + 4] << 8) & _MORE
                state = 0
            else:
                ended = kind == 0xFF
            if ended:
                data = bytes(buffer[:at])
                del buffer[:at]
                reader._maybe_resume_transport()
                driver._next_seq_id = seq
                return data, packets
        await _more(driver, reader)


def _wrong_sequence(driver: Any, got: int, expected: int) -> None:
    driver.close()
    if got == 0:  # MySQL 8 sends an error with sequence 0 when shutting down
        raise OperationalError(CR.CR_SERVER_LOST, _LOST)
    raise InternalError(f"Packet sequence number wrong - got {got} expected {expected}")


async def _more(driver: Any, reader: Any) -> None:
    """Wait for more of the reply; a closed or failed stream is a lost connection, as aiomysql says."""
    failure = reader.exception()
    if failure is not None or reader._eof:  # ended, whatever part of a packet is left in the buffer
        driver.close()
        detail = f" ({failure})" if failure is not None else ""
        raise OperationalError(CR.CR_SERVER_LOST, _LOST + detail) from failure
    try:
        await reader._wait_for_data("readexactly")  # the wait readexactly does, with no copy made
    except asyncio.CancelledError:  # half a reply read: the connection cannot be used again
        driver._close_on_cancel()
        raise


def _read(driver: Any, reply: tuple[bytes, list[tuple[int, int]]], done: list[Outcome]) -> None:
    """Every statement's outcome from a whole reply (`_whole_reply`), as aiomysql's `MySQLResult` reads it."""
    data, packets = reply
    i, count = 0, len(packets)
    while i < count:
        start, end = packets[i]
        kind = data[start]
        if kind == 0xFF:
            _raise(driver, data[start:end])
        if kind == 0x00 and end - start >= 7:
            affected, at = _lenenc(data, start + 1)
            insert_id, at = _lenenc(data, at)
            driver.server_status = data[at] | data[at + 1] << 8
            driver._affected_rows = affected
            done.append(([], affected or 0, insert_id))
            i += 1
            continue
        fields = _lenenc(data, start)[0] or 0
        raws = tuple([data[s:e] for s, e in packets[i + 1:i + 1 + fields]])
        converters = _columns(driver, raws)[1]
        i += 1 + fields + 1  # the column definitions and their EOF (an error in its place ends the reply)
        eof_start, eof_end = packets[i - 1]
        if data[eof_start] == 0xFF:
            _raise(driver, data[eof_start:eof_end])
        rows = []
        while True:
            start, end = packets[i]
            i += 1
            if data[start] == 0xFE and end - start < 9:
                break
            if data[start] == 0xFF:
                _raise(driver, data[start:end])
            rows.append(_row(data, start, end, converters))
        driver._affected_rows = len(rows)
        done.append((rows, len(rows), None))
    driver._result = None


def _raise(driver: Any, payload: bytes) -> None:
    """The error an ERR packet carries, as pymysql's exception class (the reply ends with it)."""
    driver._result = None
    MysqlPacket(payload, driver._encoding).raise_for_error()


def _columns(driver: Any, raws: tuple[bytes, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]:
    """Fields, converters and description of these column definitions: parsed once per distinct set."""
    key = (raws, driver.use_unicode, driver.encoding, id(driver.decoders))
    parsed = _known.get(key)
    if parsed is None:
        parsed = _parse(raws, driver)
        if len(_known) < _KNOWN_MAX:
            _known[key] = parsed
    return parsed


def _row(data: bytes, at: int, end: int, converters: tuple[Any, ...]) -> tuple[Any, ...]:
    """One text-protocol row, as aiomysql's `_read_row_from_packet` (a short row stops at its end)."""
    row: list[Any] = []
    for encoding, converter in converters:
        if at >= end:
            break
        size, at = _lenenc(data, at)
        if size is None:
            row.append(None)
            continue
        value: Any = data[at:at + size]
        at += size
        if encoding is not None:
            value = value.decode(encoding)
        if converter is not None:
            value = converter(value)
        row.append(value)
    return tuple(row)


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
        fields, converters, self.description = _columns(conn, raws)
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
