"""``mama team ...``: the admin's and the member's commands for a team's shared memory
(issue 29, preview), and the hooks through which ``remember`` and ``search`` reach the
team store for ``team:`` scopes."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from typing import TYPE_CHECKING, Any

import click

from app.cli.context import CliContext
from app.cli.display import json_text, terminal_text
from app.team.errors import (
    TeamChainBrokenError,
    TeamInputError,
    TeamKeyringError,
    TeamUnreachableError,
)
from app.team.membership import (
    admin_url,
    forget_membership,
    load_membership,
    member_url,
    save_admin_url,
    save_membership,
)
from app.team.scopes import is_team_scope, parse_scope_list
from app.team.urls import check_url, where

if TYPE_CHECKING:
    from app.team.store import TeamHit, TeamStore

# psycopg (app.team.connection, .members, .schema, .store) is imported by the commands
# that talk to the team store, not by every `mama` command at start.


@click.group()
def team() -> None:
    """A team's shared memory on PostgreSQL + pgvector (preview)."""


@team.command("init")
@click.argument("url")
@click.pass_obj
def init(obj: CliContext, url: str) -> None:
    """Set up the team store in the empty PostgreSQL database at URL (as its admin)."""
    from app.team.connection import connect
    from app.team.schema import SCHEMA_VERSION, init_team_store

    check_url(url)
    embedder = obj.embedder()
    with closing(connect(url)) as conn:
        result = init_team_store(conn, embedder.dim, embedder.model_id)
    server = where(url)
    if result.created:
        click.echo(
            f"team store set up at {server} (vectors of {result.model_id}, {result.dim} "
            "dimensions); invite members with: mama team invite NAME --scopes team:NAME"
        )
    elif result.upgraded_from is not None:
        click.echo(
            f"the team store at {server} was upgraded from schema {result.upgraded_from} to "
            f"{SCHEMA_VERSION}: members now write only through its functions"
        )
    else:
        click.echo(f"the team store at {server} is already set up; nothing changed")
    try:
        save_admin_url(obj.paths.home, url)
    except TeamKeyringError as exc:
        click.echo(
            terminal_text(f"note: {exc.message} `mama team invite` needs --admin-url here."),
            err=True,
        )


ADMIN_URL_OPTION = click.option(
    "--admin-url",
    "admin_url_option",
    envvar="MAMA_TEAM_ADMIN_URL",
    default=None,
    help="The admin's URL (default: the one `mama team init` kept in the keyring).",
)
"""The admin commands' way to name the admin's connection."""


@team.command("invite")
@click.argument("name")
@click.option("--scopes", "scope_list", required=True, help="team:eng[,team:eng/web]")
@ADMIN_URL_OPTION
@click.pass_obj
def invite(obj: CliContext, name: str, scope_list: str, admin_url_option: str | None) -> None:
    """Make NAME a member with their own role and the given team scopes; the last line
    printed is their join string (shown once)."""
    from app.team.connection import connect
    from app.team.members import invite_member

    scopes = parse_scope_list(scope_list)
    url = admin_url_option or admin_url(obj.paths.home)
    with closing(connect(url)) as conn:
        invitation = invite_member(conn, url, name, scopes)
    click.echo(
        f"invited {invitation.member} as role {invitation.role} with {', '.join(scopes)}; "
        "give them this join string (shown once, it holds their password):"
    )
    click.echo(invitation.join_string)


@team.command("verify")
@ADMIN_URL_OPTION
@click.pass_obj
def verify(obj: CliContext, admin_url_option: str | None) -> None:
    """Check the team store's whole event chain and each memory against its event (as the
    admin, who sees every row)."""
    from app.team.connection import connect
    from app.team.store import verify_chain

    url = admin_url_option or admin_url(obj.paths.home)
    with closing(connect(url)) as conn:
        report = verify_chain(conn)
    if report.ok:
        click.echo(f"team chain intact: {report.events} events")
        return
    for problem in report.problems:
        click.echo(terminal_text(f"problem: {problem}"))
    raise TeamChainBrokenError(
        f"the team store's history does not verify ({len(report.problems)} problems above)"
    )


