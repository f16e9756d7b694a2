"""Storage helpers shared across packages (`sqlite`: connections to INDEX/state.sqlite)."""
