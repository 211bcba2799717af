"""Camera companion for the card game Hisss: frame -> cards -> chains -> moves -> score."""

__version__ = "0.1.0"