@team.command("retire")
@click.argument("memory_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
@click.pass_obj
def retire(obj: CliContext, memory_id: int, as_json: bool) -> None:
    """Retire the team memory MEMORY_ID (in scopes you hold): search stops returning it;
    its text stays until the admin purges it."""
    retirement = team_store(obj).retire(memory_id)
    _emit(
        retirement.to_wire(),
        as_json,
        f"retired team memory #{retirement.memory_id} (event {retirement.event_id})",
    )


@team.command("purge")
@click.argument("memory_id", type=int)
@ADMIN_URL_OPTION
@click.pass_obj
def purge(obj: CliContext, memory_id: int, admin_url_option: str | None) -> None:
    """Erase the team memory MEMORY_ID's text and vector (as the admin): a purge event,
    then VACUUM FULL so the text is gone from the table's files."""
    from app.team.connection import connect
    from app.team.store import purge_memory

    url = admin_url_option or admin_url(obj.paths.home)
    with closing(connect(url)) as conn:
        event_id = purge_memory(conn, memory_id)
    click.echo(
        f"purged team memory #{memory_id} (event {event_id}): its text and vector are gone "
        "from the table's files; WAL not yet recycled, archives, replicas and backups may "
        "still hold it (see the README)"
    )


@team.command("join")
@click.argument("join_string")
@click.pass_obj
def join(obj: CliContext, join_string: str) -> None:
    """Join a team with the JOIN_STRING its admin gave you (kept in the OS keyring)."""
    from app.team.connection import connect
    from app.team.members import granted_scopes
    from app.team.schema import read_meta

    check_url(join_string)
    with closing(connect(join_string)) as conn:
        read_meta(conn)
        scopes = granted_scopes(conn)
    membership = save_membership(obj.paths.home, join_string, scopes)
    click.echo(
        terminal_text(
            f"joined the team at {membership.server} as {membership.role}; "
            f"scopes: {', '.join(scopes) or 'none yet'}"
        )
    )


@team.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
@click.pass_obj
def status(obj: CliContext, as_json: bool) -> None:
    """Who you are in the team, which scopes you hold, and whether the server answers."""
    membership = load_membership(obj.paths.home)
    if membership is None:
        _emit({"joined": False}, as_json, "not in a team (mama team join STRING)")
        return
    from app.team.connection import connect
    from app.team.members import granted_scopes

    scopes = list(membership.scopes)
    reachable, reason = True, ""
    try:
        with closing(connect(member_url(obj.paths.home))) as conn:
            scopes = granted_scopes(conn)
    except (TeamUnreachableError, TeamKeyringError) as exc:
        reachable, reason = False, exc.message
    result: dict[str, Any] = {
        "joined": True,
        "role": membership.role,
        "server": membership.server,
        "scopes": scopes,
        "reachable": reachable,
    }
    lines = [
        f"member: {membership.role} at {membership.server}",
        f"scopes: {', '.join(scopes) or 'none'}",
        "reachable: yes" if reachable else f"reachable: no ({reason})",
    ]
    if reason:
        result["reason"] = reason
    _emit(result, as_json, "\n".join(lines))


@team.command("leave")
@click.pass_obj
def leave(obj: CliContext) -> None:
    """Forget this machine's team credentials (the team store keeps what was saved)."""
    membership = forget_membership(obj.paths.home)
    if membership is None:
        click.echo("not in a team; nothing to leave")
        return
    click.echo(
        terminal_text(
            f"left the team at {membership.server} ({membership.role}): its credentials are "
            "gone from this machine; what you saved stays in the team store, and the admin "
            f"removes the role with DROP ROLE {membership.role}."
        )
    )


def _emit(result: dict[str, Any], as_json: bool, text: str) -> None:
    click.echo(json_text(result) if as_json else terminal_text(text))


# --- the hooks for ``remember`` and ``search`` --------------------------------------------


def joined(obj: CliContext) -> bool:
    return load_membership(obj.paths.home) is not None


def team_store(obj: CliContext) -> TeamStore:
    """The member's team store for this command, closed when it ends."""
    from app.team.connection import connect
    from app.team.store import TeamStore

    conn = connect(member_url(obj.paths.home))
    click.get_current_context().call_on_close(conn.close)
    return TeamStore(conn, obj.embedder())


def remember_in_team(obj: CliContext, payload: dict[str, Any], scopes: list[str]) -> dict[str, Any]:
    """Save into team scopes (all of ``scopes`` must be ``team:``); refused, never queued,
    when the team store cannot be reached."""
    personal = [s for s in scopes if not is_team_scope(s)]
    if personal:
        raise TeamInputError(
            f"a memory lives either in your personal store or in the team's: {', '.join(personal)}"
            " and team scopes cannot be mixed in one memory."
        )
    unsupported = [
        k for k in ("applies_when", "steps", "replaces", "even_if_duplicate") if k in payload
    ]
    if unsupported:
        raise TeamInputError(
            f"team memories do not take {', '.join(unsupported)} yet (team memory is a preview)."
        )
    from app.team.store import TeamSave

    save = TeamSave(
        kind=str(payload["kind"]),
        summary=str(payload["summary"]),
        scopes=tuple(scopes),
        topic=str(payload.get("topic", "")),
        details=str(payload.get("details", "")),
    )
    return team_store(obj).remember(save).to_wire()


def search_team(
    obj: CliContext, query: str, scopes: list[str], kinds: list[str], limit: int
) -> tuple[list[TeamHit], str | None]:
    """The team's hits, or none and the one line that says the team store is away."""
    try:
        return team_store(obj).search(query, limit, scopes, kinds), None
    except TeamUnreachableError as exc:
        return [], terminal_text(
            f"mama: {exc.code}: {exc.message} (team results left out; personal ones shown)"
        )


def team_line(hit: TeamHit) -> str:
    return terminal_text(
        f"[team] #{hit.id} [{hit.kind}] {hit.summary}  ({', '.join(hit.scopes)}) by {hit.author}"
    )


def merged(
    personal: list[dict[str, Any]], team_hits: list[TeamHit], limit: int
) -> list[dict[str, Any]]:
    """Personal and team hits together, each marked with its store: interleaved by rank
    (each list is already fused within its store), at most ``limit``."""
    out: list[dict[str, Any]] = []
    for rank in range(max(len(personal), len(team_hits))):
        if rank < len(personal):
            out.append({**personal[rank], "store": "personal"})
        if rank < len(team_hits):
            out.append(team_hits[rank].to_wire())
    return out[:limit]


PersonalSearch = Callable[[CliContext, str, list[str], list[str], int], dict[str, Any]]
"""``app.cli.memory.personal_search``: passed in, so this module does not import that one."""
HitLines = Callable[[dict[str, Any]], list[str]]


def search_with_team(
    obj: CliContext,
    query: str,
    scopes: list[str],
    kinds: list[str],
    limit: int,
    as_json: bool,
    personal_search: PersonalSearch,
    search_lines: HitLines,
) -> None:
    """``mama search`` for a member: the personal store's hits and the team's together,
    each marked where it lives. ``--scope team:...`` alone searches only the team, a
    personal ``--scope`` alone only the personal store. With the team store away, the
    personal results still come, and one line on stderr says the team's are left out."""
    from app.team.store import TeamHit

    team_scopes = [s for s in scopes if is_team_scope(s)]
    personal_scopes = [s for s in scopes if not is_team_scope(s)]
    if team_scopes and not joined(obj):
        member_url(obj.paths.home)  # raises team_not_joined
    personal: dict[str, Any] = {"results": []}
    if personal_scopes or not team_scopes:
        personal = personal_search(obj, query, personal_scopes, kinds, limit)
    team_hits: list[TeamHit] = []
    away: str | None = None
    if team_scopes or not personal_scopes:
        team_hits, away = search_team(obj, query, team_scopes, kinds, limit)
    if away:
        click.echo(away, err=True)
    results = merged(list(personal.get("results", [])), team_hits, limit)
    if as_json:
        click.echo(json_text({**personal, "results": results, "team_reachable": away is None}))
        return
    lines: list[str] = []
    for hit in results:
        if hit["store"] == "team":
            lines.append(team_line(TeamHit.from_wire(hit)))
        else:
            lines.extend(f"[personal] {line}" for line in search_lines({"results": [hit]}))
    click.echo("\n".join(lines) if lines else "nothing found")
