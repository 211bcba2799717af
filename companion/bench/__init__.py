"""Measuring the companion on generated data of known truth (`companion bench`)."""
