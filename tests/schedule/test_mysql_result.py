"""MariaDB results read with their column definitions looked up (schedule/mysql_result.py): the same rows,
types and descriptions as aiomysql's own reading, several results per query, errors as before."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pymysql.err import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

from schedule import mysql_result
from schedule.fastsql import transaction

TABLE = """CREATE TABLE mr (id BIGINT PRIMARY KEY, title VARCHAR(40), body TEXT, blob_ LONGBLOB, bin VARBINARY(8),
           payload JSON, price DECIMAL(8, 2), ratio DOUBLE, flag TINYINT(1), at DATETIME(3), day DATE)
           CHARACTER SET utf8mb4"""
ROW = ("(1, '明天开会 🗓', 'Ärger\\n', x'00ff', x'0102', '{\"提醒\": [1, null]}', 12.50, 0.25, 1, "
       "'2026-12-01 10:00:00.123', '2026-12-02')")
EMPTY = "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"


@pytest.fixture
async def driver(engine: AsyncEngine) -> Any:
    if engine.dialect.name != "mysql":
        pytest.skip("the MariaDB driver's result reading")
    async with transaction(engine) as tx:
        await tx.driver.query(TABLE)
        await tx.driver.query(f"INSERT INTO mr VALUES {ROW}, {EMPTY}")
        yield tx.driver


async def _theirs(driver: Any, sql: str) -> tuple[Any, Any]:
    await driver.query(sql)
    return driver._result.rows, driver._result.description


async def _ours(driver: Any, sql: str) -> tuple[Any, Any]:
    await mysql_result.query(driver, sql)
    return driver._result.rows, driver._result.description


async def test_rows_and_descriptions_are_aiomysqls_for_every_type(driver: Any) -> None:
    sql = "SELECT * FROM mr ORDER BY id"
    expected = await _theirs(driver, sql)
    assert expected[0][0][1] == "明天开会 🗓" and expected[0][1][1:] == (None,) * 10  # the data is what it seems
    assert await _ours(driver, sql) == expected
    assert await _ours(driver, sql) == expected  # the second time from the looked-up definitions


async def test_a_seen_column_set_is_not_parsed_again(driver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    await _ours(driver, "SELECT id, title FROM mr WHERE id = 1")
    parsed: list[bytes] = []
    original = mysql_result._parse
    monkeypatch.setattr(mysql_result, "_parse", lambda raws, conn: parsed.extend(raws) or original(raws, conn))
    assert (await _ours(driver, "SELECT id, title FROM mr WHERE id = 2"))[0] == ((2, None),)
    assert parsed == []
    assert (await _ours(driver, "SELECT title, id FROM mr WHERE id = 1"))[0] == (("明天开会 🗓", 1),)
    assert len(parsed) == 2  # another column set: parsed, not taken for the first one


async def test_same_names_other_types_keep_their_own_converters(driver: Any) -> None:
    assert (await _ours(driver, "SELECT 7 AS v"))[0] == ((7,),)
    assert (await _ours(driver, "SELECT '7' AS v"))[0] == (("7",),)
    assert (await _ours(driver, "SELECT CAST('2026-12-01' AS DATE) AS v"))[0] == (
        (await _theirs(driver, "SELECT CAST('2026-12-01' AS DATE) AS v"))[0])


async def test_several_results_and_ok_packets(driver: Any) -> None:
    await mysql_result.query(driver, "UPDATE mr SET title = 'x' WHERE id = 2; SELECT title FROM mr WHERE id = 2; "
                                     "SELECT COUNT(*) AS n FROM mr")
    assert driver._result.affected_rows == 1 and driver._result.has_next
    await mysql_result.next_result(driver)
    assert driver._result.rows == (("x",),)
    await mysql_result.next_result(driver)
    assert driver._result.rows == ((2,),) and not driver._result.has_next


async def test_an_error_is_the_drivers_and_the_connection_goes_on(driver: Any) -> None:
    with pytest.raises(OperationalError, match="Unknown column"):  # 1054, as aiomysql raises it
        await mysql_result.query(driver, "SELECT nope FROM mr")
    assert (await _ours(driver, "SELECT id FROM mr ORDER BY id"))[0] == ((1,), (2,))


# --- query_all: the whole reply read in one pass --------------------------------------------------

async def _theirs_all(driver: Any, sql: str) -> list[tuple[list[Any], int, int | None]]:
    """Each statement's (rows, affected rows, insert id) as aiomysql's own reading gives them."""
    await driver.query(sql)
    out = []
    while True:
        result = driver._result
        out.append((list(result.rows) if result.description else [], result.affected_rows, result.insert_id))
        if not result.has_next:
            return out
        await driver.next_result()


async def test_query_all_reads_what_aiomysql_reads(driver: Any) -> None:
    reads = "SELECT * FROM mr ORDER BY id; SELECT title FROM mr WHERE id = 9; SELECT COUNT(*) AS n, NULL AS z FROM mr"
    expected = await _theirs_all(driver, reads)
    assert [len(rows) for rows, _, _ in expected] == [2, 0, 1]
    assert await mysql_result.query_all(driver, reads) == expected
    await driver.query("CREATE TABLE mr_auto (id BIGINT AUTO_INCREMENT PRIMARY KEY, t VARCHAR(10))")
    writes = ("UPDATE mr SET title = 'y' WHERE id = 2; INSERT INTO mr_auto (t) VALUES ('a'), ('b'); "
              "SELECT title FROM mr WHERE id = 2; INSERT INTO mr_auto (t) VALUES ('c')")
    assert await mysql_result.query_all(driver, writes) == [([], 1, 0), ([], 2, 1), ([("y",)], 1, None), ([], 1, 3)]
    assert driver._affected_rows == 1 and driver._result is None
    assert driver.get_transaction_status()  # the server status of the last OK packet: inside the transaction


async def test_a_reply_arriving_in_many_pieces(driver: Any) -> None:
    sql = ("SELECT seq, REPEAT('明', seq % 50) AS t, IF(seq % 7 = 0, NULL, seq / 3) AS q FROM seq_1_to_6000;"
           " SELECT 1 AS one")
    expected = await _theirs_all(driver, sql)
    assert len(expected[0][0]) == 6000
    assert await mysql_result.query_all(driver, sql) == expected


async def test_a_reply_left_to_aiomysql_gives_the_same_outcomes(driver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sql = "SELECT * FROM mr ORDER BY id; UPDATE mr SET day = day + INTERVAL 1 DAY WHERE id = 1; SELECT COUNT(*) FROM mr"
    ours = await mysql_result.query_all(driver, sql)
    assert len(ours[0][0]) == 2 and ours[1] == ([], 1, 0) and ours[2] == ([(2,)], 1, None)

    async def huge(_driver: Any) -> None:
        return None  # as for a 16 MB packet: nothing taken off the buffer

    monkeypatch.setattr(mysql_result, "_whole_reply", huge)
    theirs = await mysql_result.query_all(driver, sql)
    assert theirs[1:] == ours[1:] and theirs[0][0][1] == ours[0][0][1]
    assert theirs[0][0][0][:10] == ours[0][0][0][:10] and theirs[0][0][0][10] == ours[0][0][0][10] + timedelta(days=1)


async def test_an_error_ends_the_reply_and_carries_what_ran_before(driver: Any) -> None:
    with pytest.raises(OperationalError, match="Unknown column") as caught:
        await mysql_result.query_all(driver, "UPDATE mr SET title = 'q' WHERE id = 2; SELECT nope FROM mr; SELECT 1")
    assert caught.value.schedbot_done == [([], 1, 0)]  # type: ignore[attr-defined]
    assert await mysql_result.query_all(driver, "SELECT title FROM mr WHERE id = 2") == [([("q",)], 1, None)]


class _Conn:
    """An aiomysql connection's reading side only: a real StreamReader fed with crafted packets."""

    def __init__(self, data: bytes = b"", eof: bool = False) -> None:
        import asyncio

        self._reader = asyncio.StreamReader()
        self._reader.feed_data(data)
        if eof:
            self._reader.feed_eof()
        self._next_seq_id = 1
        self.closed = ""

    def close(self) -> None:
        self.closed = self.closed or "closed"

    def _close_on_cancel(self) -> None:
        self.closed = "cancelled"


