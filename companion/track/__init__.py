"""Frames over time to settled tables and game events."""
