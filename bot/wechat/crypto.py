"""Safe-mode (AES-256-CBC, WXBizMsgCrypt) decrypt/encrypt over wechatpy's PrpCrypto.

The msg_signature is checked before any decryption; a previous EncodingAESKey is tried
when the current one fails (key rotation), and the reply is then encrypted with that same key,
the one WeChat still holds; randomness is injectable for the official vectors.
"""

from __future__ import annotations

import base64
import secrets
import string
from collections.abc import Callable

from wechatpy.crypto import PrpCrypto
from wechatpy.exceptions import InvalidAppIdException

from bot.wechat import signature

_ALPHABET = string.ascii_letters + string.digits


class CryptoError(Exception):
    """A safe-mode message that cannot be trusted or read."""


class InvalidSignature(CryptoError):
    pass


class DecryptError(CryptoError):
    pass


def _random16() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(16))


class _Prp(PrpCrypto):  # type: ignore[misc]
    def __init__(self, key: bytes, random: Callable[[], str]) -> None:
        super().__init__(key)
        self._random = random

    def get_random_string(self) -> str:
        return self._random()


def _aes_key(encoding_aes_key: str) -> bytes:
    try:
        key = base64.b64decode(encoding_aes_key + "=", validate=True)
    except ValueError as exc:
        raise ValueError("EncodingAESKey is not base64") from exc
    if len(key) != 32:
        raise ValueError("EncodingAESKey must decode to 32 bytes")
    return key


class MessageCrypto:
    def __init__(self, token: str, encoding_aes_key: str, app_id: str, *, previous_key: str = "",
                 random: Callable[[], str] = _random16) -> None:
        self.token = token
        self.app_id = app_id
        self._keys = [_aes_key(encoding_aes_key)] + ([_aes_key(previous_key)] if previous_key else [])
        self._random = random

    def decrypt(self, encrypt: str, msg_signature: str | None, timestamp: str, nonce: str) -> str:
        """Verify msg_signature over Encrypt, then decrypt and check the appid; returns the plaintext."""
        return self.decrypt_keyed(encrypt, msg_signature, timestamp, nonce)[0]

    def decrypt_keyed(self, encrypt: str, msg_signature: str | None, timestamp: str, nonce: str) -> tuple[str, int]:
        """`decrypt`, plus which key opened it (0 current, 1 previous) so the reply can use the same one."""
        if not signature.check_msg_signature(self.token, msg_signature, timestamp, nonce, encrypt):
            raise InvalidSignature("msg_signature mismatch")
        last: Exception | None = None
        for index, key in enumerate(self._keys):
            try:
                return str(_Prp(key, self._random).decrypt(encrypt, self.app_id)), index
            except InvalidAppIdException as exc:
                last = exc
            except Exception as exc:  # bad padding, length or UTF-8: a wrong key or a corrupt body
                last = exc
        raise DecryptError(f"cannot decrypt with the configured keys ({type(last).__name__})")

    def encrypt(self, plaintext: str, *, key_index: int = 0) -> str:
        """Base64 ciphertext of random(16) + len + msg + appid with the current (or the given) key."""
        raw: bytes = _Prp(self._keys[key_index], self._random).encrypt(plaintext, self.app_id)
        return raw.decode("ascii")

    def encrypt_reply(self, plaintext: str, *, nonce: str, timestamp: str, key_index: int = 0) -> str:
        """The encrypted passive reply XML (same bytes as wechatpy's _encrypt_message)."""
        encrypt = self.encrypt(plaintext, key_index=key_index)
        sig = signature.compute(self.token, timestamp, nonce, encrypt)
        return (
            "<xml>\n"
            f"<Encrypt><![CDATA[{encrypt}]]></Encrypt>\n"
            f"<MsgSignature><![CDATA[{sig}]]></MsgSignature>\n"
            f"<TimeStamp>{timestamp}</TimeStamp>\n"
            f"<Nonce><![CDATA[{nonce}]]></Nonce>\n"
            "</xml>"
        )
