"""The review page (SPEC §9): a local web page over a verified export."""

from __future__ import annotations

from selfbench.review.data import ReviewData, load_review
from selfbench.review.server import ReviewServer, clean_export_path, open_review

__all__ = ["ReviewData", "ReviewServer", "clean_export_path", "load_review", "open_review"]
