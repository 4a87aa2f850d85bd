"""The owner runtime: the agent turn loop, the context it gives the agent, and the
sender that takes the journal to the owner's channel. It stands on the durable tables
(``app.durable``) and the agent backends; Telegram plugs in from above through the
``OwnerChannel`` interface, and ``app.serve.host`` wires it all together."""
