"""Dashboard pages, one module per area (contacts, knowledge, locations, team, webhooks, ...)."""
