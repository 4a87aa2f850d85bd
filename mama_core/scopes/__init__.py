"""Scopes: which judgments a caller may read, and where its saves go.

One room for everything about scopes, from the bottom up: ``names`` (what a scope
name may be), ``bindings`` (the one module whose SQL names the ``scope_bindings``
table, and the scope predicate), ``grants`` (what a caller holds) and ``reach`` (a
grant applied to scopes: the filter every read passes). Import the submodule you
need; this package re-exports nothing.
"""
