"""How the engine is shown to others: a review card's text (cards) and the action
catalog as tools with one error shape (catalog_tools)."""
