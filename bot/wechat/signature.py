"""WeChat callback signatures (sha1 over the sorted parts), compared in constant time."""

from __future__ import annotations

import hmac

from wechatpy.utils import WeChatSigner


def compute(*parts: str) -> str:
    """sha1 hex of the sorted parts: (token, timestamp, nonce) or (token, timestamp, nonce, Encrypt)."""
    signer = WeChatSigner()
    signer.add_data(*parts)
    return str(signer.signature)


def matches(expected: str, given: str | None) -> bool:
    """Constant-time equality; WeChat sends lowercase hex, so uppercase is rejected like wechatpy does."""
    if not given:
        return False
    return hmac.compare_digest(expected.encode("ascii"), given.encode("utf-8", "replace"))


def check_url_signature(token: str, signature: str | None, timestamp: str, nonce: str) -> bool:
    return matches(compute(token, timestamp, nonce), signature)


def check_msg_signature(token: str, msg_signature: str | None, timestamp: str, nonce: str, encrypt: str) -> bool:
    return matches(compute(token, timestamp, nonce, encrypt), msg_signature)
