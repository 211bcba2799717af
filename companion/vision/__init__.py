"""Pixels to a table: find cards, recognise them, assemble chains."""