def _packet(seq: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq]) + payload


OK = b"\x00\x01\x00\x02\x00\x00\x00"  # 1 affected row, insert id 0, status IN_TRANS, no warnings


async def test_the_reply_is_taken_only_once_whole() -> None:
    conn = _Conn(_packet(1, OK)[:5])
    import asyncio

    waiting = asyncio.ensure_future(mysql_result._whole_reply(conn))
    await asyncio.sleep(0)
    assert not waiting.done()
    conn._reader.feed_data(_packet(1, OK)[5:] + b"next")
    data, packets = await waiting  # type: ignore[misc]
    assert data[slice(*packets[0])] == OK and bytes(conn._reader._buffer) == b"next" and conn._next_seq_id == 2


async def test_a_wrong_sequence_or_a_lost_connection_closes_it() -> None:
    from pymysql.err import InternalError

    wrong = _Conn(_packet(5, OK))
    with pytest.raises(InternalError, match="got 5 expected 1"):
        await mysql_result._whole_reply(wrong)
    lost = _Conn(_packet(1, OK)[:6], eof=True)
    with pytest.raises(OperationalError, match="Lost connection"):
        await mysql_result._whole_reply(lost)
    assert (wrong.closed, lost.closed) == ("closed", "closed")


async def test_huge_packets_are_left_to_aiomysql_untouched() -> None:
    data = b"\xff\xff\xff\x01" + b"x" * 10
    conn = _Conn(data)
    assert await mysql_result._whole_reply(conn) is None
    assert bytes(conn._reader._buffer) == data and conn._next_seq_id == 1


async def test_cancelled_half_way_the_connection_is_given_up() -> None:
    import asyncio

    conn = _Conn(_packet(1, b"\x01"))  # a result set of one column, its definition not yet here
    waiting = asyncio.ensure_future(mysql_result._whole_reply(conn))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert conn.closed == "cancelled"
