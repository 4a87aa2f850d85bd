"""Connectors: the owner's Slack, mail and Trello, read into immutable observations.

Each connector polls its source from a durable cursor (``base.Connector``); the
runtime stores a poll's items and the new cursor in one transaction and hands the
new items to the agent as one source-delta turn. Nothing here imports Qt.
"""
