"""Shared fixtures: real git repositories built in temp dirs."""

from __future__ import annotations
