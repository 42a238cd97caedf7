"""Drivers of single pages, each in a module named for its experiment."""
