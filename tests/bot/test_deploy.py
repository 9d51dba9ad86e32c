"""deploy/: systemd units verified by systemd-analyze, the nginx site's limits, a complete .env.example."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from bot.settings import Settings
from tests.bot.test_cli import free_port

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


def nginx_config(directory: Path, site: str) -> Path:
    """An nginx.conf in `directory` that includes `site` (its certificate paths pointed at a self-signed one)."""
    cert, key = self_signed(directory)
    site = site.replace("/etc/letsencrypt/live/bot.example.com/fullchain.pem", str(cert))
    site = site.replace("/etc/letsencrypt/live/bot.example.com/privkey.pem", str(key))
    (directory / "site.conf").write_text(site, encoding="utf-8")
    (directory / "nginx.conf").write_text(
        f"pid {directory}/nginx.pid;\nerror_log {directory}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log {directory}/access.log;\n  include {directory}/site.conf;\n}}\n", encoding="utf-8")
    return directory / "nginx.conf"


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx not installed")
def test_nginx_accepts_the_site(tmp_path: Path) -> None:
    config = nginx_config(tmp_path, (DEPLOY / "nginx-schedbot.conf").read_text(encoding="utf-8"))
    result = subprocess.run(["nginx", "-t", "-q", "-p", str(tmp_path), "-c", str(config)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "warn" not in result.stderr, result.stderr


def exchange(port: int, host: str, *, sni: str | None = None) -> bytes:
    """The raw answer to `GET / HTTP/1.1` with this Host header (over TLS with this SNI when given); b"" when
    nginx closes the connection without answering."""
    with contextlib.ExitStack() as stack:
        conn = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
        if sni is not None:
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            conn = stack.enter_context(context.wrap_socket(conn, server_hostname=sni))
        conn.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
        return answer


@pytest.fixture
def running_site(tmp_path: Path) -> Iterator[tuple[int, int]]:
    """The site served by a real nginx on two free loopback ports (HTTP, HTTPS), upstream a closed port."""
    if shutil.which("nginx") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nginx is needed for the site's behaviour test (apt-get install nginx-light)")
        pytest.skip("nginx not installed")
    http_port, https_port, upstream = free_port(), free_port(), free_port()
    site = (DEPLOY / "nginx-schedbot.conf").read_text(encoding="utf-8")
    site = "\n".join(line for line in site.splitlines() if "listen [::]" not in line)  # no IPv6 needed here
    site = (site.replace("listen 80", f"listen 127.0.0.1:{http_port}")
            .replace("listen 443", f"listen 127.0.0.1:{https_port}")
            .replace("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream};"))
    config = nginx_config(tmp_path, site)
    nginx = subprocess.Popen(["nginx", "-p", str(tmp_path), "-c", str(config), "-g", "daemon off;"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):  # until nginx listens, or exits
            try:
                socket.create_connection(("127.0.0.1", https_port), timeout=1).close()
                break
            except OSError:
                try:
                    nginx.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    continue
                pytest.fail(f"nginx did not start: {(tmp_path / 'error.log').read_text(encoding='utf-8')}")
        yield http_port, https_port
    finally:
        nginx.terminate()
        nginx.wait(timeout=30)


def test_nginx_answers_only_its_own_host_and_never_names_its_version(running_site: tuple[int, int]) -> None:
    http_port, https_port = running_site
    redirect = exchange(http_port, "bot.example.com")
    assert redirect.startswith(b"HTTP/1.1 301") and b"\r\nLocation: https://bot.example.com/\r\n" in redirect
    assert b"\r\nServer: nginx\r\n" in redirect and b"nginx/" not in redirect  # no version, header or page
    upstream_down = exchange(https_port, "bot.example.com", sni="bot.example.com")
    assert upstream_down.startswith(b"HTTP/1.1 502") and b"nginx/" not in upstream_down
    assert exchange(http_port, "attacker.example") == b""  # closed unanswered: no redirect to any Host
    assert exchange(https_port, "attacker.example", sni="bot.example.com") == b""
    with pytest.raises(ssl.SSLError):  # an unknown name is refused before any certificate is shown
        exchange(https_port, "attacker.example", sni="attacker.example")
    with pytest.raises(ssl.SSLError):
        exchange(https_port, "127.0.0.1", sni="127.0.0.1")


def location(site: str, prefix: str) -> str:
    """A location block of the HTTPS site (the last server; the others refuse or redirect)."""
    block = re.search(rf"location {re.escape(prefix)} \{{(.*?)\}}", site.rsplit("server {", 1)[1], re.S)
    assert block is not None, prefix
    return block.group(1)


def test_nginx_site_rate_limits_per_address_but_not_wechat() -> None:
    """Form floods: a flood of pages, feeds or API calls from one address stops at nginx (429)."""
    site = (DEPLOY / "nginx-schedbot.conf").read_text(encoding="utf-8")
    zone = re.search(r"^limit_req_zone \$binary_remote_addr zone=(\w+):\d+m rate=(\d+)r/s;", site, re.M)
    assert zone is not None and int(zone.group(2)) <= 20
    assert "limit_req_status 429;" in site
    for prefix in ("/p/", "/ics/", "/"):
        assert f"limit_req zone={zone.group(1)} " in location(site, prefix), prefix
    assert "limit_req" not in location(site, "= /wechat")  # Tencent's few addresses speak for every user


def test_nginx_site_serves_metrics_to_an_allow_list_only() -> None:
    """/metrics is not public (each scrape reads the outbox)."""
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
    """File modes and hardened systemd units (deploy/README.md)."""
    lines = set((DEPLOY / name).read_text(encoding="utf-8").splitlines())
    assert [key for key in HARDENING if key not in lines] == []


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
@pytest.mark.parametrize("name", UNITS)
def test_systemd_analyze_security_rates_the_units_ok(name: str) -> None:
    """7.1 MEDIUM for both units before the security review; 1.5 OK after."""
    result = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(DEPLOY / name)],
                            capture_output=True, text=True, timeout=60)
    level = re.search(r"Overall exposure level for \S+: (\d+\.\d+) (\w+)", result.stdout)
    assert level is not None, result.stdout + result.stderr
    assert float(level.group(1)) <= 2.0 and level.group(2) == "OK", level.group(0)


def test_nginx_site_sends_hsts_on_https() -> None:
    site = (DEPLOY / "nginx-schedbot.conf").read_text(encoding="utf-8").rsplit("server {", 1)[1]
    assert "listen 443 ssl" in site
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


def test_the_build_backend_is_a_setuptools_with_the_path_traversal_fix() -> None:
    """setuptools before 78.1.1 lets a package index write outside its download directory (CVE-2025-47273)."""
    build = tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]
    [setuptools] = [Requirement(r) for r in build["requires"] if Requirement(r).name == "setuptools"]
    assert not setuptools.specifier.contains("78.1.0") and setuptools.specifier.contains("78.1.1")
