"""Development memory for coding agents: the ``mama mcp`` server and the Claude Code
plugin's hooks.

``server`` (the stdio MCP server on the SDK's low-level ``Server``), ``tools`` (the
tools as catalog actions), ``project_scope`` (the scope binding of a process),
``dev_memory`` (where the store lives and opening it), ``hooks`` with
``hook_reads`` and ``hook_state`` (``mama hook NAME``), ``identity`` (who calls).
"""
