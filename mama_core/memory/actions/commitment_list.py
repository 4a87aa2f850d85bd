"""commitment.list: the commitments in the caller's scopes, by due time, overdue marked."""

from __future__ import annotations

from mama_core import clock
from mama_core.memory.commitments import list_commitments
from mama_core.memory.dispatcher import Call, Env, query
from mama_core.memory.inputs import CommitmentListInput
from mama_core.memory.results import CommitmentListResult
from mama_core.store.connection import Connection


@query(
    "commitment.list",
    CommitmentListInput,
    description=(
        "List commitments (who owes what to whom by when) within your scopes, by due time; "
        "open ones by default, overdue marked."
    ),
)
def commitment_list(
    conn: Connection, call: Call[CommitmentListInput], env: Env
) -> CommitmentListResult:
    inp = call.input
    found = list_commitments(
        conn,
        call.grant,
        now=clock.now(),
        state=inp.state,
        include_proposed=inp.include_proposed,
        limit=inp.limit,
    )
    return CommitmentListResult(commitments=found)
