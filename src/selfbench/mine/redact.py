"""Secrets taken out of text before it leaves this machine in a candidate. Pure.

Each pattern replaces what it finds with `[REDACTED:<name>]`; a password inside a URL keeps the
URL and its user (`https://user:[REDACTED:url-password]@host`). Patterns run in table order, the
most specific first, so a GitHub token is named as one and not as a generic `token=` value.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["REDACTIONS", "Redaction", "redact"]


class Redaction(NamedTuple):
    """One kind of secret: its name, what finds it, and the replacement."""

    name: str
    pattern: re.Pattern[str]
    replacement: str


def _rule(name: str, pattern: str, replacement: str | None = None) -> Redaction:
    return Redaction(name, re.compile(pattern), replacement or f"[REDACTED:{name}]")


REDACTIONS: tuple[Redaction, ...] = (
    _rule(
        "private-key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)",
    ),
    _rule("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{16,}"),
    _rule("openai-key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}"),
    _rule("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    _rule("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    _rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    _rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    _rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _rule("bearer-token", r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=-]{16,}"),
    _rule(
        "url-password",
        r"(?<=://)([^\s:/@]+):[^\s@/]+@",
        r"\1:[REDACTED:url-password]@",
    ),
    _rule(
        "assigned-secret",
        r"(?i)\b((?:api[_-]?key|access[_-]?key|secret(?:[_-]?key)?|token|password|passwd|pwd)"
        r"\s*[:=]\s*)(['\"]?)(?!\[REDACTED)[^\s'\"]{6,}\2",
        r"\1\2[REDACTED:assigned-secret]\2",
    ),
)


def redact(text: str) -> str:
    """The text with every secret of `REDACTIONS` replaced."""
    for rule in REDACTIONS:
        text = rule.pattern.sub(rule.replacement, text)
    return text
