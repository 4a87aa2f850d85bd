"""Finding what needs no model in outside text: commitments stated in a recognisable
form and the due dates in them, by a documented rule table per language (English,
German, French, Spanish). Pure text: no store, no network, nothing from ``app``."""

from __future__ import annotations

from mama_core.extraction.commitments import FoundCommitment, Message, find_commitments
from mama_core.extraction.dates import DueHit, find_due

__all__ = ["DueHit", "FoundCommitment", "Message", "find_commitments", "find_due"]
