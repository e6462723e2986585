"""Models of the contacts app."""
