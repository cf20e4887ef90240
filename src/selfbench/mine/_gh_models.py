"""The shape of one entry of `gh pr list --json …` as pydantic validates it (`selfbench.mine.prs`
reads it; the models load only when metadata is given, with pydantic)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Author", "Entry", "MergeCommit"]


class Author(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    login: str | None = None
    is_bot: bool = False


class MergeCommit(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    oid: str | None = None


class Entry(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)
    number: int
    title: str | None = None
    body: str | None = None
    url: str | None = None
    author: Author | None = None
    isDraft: bool = False  # noqa: N815 - gh's field name
    mergeCommit: MergeCommit | None = None  # noqa: N815
    headRefName: str | None = None  # noqa: N815
    mergedAt: str | None = None  # noqa: N815
