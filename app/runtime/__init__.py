"""The owner runtime: the durable mailbox, the delivery journal, the agent turn
loop and the context it gives the agent. Transport-free: Telegram and the agent
backends plug in through small interfaces."""
