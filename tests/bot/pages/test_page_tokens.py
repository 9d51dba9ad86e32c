"""Signed tokens and CSRF values, without a database."""

from __future__ import annotations

import pytest

from bot.pages.tokens import Claims, LinkError, csrf_ok, csrf_token, derive, sign, verify

KEY = derive(b"secret", "page-token")
ALL = frozenset({"p", "s", "c"})


def test_round_trip_and_claims() -> None:
    token = sign(KEY, Claims("s", 42, 2_000_000_000_000, "abc_-"))
    assert verify(KEY, token, scopes=ALL, now_ms=1_000) == Claims("s", 42, 2_000_000_000_000, "abc_-")


@pytest.mark.parametrize("scope", ["p", "s", "c"])
def test_a_token_opens_only_its_scope(scope: str) -> None:
    token = sign(KEY, Claims(scope, 1, 2_000_000_000_000))
    with pytest.raises(LinkError) as info:
        verify(KEY, token, scopes=ALL - {scope}, now_ms=0)
    assert info.value.status == 404


def test_forgery_expiry_and_another_key() -> None:
    token = sign(KEY, Claims("p", 1, 5_000_000))
    body, mac = token.rsplit(".", 1)
    for forged in (f"p.2{body[3:]}.{mac}", body + ".", token + "x", "", "p.1.2.3", "p.1.2.3.4.5", "ä" * 10):
        with pytest.raises(LinkError) as info:
            verify(KEY, forged, scopes=ALL, now_ms=0)
        assert info.value.status == 404, forged
    with pytest.raises(LinkError) as info:
        verify(derive(b"other", "page-token"), token, scopes=ALL, now_ms=0)
    assert info.value.status == 404
    with pytest.raises(LinkError) as info:
        verify(KEY, token, scopes=ALL, now_ms=5_000_000)
    assert info.value.status == 410


def test_csrf_is_bound_to_the_page_and_ages_out() -> None:
    key = derive(b"secret", "csrf")
    value = csrf_token(key, "page-a", 1_000_000)
    assert csrf_ok(key, "page-a", value, now_ms=1_000_000 + 3_600_000, max_age_ms=86_400_000)
    assert not csrf_ok(key, "page-b", value, now_ms=1_000_000, max_age_ms=86_400_000)
    assert not csrf_ok(key, "page-a", value, now_ms=1_000_000 + 86_400_001, max_age_ms=86_400_000)
    assert not csrf_ok(derive(b"secret", "page-token"), "page-a", value, now_ms=1_000_000, max_age_ms=86_400_000)
    for bad in ("", ".", "zz.abc", "1." + "a" * 100, "你.好"):
        assert not csrf_ok(key, "page-a", bad, now_ms=1_000_000, max_age_ms=86_400_000)
