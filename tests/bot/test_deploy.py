"""deploy/: systemd units verified by systemd-analyze, the nginx site's limits, a complete .env.example."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
VENV = Path(sys.executable).parent.parent
UNITS = ("schedbot.service", "schedbot-worker.service")


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_units_verify_cleanly(tmp_path: Path) -> None:
    for name in UNITS:  # point ExecStart at this venv: verify checks that the binary exists
        text = (DEPLOY / name).read_text(encoding="utf-8").replace("/opt/schedbot/.venv", str(VENV))
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = subprocess.run(["systemd-analyze", "verify", *(str(tmp_path / n) for n in UNITS)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "", result.stderr  # unknown keys and bad values are only warnings


def test_units_run_the_real_commands() -> None:
    web = (DEPLOY / "schedbot.service").read_text(encoding="utf-8")
    worker = (DEPLOY / "schedbot-worker.service").read_text(encoding="utf-8")
    assert "ExecStartPre=/opt/schedbot/.venv/bin/schedbot migrate" in web
    assert re.search(r"^ExecStart=\S+/schedbot serve .*--workers 2 --proxy-headers", web, re.M)
    assert "ExecStart=/opt/schedbot/.venv/bin/schedbot worker" in worker
    for unit in (web, worker):
        assert "EnvironmentFile=/etc/schedbot/schedbot.env" in unit and "Environment=DATABASE_AUTO_MIGRATE=0" in unit
        assert "KillSignal=SIGTERM" in unit and "User=schedbot" in unit


def test_nginx_site_limits_body_and_keeps_wechat_under_five_seconds() -> None:
    site = (DEPLOY / "nginx-schedbot.conf").read_text(encoding="utf-8")
    assert "client_max_body_size 64k;" in site and "listen 443 ssl" in site
    wechat = re.search(r"location = /wechat \{(.*?)\}", site, re.S)
    assert wechat is not None
    found = re.findall(r"proxy_(connect|send|read)_timeout (\d+)(ms|s);", wechat.group(1))
    timeouts = {kind: int(value) / (1000 if unit == "ms" else 1) for kind, value, unit in found}
    assert set(timeouts) == {"connect", "send", "read"} and max(timeouts.values()) < 5
    for prefix in ("/p/", "/ics/"):
        block = re.search(rf"location {re.escape(prefix)} \{{(.*?)\}}", site, re.S)
        assert block is not None and "proxy_pass http://schedbot;" in block.group(1)
        assert "access_log off;" in block.group(1)  # the path carries the page's secret token


def env_example() -> dict[str, str]:
    pairs = re.findall(r"^([A-Z0-9_]+)=(.*)$", (DEPLOY / ".env.example").read_text(encoding="utf-8"), re.M)
    return dict(pairs)


def test_env_example_documents_every_setting_and_nothing_else() -> None:
    documented = env_example()
    missing = set(Settings.model_fields) - set(documented)
    assert not missing, f"document {sorted(missing)} in deploy/.env.example"
    assert set(documented) <= set(Settings.model_fields)


def test_env_example_is_a_valid_shell_environment_for_schedbot(tmp_path: Path) -> None:
    """Sourced like the units' EnvironmentFile, it validates: the command line starts and works offline."""
    script = f'set -a; . "{DEPLOY / ".env.example"}"; exec "{VENV / "bin" / "schedbot"}" wechat menu --dry-run'
    result = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["button"][0]["key"] == "TODAY"


