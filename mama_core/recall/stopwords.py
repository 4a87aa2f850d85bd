"""English function words dropped from lexical queries.

They match almost every memory, so as BM25 terms they add cost and noise but no
signal ("When did Caroline go to the support group?" keeps caroline, go,
support, group). Question words are included: a query's "when" or "what" says
what kind of answer is wanted, not which memory holds it. The list is applied
to queries only; the index keeps every word.
"""

from __future__ import annotations

_WORDS = """
    a about above after again against all am an and any are aren as at
    be because been before being below between both but by
    can cannot could couldn
    d did didn do does doesn doing don down during
    each
    few for from further
    had hadn has hasn have haven having he her here hers herself him himself his how
    i if in into is isn it its itself
    just
    ll
    m me might more most must mustn my myself
    no nor not now
    of off on once only or other ought our ours ourselves out over own
    re
    s same shall shan she should shouldn so some such
    t than that the their theirs them themselves then there these they this those
    through to too
    under until up us
    ve very
    was wasn we were weren what when where which while who whom whose why will with
    won would wouldn
    y you your yours yourself yourselves
"""

STOPWORDS: frozenset[str] = frozenset(_WORDS.split())
