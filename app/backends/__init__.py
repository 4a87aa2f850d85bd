"""Agent backends behind one interface: command mode, Claude Code, Codex, a local
GGUF model. Each acts only through the action catalog, via ``ToolBox``."""
