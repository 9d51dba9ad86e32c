"""MariaDB results read with their column definitions looked up (schedule/mysql_result.py): the same rows,
types and descriptions as aiomysql's own reading, several results per query, errors as before."""

from __future__ import annotations

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
