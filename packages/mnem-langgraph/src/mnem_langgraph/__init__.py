"""Placeholder until the adapter lands."""
