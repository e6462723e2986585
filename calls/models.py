"""Models of the calls app."""