def self_signed(directory: Path) -> tuple[Path, Path]:
    from datetime import UTC, datetime, timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bot.example.com")])
    start = datetime(2026, 1, 1, tzinfo=UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(start).not_valid_after(start + timedelta(days=3650))
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "fullchain.pem", directory / "privkey.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx not installed")
def test_nginx_accepts_the_site(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    site = (DEPLOY / "nginx-schedbot.conf").read_text(encoding="utf-8")
    site = site.replace("/etc/letsencrypt/live/bot.example.com/fullchain.pem", str(cert))
    site = site.replace("/etc/letsencrypt/live/bot.example.com/privkey.pem", str(key))
    (tmp_path / "site.conf").write_text(site, encoding="utf-8")
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log {tmp_path}/access.log;\n  include {tmp_path}/site.conf;\n}}\n", encoding="utf-8")
    result = subprocess.run(["nginx", "-t", "-q", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "warn" not in result.stderr, result.stderr


def location(site: str, prefix: str) -> str:
    """A location block of the HTTPS server (the port-80 one only redirects)."""
    block = re.search(rf"location {re.escape(prefix)} \{{(.*?)\}}", site.split("listen 443", 1)[1], re.S)
    assert block is not None, prefix
    return block.group(1)


def test_nginx_site_rate_limits_per_address_but_not_wechat() -> None:
    """Issue 28 item 5: a flood of pages, feeds or API calls from one address stops at nginx (429)."""
    site = (DEPLOY / "nginx-schedbot.conf").read_text(encoding="utf-8")
    zone = re.search(r"^limit_req_zone \$binary_remote_addr zone=(\w+):\d+m rate=(\d+)r/s;", site, re.M)
    assert zone is not None and int(zone.group(2)) <= 20
    assert "limit_req_status 429;" in site
    for prefix in ("/p/", "/ics/", "/"):
        assert f"limit_req zone={zone.group(1)} " in location(site, prefix), prefix
    assert "limit_req" not in location(site, "= /wechat")  # Tencent's few addresses speak for every user


def test_nginx_site_serves_metrics_to_an_allow_list_only() -> None:
    """Issue 27 item 10: /metrics is not public (each scrape reads the outbox)."""
    site = (DEPLOY / "nginx-schedbot.conf").read_text(encoding="utf-8")
    rules = re.findall(r"^\s*(allow|deny) (\S+);", location(site, "= /metrics"), re.M)
    assert rules[-1] == ("deny", "all") and ("allow", "127.0.0.1") in rules
    assert all(kind == "allow" for kind, _ in rules[:-1])


HARDENING = ("UMask=0077", "CapabilityBoundingSet=", "ProtectKernelModules=yes", "ProtectKernelLogs=yes",
             "ProtectClock=yes", "ProtectHostname=yes", "RestrictNamespaces=yes", "RestrictSUIDSGID=yes",
             "RestrictRealtime=yes", "LockPersonality=yes", "SystemCallFilter=@system-service",
             "SystemCallArchitectures=native")


@pytest.mark.parametrize("name", UNITS)
def test_units_are_hardened_and_create_private_files(name: str) -> None:
    """Issue 28 items 7 and 8."""
    lines = set((DEPLOY / name).read_text(encoding="utf-8").splitlines())
    assert [key for key in HARDENING if key not in lines] == []


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
@pytest.mark.parametrize("name", UNITS)
def test_systemd_analyze_security_rates_the_units_ok(name: str) -> None:
    """7.1 MEDIUM for both units before issue 28; 1.5 OK after."""
    result = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(DEPLOY / name)],
                            capture_output=True, text=True, timeout=60)
    level = re.search(r"Overall exposure level for \S+: (\d+\.\d+) (\w+)", result.stdout)
    assert level is not None, result.stdout + result.stderr
    assert float(level.group(1)) <= 2.0 and level.group(2) == "OK", level.group(0)


def test_nginx_site_sends_hsts_on_https() -> None:
    site = (DEPLOY / "nginx-schedbot.conf").read_text(encoding="utf-8").split("listen 443", 1)[1]
    hsts = re.search(r'^    add_header Strict-Transport-Security "max-age=(\d+)[^"]*" always;', site, re.M)
    assert hsts is not None and int(hsts.group(1)) >= 180 * 86_400
    assert "add_header" not in "".join(re.findall(r"location [^{]*\{(.*?)\}", site, re.S))  # would drop it


def test_env_file_mode_and_backups_are_private_in_the_docs() -> None:
    example = (DEPLOY / ".env.example").read_text(encoding="utf-8")
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    installed = re.search(r"install -m (\d+) -g schedbot \S+/\.env\.example /etc/schedbot/schedbot\.env", readme)
    assert installed is not None and f"mode 0{installed.group(1)}, owner root, group" in example
    assert int(installed.group(1), 8) & 0o007 == 0  # nobody but root and the schedbot group
    dumps = [line for line in readme.splitlines() if "mariadb-dump" in line]
    assert dumps and all(line.startswith("(umask 077; ") for line in dumps)
