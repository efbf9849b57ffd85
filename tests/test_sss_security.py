"""Hostile SSS documents: entity expansion, external entities, external DTDs.

Every one is refused with a clear error before anything is expanded or fetched; a
socket guard proves no network access is attempted."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from schedlab.errors import FormatError
from schedlab.formats.sss.reader import read

DATA = Path(__file__).parent / "data" / "sss"


@pytest.fixture()
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the SSS reader tried to open a network connection")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        (
            "security-billion-laughs.xml",
            3,
            "entity declaration 'lol' refused: entity expansion is disabled",
        ),
        (
            "security-external-entity.xml",
            3,
            "external entity 'secret' (SYSTEM 'file:///etc/passwd') refused",
        ),
        (
            "security-parameter-entity.xml",
            3,
            "external parameter entity 'remote' (SYSTEM 'http://127.0.0.1:9/evil.dtd') refused",
        ),
        (
            "security-external-dtd.xml",
            2,
            "document type declarations (<!DOCTYPE ...>) are not allowed",
        ),
        ("security-undeclared-entity.xml", 4, "not well-formed XML: undefined entity"),
    ],
)
def test_hostile_documents_are_refused(no_network, name: str, line: int, message: str) -> None:
    with pytest.raises(FormatError) as caught:
        read(DATA / name)
    assert caught.value.line == line
    assert message in str(caught.value)
    assert "root" not in str(caught.value)


def test_billion_laughs_is_refused_quickly_and_without_expansion(no_network) -> None:
    import time
    import tracemalloc

    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(FormatError):
        read(DATA / "security-billion-laughs.xml")
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 2.0
    assert peak < 20 * 2**20  # 10**9 "lol"s would need gigabytes


def test_diagnostic_parser_is_guarded_too(no_network, tmp_path: Path) -> None:
    from schedlab.formats.sss.safexml import parse_with_lines

    with (
        open(DATA / "security-external-entity.xml", "rb") as stream,
        pytest.raises(FormatError, match="external entity 'secret'"),
    ):
        parse_with_lines(stream, "x")


def test_schema_is_compiled_without_network(no_network) -> None:
    from schedlab.formats.sss.schema import load_schema

    load_schema.cache_clear()
    assert load_schema().validity == "valid"
